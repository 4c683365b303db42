// What Concurrency.md's samples take as given: a Book entity and a context.
@Entity final class Book: ManagedObject { var title: String = "" }
let coordinator = PersistentStoreCoordinator.inMemory(model: try Model([Book.self]))
let context = ObjectContext(coordinator: coordinator)

// What TheStack.md's sample takes as given: a Book entity.
@Entity final class Book: ManagedObject { var title: String = "" }

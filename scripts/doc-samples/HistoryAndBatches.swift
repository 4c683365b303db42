// What HistoryAndBatches.md's samples take as given: the model, a store's URL, a context, a token an earlier launch
// kept, and a save made since.
@Entity final class Author: ManagedObject { @Relationship(inverse: "author") var books: Set<Book> }
@Entity final class Book: ManagedObject {
    var title: String = ""
    var pages: Int32 = 1
    @Relationship(inverse: "books") var author: Author?
}
let model = try Model([Author.self, Book.self])
let url = URL(filePath: NSTemporaryDirectory() + "history-sample.sqlite")
var savedToken = try {
    let earlierLaunch = try PersistentStoreCoordinator(model: model, storeURL: url, options: StoreOptions(recordsHistory: true))
    try ObjectContext(coordinator: earlierLaunch).performAndWait { ctx in
        try ctx.insert(Book.self).title = "Saved before the token"
        try ctx.save()
    }
    return try earlierLaunch.lastHistoryToken()
}()
let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
try context.performAndWait { ctx in
    try ctx.insert(Book.self).title = "Saved after the token"
    try ctx.save()
}

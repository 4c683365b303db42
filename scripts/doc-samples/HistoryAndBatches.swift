// What HistoryAndBatches.md's samples take as given: the model, a store's URL, a context and a token kept from an
// earlier launch.
@Entity final class Author: ManagedObject { @Relationship(inverse: "author") var books: Set<Book> }
@Entity final class Book: ManagedObject {
    var title: String = ""
    var pages: Int32 = 1
    @Relationship(inverse: "books") var author: Author?
}
let model = try Model([Author.self, Book.self])
let url = URL(filePath: NSTemporaryDirectory() + "history-sample.sqlite")
let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url))
var savedToken = try JSONDecoder().decode(PersistentHistoryToken.self, from: Data(#"{"storeIdentifier":"","transactionNumber":0}"#.utf8))

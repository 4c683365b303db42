import ObjectGraph

/// The demo's model: the seeds' Book with a name and an author, plus an Author entity it belongs to.
@Entity(indexes: [["name"]])
final class Writer: ManagedObject {
    @Attribute(minLength: 1) var name: String = ""
    var born: Int32 = 1900
    @Relationship(inverse: "writer", deleteRule: .cascade) var books: Set<Book>
}

@Entity
final class Book: ManagedObject {
    @Attribute(minLength: 1, isIndexed: true) var name: String = ""
    var author: String = ""
    var pages: Int32 = 1
    var price: Double = 0
    @Relationship(inverse: "books") var writer: Writer?
}

import ObjectGraph

/// W11-W13's model: authors with books, books with tags (many-to-many) and chapters (cascading).
@Entity
public final class Author: ManagedObject {
    public var name: String = ""
    @Relationship(inverse: "author") public var books: Set<Book>
}

@Entity
public final class Book: ManagedObject {
    @Attribute(isIndexed: true) public var serial: Int64 = 0
    public var title: String = ""
    public var pages: Int64 = 0
    @Relationship(inverse: "books", deleteRule: .nullify) public var author: Author?
    @Relationship(inverse: "books") public var tags: Set<Tag>
    @Relationship(inverse: "book", deleteRule: .cascade) public var chapters: Set<Chapter>
}

@Entity
public final class Tag: ManagedObject {
    public var label: String = ""
    @Relationship(inverse: "tags") public var books: Set<Book>
}

@Entity
public final class Chapter: ManagedObject {
    public var heading: String = ""
    @Relationship(inverse: "chapters") public var book: Book?
}

import FluentKit

// Fluent's models are classes of property wrappers that its `Model` protocol requires to be Sendable; Fluent's own
// documentation declares them `@unchecked Sendable`. Sound here: each instance is made, read and dropped by one task.

/// W1-W3's row as a Fluent model: ten Int64 fields, `a0` indexed.
final class ItemModel: Model, @unchecked Sendable {
    static let schema = "item"
    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "a0") var a0: Int64
    @Field(key: "a1") var a1: Int64
    @Field(key: "a2") var a2: Int64
    @Field(key: "a3") var a3: Int64
    @Field(key: "a4") var a4: Int64
    @Field(key: "a5") var a5: Int64
    @Field(key: "a6") var a6: Int64
    @Field(key: "a7") var a7: Int64
    @Field(key: "a8") var a8: Int64
    @Field(key: "a9") var a9: Int64

    init() {}

    /// Row `row` of W1: `row * 10 + c` in `a<c>`.
    init(row: Int) {
        let b = Int64(row * 10)
        (a0, a1, a2, a3, a4) = (b, b + 1, b + 2, b + 3, b + 4)
        (a5, a6, a7, a8, a9) = (b + 5, b + 6, b + 7, b + 8, b + 9)
    }

    var sum: Int64 { a0 &+ a1 &+ a2 &+ a3 &+ a4 &+ a5 &+ a6 &+ a7 &+ a8 &+ a9 }
}

/// W11's models, in Fluent's conventions: plural tables, `<parent>_id` keys, a pivot model for books' tags.
final class AuthorModel: Model, @unchecked Sendable {
    static let schema = "authors"
    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "name") var name: String
    init() {}
    init(id: Int, name: String) { (self.id, self.name) = (id, name) }
}

final class TagModel: Model, @unchecked Sendable {
    static let schema = "tags"
    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "label") var label: String
    init() {}
    init(id: Int, label: String) { (self.id, self.label) = (id, label) }
}

final class BookModel: Model, @unchecked Sendable {
    static let schema = "books"
    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "serial") var serial: Int64
    @Field(key: "title") var title: String
    @Field(key: "pages") var pages: Int64
    @Parent(key: "author_id") var author: AuthorModel
    @Siblings(through: BookTagModel.self, from: \.$book, to: \.$tag) var tags: [TagModel]
    init() {}
}

final class BookTagModel: Model, @unchecked Sendable {
    static let schema = "book_tag"
    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Parent(key: "book_id") var book: BookModel
    @Parent(key: "tag_id") var tag: TagModel
    init() {}
}

final class ChapterModel: Model, @unchecked Sendable {
    static let schema = "chapters"
    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "heading") var heading: String
    @Parent(key: "book_id") var book: BookModel
    init() {}
}

import Foundation
import Testing
@testable import ObjectGraph

/// Derived attributes, computed by the store at save from what they derive from, and read-only to the app.
@Suite struct DerivedAttributeTests {
    static func entities() -> [EntityDescription] {
        func derived(_ name: String, _ type: AttributeType, _ expression: String) -> AttributeDescription {
            var attribute = AttributeDescription(name, type)
            attribute.derivation = expression
            return attribute
        }
        return [
            EntityDescription("Author", attributes: [
                .init("name", .string), derived("bookCount", .int64, "books.@count"), derived("tagCount", .int64, "tags.@count"),
            ], relationships: [
                .init("books", destination: "Book", inverse: "author", isToMany: true),
                .init("tags", destination: "Tag", inverse: "authors", isToMany: true),
            ]),
            EntityDescription("Book", attributes: [
                .init("title", .string), derived("authorName", .string, "author.name"), derived("searchTitle", .string, "canonical:(title)"),
                derived("loudTitle", .string, "uppercase:(title)"), derived("quietTitle", .string, "lowercase:(title)"), derived("modified", .date, "now()"),
            ], relationships: [.init("author", destination: "Author", inverse: "books")]),
            EntityDescription("Tag", attributes: [.init("label", .string)],
                              relationships: [.init("authors", destination: "Author", inverse: "tags", isToMany: true)]),
        ]
    }

    func value(_ object: ManagedObject, _ key: String) throws -> AttributeValue { try object.value(forKey: key) }

    @Test(arguments: StoreKind.allCases)
    func theStoreComputesDerivedAttributesAtSave(_ kind: StoreKind) async throws {
        let model = try Model(entities: Self.entities())
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(model, folder)
        let before = Date()
        let (annID, boID, bookID) = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let ann = try ctx.insert("Author")
            try ann.setValue("Ann", forKey: "name")
            let bo = try ctx.insert("Author")
            try bo.setValue("Bo", forKey: "name")
            let book = try ctx.insert("Book")
            try book.setValue("Émile Zola", forKey: "title")
            try book.setObject(ann, forKey: "author")
            let other = try ctx.insert("Book")
            try other.setValue("Nana", forKey: "title")
            try other.setObject(ann, forKey: "author")
            let tag = try ctx.insert("Tag")
            try tag.setObjects([ann], forKey: "authors")
            #expect { try book.setValue("x", forKey: "authorName") } throws: { "\($0)".contains("Book.authorName") && "\($0)".contains("derived ('author.name')") }
            try ctx.save()
            // The saving context shows what the store computed.
            #expect(try value(book, "authorName") == .string("Ann"))
            #expect(try value(book, "searchTitle") == .string("emile zola"))
            #expect(try value(book, "loudTitle") == .string("ÉMILE ZOLA") && value(book, "quietTitle") == .string("émile zola"))
            #expect(try value(ann, "bookCount") == .int(2) && value(ann, "tagCount") == .int(1) && value(bo, "bookCount") == .int(0))
            guard case .date(let modified) = try value(book, "modified") else { throw ObjectGraphError.objectNotFound(book.objectID) }
            #expect(modified.timeIntervalSince(before) > -1 && modified.timeIntervalSinceNow < 1)
            return (ann.objectID, bo.objectID, book.objectID)
        }
        // Another context moves the book to Bo and renames Ann; counts and the to-one copy follow, in the store.
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let book = try ctx.existingObject(with: bookID)
            try book.setObject(try ctx.existingObject(with: boID), forKey: "author")
            try book.setValue("Germinal", forKey: "title")
            try ctx.save()
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.existingObject(with: boID).setValue("Bo Bo", forKey: "name")
            try ctx.save()
        }
        let reading = kind == .sqlite ? try kind.coordinator(model, folder) : coordinator
        try await ObjectContext(coordinator: reading).perform { ctx in
            let book = try ctx.existingObject(with: bookID)
            #expect(try value(book, "authorName") == .string("Bo Bo"))
            #expect(try value(book, "searchTitle") == .string("germinal"))
            #expect(try value(try ctx.existingObject(with: annID), "bookCount") == .int(1))
            #expect(try value(try ctx.existingObject(with: boID), "bookCount") == .int(1))
            // A derived attribute is a stored column: fetches test it.
            #expect(try ctx.count(for: FetchRequest(entityName: "Author", format: "bookCount == 1")) == 2)
            try ctx.delete(book)
            try ctx.save()
            #expect(try value(try ctx.existingObject(with: boID), "bookCount") == .int(0))
        }
    }

    @Test func derivationsAreCheckedWhenTheModelIsBuilt() {
        var bad = Self.entities()
        bad[1].attributes[1].derivation = "author.missing"
        #expect { try Model(entities: bad) } throws: { "\($0)".contains("Book.authorName") && "\($0)".contains("'missing', which is not a stored attribute of Author") }
        bad = Self.entities()
        bad[0].attributes[1].derivation = "name.@count"
        #expect { try Model(entities: bad) } throws: { "\($0)".contains("'name', which is not a stored to-many relationship of Author") }
    }
}

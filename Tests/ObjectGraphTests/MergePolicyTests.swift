import Foundation
import Testing
@testable import ObjectGraph

@Suite struct MergePolicyTests {
    struct Outcome: Equatable {
        var stored: [AttributeValue]
        var inMemory: [AttributeValue]
    }

    /// Two contexts read the same book; `a` changes the title and saves; `b` changes pages (and the title when
    /// asked) and saves with `policy`. Returns the stored row and `b`'s object afterwards: title, pages, isbn.
    func conflict(_ policy: MergePolicy, bChangesTitle: Bool, kind: StoreKind) async throws -> Outcome {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        let a = ObjectContext(coordinator: coordinator, name: "a")
        let b = ObjectContext(coordinator: coordinator, name: "b")
        let id = try await a.perform { ctx in
            let book = try ctx.insert("Book")
            try book.setValue("Original", forKey: "title")
            try book.setValue(100, forKey: "pages")
            try book.setValue("111-1111", forKey: "isbn")
            try ctx.save()
            return book.objectID
        }
        let keys = ["title", "pages", "isbn"]
        let inMemory = try await b.perform { ctx in
            ctx.mergePolicy = policy
            // b reads the book (version 1) and holds it while a changes and saves it (version 2).
            let book = try ctx.existingObject(with: id)
            try a.performAndWait { other in
                let mine = try other.existingObject(with: id)
                try mine.setValue("From A", forKey: "title")
                try mine.setValue("222-2222", forKey: "isbn")
                try other.save()
            }
            try book.setValue(200, forKey: "pages")
            if bChangesTitle { try book.setValue("From B", forKey: "title") }
            try ctx.save()
            return try keys.map { try book.value(forKey: $0) }
        }
        let stored = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try keys.map { try ctx.existingObject(with: id).value(forKey: $0) }
        }
        return Outcome(stored: stored, inMemory: inMemory)
    }

    @Test(arguments: StoreKind.allCases)
    func theDefaultPolicyFailsListingObjectKeysAndBothValues(_ kind: StoreKind) async throws {
        do {
            _ = try await conflict(.error, bChangesTitle: true, kind: kind)
            Issue.record("the conflicting save went through")
        } catch ObjectGraphError.conflict(let conflicts) {
            #expect(conflicts.count == 1)
            let conflict = try #require(conflicts.first)
            #expect(conflict.expectedVersion == 1 && conflict.storedVersion == 2)
            #expect(conflict.keys == ["title", "pages", "isbn"])
            #expect(conflict.storedValues["title"] == .string("From A") && conflict.objectValues["title"] == .string("From B"))
            #expect(conflict.storedValues["pages"] == .int(100) && conflict.objectValues["pages"] == .int(200))
            let message = ObjectGraphError.conflict(conflicts).description
            #expect(message.contains("Book/p1: read at version 1, stored version is now 2"), "\(message)")
            #expect(message.contains(#"title: stored "From A", in memory "From B""#), "\(message)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func objectTrumpKeepsTheObjectsChangesAndTakesTheRest(_ kind: StoreKind) async throws {
        let outcome = try await conflict(.mergeByPropertyObjectTrump, bChangesTitle: true, kind: kind)
        let expected: [AttributeValue] = [.string("From B"), .int(200), .string("222-2222")]
        #expect(outcome == Outcome(stored: expected, inMemory: expected))
    }

    @Test(arguments: StoreKind.allCases)
    func storeTrumpKeepsWhatTheStoreChangedAndWritesTheRest(_ kind: StoreKind) async throws {
        let outcome = try await conflict(.mergeByPropertyStoreTrump, bChangesTitle: true, kind: kind)
        let expected: [AttributeValue] = [.string("From A"), .int(200), .string("222-2222")]
        #expect(outcome == Outcome(stored: expected, inMemory: expected))
    }

    @Test(arguments: StoreKind.allCases)
    func overwriteReplacesTheWholeRow(_ kind: StoreKind) async throws {
        let outcome = try await conflict(.overwrite, bChangesTitle: false, kind: kind)
        let expected: [AttributeValue] = [.string("Original"), .int(200), .string("111-1111")]
        #expect(outcome == Outcome(stored: expected, inMemory: expected))
    }

    @Test(arguments: StoreKind.allCases)
    func rollbackDropsTheObjectsConflictingChanges(_ kind: StoreKind) async throws {
        let outcome = try await conflict(.rollback, bChangesTitle: true, kind: kind)
        let expected: [AttributeValue] = [.string("From A"), .int(100), .string("222-2222")]
        #expect(outcome == Outcome(stored: expected, inMemory: expected))
    }

    @Test(arguments: StoreKind.allCases)
    func aUniquenessCollisionUpsertsUnderObjectTrumpAndFailsUnderError(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Fixtures.model(), folder)
        let existing = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let book = try ctx.insert("Book")
            try book.setValue("First", forKey: "title")
            try book.setValue("123-4567", forKey: "isbn")
            try ctx.save()
            return book.objectID
        }
        let strict = ObjectContext(coordinator: coordinator, name: "strict")
        await #expect(throws: ObjectGraphError.self) {
            try await strict.perform { ctx in
                let copy = try ctx.insert("Book")
                try copy.setValue("Second", forKey: "title")
                try copy.setValue("123-4567", forKey: "isbn")
                try ctx.save()
            }
        }
        let upserting = ObjectContext(coordinator: coordinator, name: "upserting")
        let (id, pages) = try await upserting.perform { ctx in
            ctx.mergePolicy = .mergeByPropertyObjectTrump
            let copy = try ctx.insert("Book")
            try copy.setValue("Second", forKey: "title")
            try copy.setValue(321, forKey: "pages")
            try copy.setValue("123-4567", forKey: "isbn")
            try ctx.save()
            // The object took the stored row's version: a strict save of a further change meets no conflict.
            ctx.mergePolicy = .error
            try copy.setValue(322, forKey: "pages")
            try ctx.save()
            return (copy.objectID, try copy.value(forKey: "pages"))
        }
        #expect(id == existing && pages == .int(322))
        try await ObjectContext(coordinator: coordinator).perform { ctx throws in
            #expect(try ctx.count(for: FetchRequest(entityName: "Book")) == 1)
            #expect(try ctx.existingObject(with: existing).value(forKey: "title") == .string("Second"))
        }
        let yielding = ObjectContext(coordinator: coordinator, name: "yielding")
        let title = try await yielding.perform { ctx in
            ctx.mergePolicy = .mergeByPropertyStoreTrump
            let copy = try ctx.insert("Book")
            try copy.setValue("Third", forKey: "title")
            try copy.setValue("123-4567", forKey: "isbn")
            try ctx.save()
            #expect(copy.objectID == existing)
            return try copy.value(forKey: "title")
        }
        #expect(title == .string("Second"))
    }
}

import Foundation
import Testing
@testable import ObjectGraph

@Suite struct BadInputTests {
    private func bytes(_ url: URL) throws -> Data { try Data(contentsOf: url) }

    /// Checkpoints the WAL so that the main file holds everything, and returns its bytes.
    private func settledBytes(_ coordinator: PersistentStoreCoordinator, _ url: URL) throws -> Data {
        let store = try #require(coordinator.store as? SQLiteStore)
        _ = try store.writer.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        return try bytes(url)
    }

    @Test func wrongTypesUnknownKeysAndEntitiesThrowNamingThem() async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try StoreKind.sqlite.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            let author = try ctx.insert("Author")
            let errors: [(String, () throws -> Void)] = [
                ("Author.name takes a value of type String, not integer 42", { try author.setValue(42, forKey: "name") }),
                ("entity Author has no property 'nmae'", { try author.setValue("x", forKey: "nmae") }),
                ("entity Author has no property 'nmae'", { _ = try author.value(forKey: "nmae") }),
                ("unknown entity 'Autor'", { _ = try ctx.insert("Autor") }),
                ("abstract entity cannot be inserted", { _ = try ctx.insert("Media") }),
                ("Author.books: is a to-many relationship", { _ = try author.object(forKey: "books") }),
                ("Author.name: is an attribute", { _ = try author.objects(forKey: "name") }),
                ("Author.agent holds Agent objects, not Tag", { try author.setObject(try ctx.insert("Tag"), forKey: "agent") }),
            ]
            for (expected, body) in errors {
                do {
                    try body()
                    Issue.record("no error; expected \(expected)")
                } catch let error as ObjectGraphError {
                    #expect(error.message.contains(expected), "\(error.message)")
                }
            }
            let small = try ctx.insert("Sample")
            #expect(throws: ObjectGraphError.self) { try small.setValue(Int64(Int32.max) + 1, forKey: "int32") }
            try small.setValue(7, forKey: "double")
            #expect(try small.value(forKey: "double") == .double(7))
        }
    }

    @Test func validationReportsEveryFailureTogetherAndTheFileStaysByteForByte() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Saved", forKey: "name")
            try ctx.save()
        }
        let before = try settledBytes(coordinator, folder.storeURL)
        try await context.perform { ctx in
            let author = try ctx.insert("Author")           // name missing: required
            let book = try ctx.insert("Book")
            try book.setValue("T", forKey: "title")
            try book.setValue(0, forKey: "pages")             // below min 1
            try book.setValue("12-34", forKey: "isbn")        // pattern
            let long = try ctx.insert("Author")
            try long.setValue(String(repeating: "x", count: 41), forKey: "name")   // max length 40
            do {
                try ctx.save()
                Issue.record("the save went through")
            } catch ObjectGraphError.validation(let failures) {
                let text = failures.map(\.description)
                #expect(failures.count == 4, "\(text)")
                #expect(text.contains { $0.contains("Author.name of \(author.objectID): is required") })
                #expect(text.contains { $0.contains("Book.pages of \(book.objectID): 0 is below the minimum 1") })
                #expect(text.contains { $0.contains("Book.isbn") && $0.contains("does not match the pattern") })
                #expect(text.contains { $0.contains("Author.name of \(long.objectID): length 41 is longer than 40") })
            }
            let stillPending = ctx.insertedObjects.count
            #expect(stillPending == 3)
        }
        #expect(try settledBytes(coordinator, folder.storeURL) == before)
    }

    @Test func aUniquenessViolationWritesNothingAndNamesTheConstraint() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            let book = try ctx.insert("Book")
            try book.setValue("One", forKey: "title")
            try book.setValue("123-4567", forKey: "isbn")
            try ctx.save()
        }
        let before = try settledBytes(coordinator, folder.storeURL)
        try await context.perform { ctx in
            let fine = try ctx.insert("Tag")
            try fine.setValue("written only if all is", forKey: "label")
            let copy = try ctx.insert("Book")
            try copy.setValue("Two", forKey: "title")
            try copy.setValue("123-4567", forKey: "isbn")
            do {
                try ctx.save()
                Issue.record("the save went through")
            } catch let error as ObjectGraphError {
                guard case .uniquenessViolation(let entity, let keys, _) = error else { Issue.record("\(error)"); return }
                #expect(entity == "Book" && keys == ["isbn"])
            }
            #expect(fine.objectID.isTemporaryID)
        }
        #expect(try settledBytes(coordinator, folder.storeURL) == before)
    }

    @Test func customValidationHooksJoinTheReport() async throws {
        final class Strict: ManagedObject {
            override func validateForSave() throws {
                throw ValidationFailure(entity: entity.name, objectID: objectID, key: "label", reason: "labels are not allowed today")
            }
        }
        let model = try Model(entities: Fixtures.entities, classes: ["Tag": Strict.self])
        let context = ObjectContext(coordinator: .inMemory(model: model))
        try await context.perform { ctx in
            let tag = try ctx.insert("Tag")
            #expect(tag is Strict)
            _ = try ctx.insert("Author")
            #expect {
                try ctx.save()
            } throws: { error in
                guard case ObjectGraphError.validation(let failures) = error else { return false }
                return failures.count == 2 && failures.contains { $0.reason == "labels are not allowed today" && $0.key == "label" }
            }
        }
    }

    @Test func storeLocationsThatCannotWorkGiveClearErrors() throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        func message(_ url: URL, model: Model) -> String {
            do {
                _ = try PersistentStoreCoordinator(model: model, storeURL: url)
                return "opened"
            } catch {
                return "\(error)"
            }
        }
        let missing = folder.url.appendingPathComponent("no/such/folder/store.sqlite")
        #expect(message(missing, model: model).contains("the folder \(missing.deletingLastPathComponent().path) does not exist"))

        let garbage = folder.url.appendingPathComponent("garbage.sqlite")
        try Data(repeating: 0x41, count: 8192).write(to: garbage)
        #expect(message(garbage, model: model).contains("not an SQLite database"))

        let foreign = folder.url.appendingPathComponent("foreign.sqlite")
        let other = try Model(entities: [EntityDescription("Other", attributes: [.init("x", .string)])])
        _ = try PersistentStoreCoordinator(model: other, storeURL: foreign)
        let mismatch = message(foreign, model: model)
        #expect(mismatch.contains(other.versionHash) && mismatch.contains(model.versionHash), "\(mismatch)")

        // A store whose bytes were damaged after creation.
        let damaged = folder.url.appendingPathComponent("damaged.sqlite")
        do {
            let coordinator = try PersistentStoreCoordinator(model: model, storeURL: damaged)
            _ = try (coordinator.store as! SQLiteStore).writer.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        }
        var data = try Data(contentsOf: damaged)
        data.replaceSubrange(0..<100, with: Data(repeating: 0xFF, count: 100))
        try data.write(to: damaged)
        #expect(message(damaged, model: model).contains("cannot open the store at \(damaged.path)"))

        if getuid() != 0 {
            let readOnly = folder.url.appendingPathComponent("readonly")
            try FileManager.default.createDirectory(at: readOnly, withIntermediateDirectories: true)
            try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: readOnly.path)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: readOnly.path) }
            #expect(message(readOnly.appendingPathComponent("s.sqlite"), model: model).contains("cannot be opened for writing"))
        }
    }

    @Test func aReadOnlyLocationIsAClearError() throws {
        // /proc refuses new files even to root, so it stands for any location the process cannot write.
        let url = URL(fileURLWithPath: "/proc/objectgraph-\(UUID().uuidString).sqlite")
        do {
            _ = try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: url)
            Issue.record("opened")
        } catch let error as ObjectGraphError {
            #expect(error.message.contains("cannot open the store at \(url.path): the location cannot be opened for writing"), "\(error.message)")
        }
    }

    /// A read SQLite refuses on a store that opened fine is not called an unavailable store: the error says the read
    /// failed, with SQLite's message and the statement, and the store reads again once the cause is gone.
    /// Also when the fetch ran before (`readBefore`): its statement is then kept prepared, and the failing read runs
    /// it outside GRDB's queue.
    @Test(arguments: [false, true])
    func aRefusedReadSaysWhichStatementFailed(readBefore: Bool) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL)
        let store = try #require(coordinator.store as? SQLiteStore)
        let context = ObjectContext(coordinator: coordinator, name: "reader")
        if readBefore {
            let count = try await context.perform { ctx in try ctx.fetch(FetchRequest(entityName: "Author")).count }
            #expect(count == 0)
        }
        // Another program renames a table under the open store.
        try await store.writer.writeWithoutTransaction { try $0.execute(sql: "ALTER TABLE Author RENAME TO Shelved") }
        let failure: ObjectGraphError? = await context.perform { ctx in
            do {
                _ = try ctx.fetch(FetchRequest(entityName: "Author"))
                return nil
            } catch {
                return error as? ObjectGraphError
            }
        }
        guard case .storeReadFailed(let path, let reason) = failure else {
            Issue.record("expected a failed read, got \(String(describing: failure))")
            return
        }
        #expect(path == folder.storeURL.path)
        #expect(reason.contains("no such table: Author") && reason.contains("SELECT"), "\(reason)")
        #expect(failure?.description.hasPrefix("reading the store at \(folder.storeURL.path) failed: ") == true)
        try await store.writer.writeWithoutTransaction { try $0.execute(sql: "ALTER TABLE Shelved RENAME TO Author") }
        let count = try await context.perform { ctx in try ctx.fetch(FetchRequest(entityName: "Author")).count }
        #expect(count == 0)
    }
}

import Foundation
import GRDB
import PredicateFormat
import Testing
@testable import ObjectGraph

/// What a store does with what it is given: values come back exactly or are refused at save, a file that is not
/// this model's store is refused with its bytes unchanged, a failed save writes nothing, and a closed store is all
/// in its `.sqlite` file.
@Suite struct StoreFileTests {
    /// A file's bytes, and those of its `-wal` and `-shm` companions when they exist.
    static func contents(_ path: String) -> [Data?] {
        [path, path + "-wal", path + "-shm"].map { FileManager.default.contents(atPath: $0) }
    }

    /// Opens `path` with the fixtures' model, expecting a refusal whose message holds `words`, and the file's bytes
    /// (and its companions') unchanged.
    static func expectRefused(_ path: String, saying words: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = contents(path)
        do {
            _ = try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: URL(filePath: path))
            Issue.record("the file was opened as a store", sourceLocation: sourceLocation)
        } catch let error as ObjectGraphError {
            #expect(error.message.contains(path), "\(error)", sourceLocation: sourceLocation)
            if let words { #expect(error.message.contains(words), "\(error)", sourceLocation: sourceLocation) }
        }
        #expect(contents(path) == before, "the refused open changed the file", sourceLocation: sourceLocation)
    }

    @Test(arguments: StoreKind.allCases)
    func valuesAStoreWouldChangeAreRefusedAtSaveNamingEntityKeyAndObject(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            let sample = try ctx.insert("Sample")
            for (key, value, reason) in [
                ("string", AttributeValue.string("a\u{0}b"), "holds a NUL character"),
                ("double", .double(.nan), "is NaN"),
                ("float", .double(-0.0), "is -0.0"),
            ] {
                try sample.setValue(value, forKey: key)
                #expect(throws: ObjectGraphError.validation([ValidationFailure(
                    entity: "Sample", objectID: sample.objectID, key: key,
                    reason: ObjectContext.unstorableReasonForTests(value)!)])) { try ctx.save() }
                #expect(ObjectContext.unstorableReasonForTests(value)!.hasPrefix(reason))
                try sample.setValue(nil, forKey: key)
            }
            // Their neighbours are kept exactly.
            let kept: [(String, AttributeValue)] = [
                ("string", .string("a\u{1}b é 𝄞")), ("double", .double(.infinity)), ("float", .double(-.leastNonzeroMagnitude)),
                ("double", .double(-1.5e-300)),
            ]
            for (key, value) in kept {
                try sample.setValue(value, forKey: key)
                try ctx.save()
                try ctx.refresh(sample, mergeChanges: false)
                #expect(try sample.value(forKey: key) == value)
                if case .double(let number) = value, case .double(let read) = try sample.value(forKey: key) {
                    #expect(number.bitPattern == read.bitPattern)
                }
                try sample.setValue(nil, forKey: key)
                try ctx.save()
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aStringConstantWithANULIsRefusedByTheSQLStoreAndMatchedExactlyInMemory(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Fixtures.model(), folder))
        try await context.perform { ctx in
            try ctx.insert("Tag").setValue("plain", forKey: "label")
            try ctx.save()
            let request = try FetchRequest(entityName: "Tag", format: "label CONTAINS %@", "\u{0}")
            switch kind {
            case .memory: #expect(try ctx.fetch(request).isEmpty)
            default:
                do {
                    _ = try ctx.fetch(request)
                    Issue.record("the SQL store compared a string cut at its NUL")
                } catch let error as ObjectGraphError {
                    #expect(error.message.contains("holds a NUL character, which \(kind == .sqlite ? "SQLite" : "PostgreSQL") cannot compare"), "\(error)")
                }
            }
        }
    }

    @Test func aDamagedOrForeignFileIsRefusedAndLeftByteForByte() async throws {
        let folder = try TemporaryFolder()
        // A real store to damage.
        do {
            let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL))
            try await context.perform { ctx in
                for index in 0..<400 { try ctx.insert("Tag").setValue("tag \(index) " + String(repeating: "x", count: 40), forKey: "label") }
                try ctx.save()
            }
        }
        let store = try Data(contentsOf: folder.storeURL)
        #expect(store.count > 4_096 * 4)
        var generator = SystemRandomNumberGenerator()
        func write(_ data: Data, _ name: String) throws -> String {
            let path = folder.url.appendingPathComponent(name).path
            try data.write(to: URL(filePath: path))
            return path
        }
        // Truncations at many lengths, the header's included.
        for length in [1, 15, 16, 99, 100, 512, 4_095, 4_096, 4_097, store.count / 2, store.count - 1] {
            let path = try write(store.prefix(length), "truncated-\(length).sqlite")
            try Self.expectRefused(path, saying: length < 100 ? "not an SQLite database" : "truncated")
        }
        // Random bytes, and random bytes behind SQLite's header.
        for index in 0..<5 {
            let noise = Data((0..<(index + 1) * 3_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
            try Self.expectRefused(try write(noise, "noise-\(index).sqlite"), saying: "not an SQLite database")
            try Self.expectRefused(try write(store.prefix(100) + noise, "headed-noise-\(index).sqlite"))
        }
        // A damaged page: the table's last page, and the schema's first.
        for offset in [store.count - 4_096, 100] {
            var damaged = store
            damaged.replaceSubrange(offset..<offset + 2_000, with: Data(repeating: 0x5A, count: 2_000))
            try Self.expectRefused(try write(damaged, "damaged-\(offset).sqlite"), saying: "damaged")
        }
        // Another model's store.
        let other = folder.url.appendingPathComponent("other.sqlite")
        _ = try PersistentStoreCoordinator(model: try Model(entities: [EntityDescription("Note", attributes: [.init("text", .string)])]), storeURL: other)
        try Self.expectRefused(other.path, saying: "was made with model version")
        // Databases of other programs: a table, only a view, only a user version, only an application ID.
        for (name, sql) in [
            ("table", "CREATE TABLE people (name TEXT)"), ("view", "CREATE VIEW answer AS SELECT 42"),
            ("user-version", "PRAGMA user_version = 7"), ("application-id", "PRAGMA application_id = 1234"),
        ] {
            let path = folder.url.appendingPathComponent("foreign-\(name).sqlite").path
            let queue = try DatabaseQueue(path: path)
            try await queue.writeWithoutTransaction { try $0.execute(sql: sql) }
            try queue.close()
            try Self.expectRefused(path, saying: "not an ObjectGraph store")
        }
        // A folder where the file should be.
        let folderPath = folder.url.appendingPathComponent("a-folder.sqlite")
        try FileManager.default.createDirectory(at: folderPath, withIntermediateDirectories: false)
        try Self.expectRefused(folderPath.path, saying: "it is a folder")
        // A place where nothing can be created, whatever the user's rights: the kernel's own folder.
        try Self.expectRefused("/proc/self/store.sqlite", saying: "cannot be opened for writing")
    }

    @Test func onlyAMissingOrEmptyFileBecomesANewStore() async throws {
        let folder = try TemporaryFolder()
        _ = FileManager.default.createFile(atPath: folder.storeURL.path, contents: Data())
        let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL))
        try await context.perform { ctx in
            try ctx.insert("Tag").setValue("kept", forKey: "label")
            try ctx.save()
        }
        // An SQLite database holding nothing at all, as a creation cut short leaves it, becomes a store too.
        let empty = folder.url.appendingPathComponent("empty.sqlite")
        let queue = try DatabaseQueue(path: empty.path)
        try await queue.writeWithoutTransaction { try $0.execute(sql: "CREATE TABLE t (x); DROP TABLE t") }
        try queue.close()
        #expect(try Data(contentsOf: empty).count > 0)
        _ = try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: empty)
    }

    @Test func aClosedStoreIsWhollyInItsFile() async throws {
        let folder = try TemporaryFolder()
        do {
            let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL))
            try await context.perform { ctx in
                for index in 0..<2_000 { try ctx.insert("Tag").setValue("tag \(index)", forKey: "label") }
                try ctx.save()
            }
        }
        // The file alone, copied elsewhere, is the whole store.
        let copy = folder.url.appendingPathComponent("copy.sqlite")
        try FileManager.default.copyItem(at: folder.storeURL, to: copy)
        let walSize = (try? FileManager.default.attributesOfItem(atPath: folder.storeURL.path + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0)
        let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: copy))
        #expect(try await context.perform { ctx in try ctx.count(for: FetchRequest(entityName: "Tag")) } == 2_000)
    }

    /// A file another connection is growing is read as it stands, not as damaged: a checkpoint copies the header
    /// page (with the new page count) into the file before the pages behind it, so a look at the bare file in
    /// between sees fewer pages than the header counts. Opening a second coordinator on a store in use must still
    /// succeed, as SQLite's own readers, which take the log into account, do.
    @Test func aStoreAnotherConnectionIsGrowingOpensWhileItGrows() async throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        _ = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let writer = try DatabaseQueue(path: folder.storeURL.path, configuration: configuration)
        try await writer.writeWithoutTransaction { try $0.execute(sql: "CREATE TABLE scratch (payload BLOB)") }
        let rounds = 200
        let opened = Protected(0)
        let growing = Task.detached {
            // Grows the file by 25 pages at a time and folds the log in, until the opening side is done (or the
            // file reaches 40 MB: each open reads it all).
            var grown = 0
            while opened.withLock({ $0 }) < rounds && grown < 400 {
                grown += 1
                try await writer.write { try $0.execute(sql: "INSERT INTO scratch VALUES (zeroblob(100000))") }
                // Busy while a closing store folds the log in itself.
                _ = try? await writer.writeWithoutTransaction { try $0.checkpoint(.passive) }
            }
        }
        var refusals: [String] = []
        for _ in 0..<rounds {
            do {
                _ = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
            } catch {
                refusals.append("\(error)")
            }
            opened.withLock { $0 += 1 }
        }
        try await growing.value
        try writer.close()
        #expect(refusals.isEmpty, "\(refusals.count) of \(rounds) opens refused: \(refusals.first ?? "")")
    }

    /// Saves a book with the one ISBN these tests use, which the uniqueness constraint lets one book have.
    static func insertBook(_ ctx: isolated ObjectContext, _ title: String) throws {
        let book = try ctx.insert("Book")
        try book.setValue(title, forKey: "title")
        try book.setValue("123-4567", forKey: "isbn")
        try ctx.save()
    }

    /// A root save with a child reading through it reserves its keys before writing; when the write fails, the
    /// file holds nothing of it, the sequence included.
    @Test func aFailedRootSaveWithAChildAttachedWritesNothing() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL)
        let root = ObjectContext(coordinator: coordinator, name: "writer")
        let child = ObjectContext(parent: root, name: "main")
        try await root.perform { ctx in try Self.insertBook(ctx, "Taken") }
        // The child reads through the root, so the root publishes its writes.
        _ = try await child.perform { ctx in try ctx.count(for: FetchRequest(entityName: "Book")) }
        try await child.perform { ctx in try Self.insertBook(ctx, "Copy") }
        _ = try await child.perform { ctx in try ctx.count(for: FetchRequest(entityName: "Book")) }
        let store = try #require(coordinator.store as? SQLiteStore)
        let sequence = { try store.writer.read { try Row.fetchAll($0, sql: "SELECT * FROM \"objectgraph.sequence\" ORDER BY entity") } }
        let before = try sequence()
        await root.perform { ctx in
            _ = #expect(throws: ObjectGraphError.self) { try ctx.save() }
        }
        #expect(try sequence() == before)
    }
}

extension ObjectContext {
    /// The reason a save gives for a value no store keeps as it is.
    static func unstorableReasonForTests(_ value: AttributeValue) -> String? { ContextState.unstorableReason(value) }
}

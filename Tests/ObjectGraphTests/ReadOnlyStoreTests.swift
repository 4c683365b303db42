import Foundation
import GRDB
import Testing
@testable import ObjectGraph

/// A store opened read-only, as Core Data's `NSReadOnlyPersistentStoreOption` opens one ("the persistent store is
/// opened read-only"): fetches work, every write is refused with an error, and the file and its companions stay byte
/// for byte as they were, none created; `objectgraph inspect` and `query` read stores this way.
@Suite struct ReadOnlyStoreTests {
    static let model = DurabilityTests.model

    /// Every file of the folder and its bytes.
    static func contents(_ folder: TemporaryFolder) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.url.path) {
            result[name] = try Data(contentsOf: folder.url.appendingPathComponent(name))
        }
        return result
    }

    /// A closed store of `count` items.
    static func makeStore(_ folder: TemporaryFolder, count: Int = 10) async throws {
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            for serial in 0..<count { try ctx.insert("Item").setValue(Int64(serial), forKey: "serial") }
            try ctx.save()
        }
    }

    @Test func aReadOnlyStoreReadsAndRefusesEveryWriteLeavingTheFolderByteForByte() async throws {
        let folder = try TemporaryFolder()
        try await Self.makeStore(folder)
        let before = try Self.contents(folder)
        #expect(before.keys.sorted() == ["store.sqlite"])
        do {
            let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: folder.storeURL, options: StoreOptions(isReadOnly: true))
            let second = try PersistentStoreCoordinator(model: Self.model, storeURL: folder.storeURL, options: StoreOptions(isReadOnly: true))
            let context = ObjectContext(coordinator: coordinator)
            try await context.perform { ctx in
                let items = try ctx.fetch(FetchRequest(entityName: "Item", format: "serial >= 5"))
                #expect(items.count == 5)
                try items[0].setValue(Int64(99), forKey: "serial")
                try ctx.insert("Item").setValue(Int64(100), forKey: "serial")
                let error = #expect(throws: ObjectGraphError.self) { try ctx.save() }
                #expect("\(error.map { "\($0)" } ?? "")".contains("read-only"))
                // The refused changes are still the context's, as after any refused save.
                let stillChanged = ctx.hasChanges
                #expect(stillChanged)
            }
            #expect(throws: ObjectGraphError.self) { try coordinator.execute(BatchDeleteRequest(entityName: "Item")) }
            #expect(try await ObjectContext(coordinator: second).perform { try $0.count(for: FetchRequest(entityName: "Item")) } == 10)
        }
        #expect(try Self.contents(folder) == before)
    }

    @Test func summariesAndQueriesLeaveTheFolderByteForByte() async throws {
        let folder = try TemporaryFolder()
        try await Self.makeStore(folder)
        let before = try Self.contents(folder)
        #expect(try StoreSummary(contentsOf: folder.storeURL).rowCounts["Item"] == 10)
        #expect(try StoreQuery(contentsOf: folder.storeURL, entity: "Item", predicate: "serial < 3").matchCount == 3)
        #expect(try Self.contents(folder) == before)
    }

    /// A file another connection uses is read as any SQLite reader reads it, seeing each of the writer's commits,
    /// and the writer goes on saving once the read-only store is gone.
    @Test func aReadOnlyStoreBesideAWriterSeesItsSavesAndLeavesItWhole() async throws {
        let folder = try TemporaryFolder()
        try await Self.makeStore(folder)
        let writer = try PersistentStoreCoordinator(model: Self.model, storeURL: folder.storeURL)
        let writing = ObjectContext(coordinator: writer)
        do {
            let readOnly = try PersistentStoreCoordinator(model: Self.model, storeURL: folder.storeURL, options: StoreOptions(isReadOnly: true))
            try await writing.perform { ctx in
                try ctx.insert("Item").setValue(Int64(10), forKey: "serial")
                try ctx.save()
            }
            #expect(try await ObjectContext(coordinator: readOnly).perform { try $0.count(for: FetchRequest(entityName: "Item")) } == 11)
        }
        try await writing.perform { ctx in
            try ctx.insert("Item").setValue(Int64(11), forKey: "serial")
            try ctx.save()
        }
        let store = try #require(writer.store as? SQLiteStore)
        #expect(try await store.writer.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") } == ["ok"])
        #expect(try await store.writer.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM Item") } == 12)
    }

    @Test func aMissingFileIsRefusedAndNothingIsCreated() throws {
        let folder = try TemporaryFolder()
        let error = #expect(throws: ObjectGraphError.self) {
            try PersistentStoreCoordinator(model: Self.model, storeURL: folder.storeURL, options: StoreOptions(isReadOnly: true))
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("no store file to open read-only"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    /// A migration writes, so a store of an earlier model version is refused read-only, and left as it was.
    @Test func aStoreThatNeedsMigratingIsRefusedAndLeftByteForByte() async throws {
        let folder = try TemporaryFolder()
        try await Self.makeStore(folder)
        let before = try Self.contents(folder)
        let newer = try Model(entities: [
            EntityDescription("Item", attributes: [.init("batch", .int64), .init("serial", .int64), .init("label", .string, isOptional: true)]),
        ])
        let versions = try SchemaVersions([Self.model, newer])
        let error = #expect(throws: ObjectGraphError.self) {
            try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL, options: StoreOptions(isReadOnly: true))
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("needs migrating to version 2"))
        #expect(try Self.contents(folder) == before)
    }

    /// Opening a store for writing writes only what its schema needs: an existing store of the same model, opened,
    /// fetched from and closed without a save, is byte for byte as it was, companions gone.
    @Test func openingAStoreForWritingWithoutSavingLeavesItByteForByte() async throws {
        let folder = try TemporaryFolder()
        try await Self.makeStore(folder)
        let before = try Self.contents(folder)
        for _ in 0..<2 {
            let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: folder.storeURL)
            let count = try await ObjectContext(coordinator: coordinator).perform { ctx in
                try ctx.fetch(FetchRequest(entityName: "Item", format: "serial >= 5")).count
            }
            #expect(count == 5)
        }
        #expect(try Self.contents(folder) == before)
    }
}

import Foundation
import GRDB
import Testing
@testable import ObjectGraph

/// Core Data's external storage (`allowsExternalBinaryDataStorage`: "the corresponding attribute may be stored in a
/// file external to the persistent store itself"): an SQLite store keeps large values of such an attribute in files
/// beside the store file, and everything else about the value stays as it was.
@Suite struct ExternalBinaryDataTests {
    static let contents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Book" syncable="YES">
                <attribute name="title" attributeType="String"/>
                <attribute name="cover" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="thumbnail" optional="YES" attributeType="Binary"/>
                <uniquenessConstraints><uniquenessConstraint><constraint value="title"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
        </model>
        """
    static let large = Data((0..<(ExternalBinaryData.threshold + 1_000)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    static let other = Data(repeating: 7, count: ExternalBinaryData.threshold * 2)

    static func model(in folder: TemporaryFolder, external: Bool = true) throws -> Model {
        let file = folder.url.appendingPathComponent("Books-\(external).xcdatamodel")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        let text = external ? contents : contents.replacingOccurrences(of: #" allowsExternalBinaryDataStorage="YES""#, with: "")
        try text.write(to: file.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return try Model(contentsOf: file)
    }

    /// The files the store keeps beside `storeURL`.
    static func files(beside storeURL: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: storeURL.path + "-external")) ?? [])
    }

    /// `SELECT typeof(cover)` of each book, by title, read with plain SQLite.
    static func storageClasses(_ storeURL: URL) throws -> [String: String] {
        let queue = try DatabaseQueue(path: storeURL.path)
        return try queue.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT title, typeof(cover) FROM Book").map { ($0[0] as String, $0[1] as String) })
        }
    }

    static func insertBooks(_ coordinator: PersistentStoreCoordinator) async throws -> ObjectID {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let big = try ctx.insert("Book")
            try big.setValue("Big", forKey: "title")
            try big.setValue(Self.large, forKey: "cover")
            try big.setValue(Self.large, forKey: "thumbnail")
            let small = try ctx.insert("Book")
            try small.setValue("Small", forKey: "title")
            try small.setValue(Data([1, 2, 3]), forKey: "cover")
            try ctx.save()
            return big.objectID
        }
    }

    @Test func theFlagIsReadAndLeavesTheVersionHashAlone() throws {
        let folder = try TemporaryFolder()
        let model = try Self.model(in: folder)
        #expect(try model.entity(named: "Book").attribute(named: "cover")?.allowsExternalBinaryDataStorage == true)
        #expect(try model.entity(named: "Book").externalBinaryAttributes == [1])
        #expect(try Self.model(in: folder, external: false).versionHash == model.versionHash)
    }

    @Test func aLargeValueIsAFileBesideTheStoreAndReadsBackWhole() async throws {
        let folder = try TemporaryFolder()
        let model = try Self.model(in: folder)
        let id = try await Self.insertBooks(try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL))
        // One file: the large cover. The small cover and the thumbnail (no external storage) stay in their rows.
        #expect(Self.files(beside: folder.storeURL).count == 1)
        #expect(try Self.storageClasses(folder.storeURL) == ["Big": "text", "Small": "blob"])
        let reopened = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        try await ObjectContext(coordinator: reopened).perform { ctx in
            let book = try ctx.existingObject(with: id)
            #expect(try book.value(forKey: "cover") == .data(Self.large))
            #expect(try book.value(forKey: "thumbnail") == .data(Self.large))
            var request = try FetchRequest(entityName: "Book", format: "title == 'Big'")
            request.propertiesToFetch = [.attribute("cover")]
            #expect(try ctx.fetchDictionaries(request).first?["cover"] == .data(Self.large))
        }
    }

    @Test func aReplacedOrDeletedValuesFileGoesAfterAGracePeriod() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try PersistentStoreCoordinator(model: try Self.model(in: folder), storeURL: folder.storeURL)
        let store = try #require(coordinator.store as? SQLiteStore)
        let id = try await Self.insertBooks(coordinator)
        let first = Self.files(beside: folder.storeURL)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.existingObject(with: id).setValue(Self.other, forKey: "cover")
            try ctx.save()
        }
        // The old file stays a while for readers of the old row; the new one is there.
        let second = Self.files(beside: folder.storeURL)
        #expect(second.count == 2 && second.isSuperset(of: first))
        let replaced = try await ObjectContext(coordinator: coordinator).perform { ctx in try ctx.existingObject(with: id).value(forKey: "cover") }
        #expect(replaced == .data(Self.other))
        // Past the grace period, the next save removes it; a deletion's file goes the same way.
        store.externalData.gracePeriod.store(0, ordering: .relaxed)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.existingObject(with: id).setValue("Bigger", forKey: "title")
            try ctx.save()
        }
        #expect(Self.files(beside: folder.storeURL) == second.subtracting(first))
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.delete(try ctx.existingObject(with: id))
            try ctx.save()
        }
        #expect(Self.files(beside: folder.storeURL).isEmpty)
    }

    @Test func aSaveThatFailsLeavesNoFileBehind() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try PersistentStoreCoordinator(model: try Self.model(in: folder), storeURL: folder.storeURL)
        _ = try await Self.insertBooks(coordinator)
        let before = Self.files(beside: folder.storeURL)
        // The store refuses the second "Small" (a uniqueness constraint) after the new cover's file was written.
        await #expect(throws: ObjectGraphError.self) {
            try await ObjectContext(coordinator: coordinator).perform { ctx in
                let book = try ctx.insert("Book")
                try book.setValue("Small", forKey: "title")
                try book.setValue(Self.other, forKey: "cover")
                try ctx.save()
            }
        }
        #expect(Self.files(beside: folder.storeURL) == before)
    }

    @Test func openingTheStoreRemovesOldFilesNoRowNames() async throws {
        let folder = try TemporaryFolder()
        let model = try Self.model(in: folder)
        _ = try await Self.insertBooks(try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL))
        let external = URL(fileURLWithPath: folder.storeURL.path + "-external")
        let named = Self.files(beside: folder.storeURL)
        // What a crash between a file's write and its transaction's commit leaves, an hour ago and just now.
        let (old, young) = (UUID().uuidString, UUID().uuidString)
        for name in [old, young] { try Data([9]).write(to: external.appendingPathComponent(name)) }
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7_200)], ofItemAtPath: external.appendingPathComponent(old).path)
        _ = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        #expect(Self.files(beside: folder.storeURL) == named.union([young]))
    }

    @Test func aMissingFileIsAClearErrorAndTheFolderTravelsWithTheStore() async throws {
        let folder = try TemporaryFolder()
        let model = try Self.model(in: folder)
        let id = try await Self.insertBooks(try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL))
        // A copy of the store file and its folder reads as the original.
        let copy = try TemporaryFolder()
        try FileManager.default.copyItem(at: folder.storeURL, to: copy.storeURL)
        try FileManager.default.copyItem(atPath: folder.storeURL.path + "-external", toPath: copy.storeURL.path + "-external")
        let copied = try await ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: copy.storeURL)).perform { ctx in
            try ctx.existingObject(with: id).value(forKey: "cover")
        }
        #expect(copied == .data(Self.large))
        // The file alone: the value cannot be read, and the error names the file and the folder to copy.
        try FileManager.default.removeItem(atPath: copy.storeURL.path + "-external")
        let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: copy.storeURL))
        await #expect {
            try await context.perform { ctx in try ctx.existingObject(with: id).value(forKey: "cover") }
        } throws: { error in
            guard case ObjectGraphError.storeReadFailed(let path, let reason) = error else { return false }
            return path.hasSuffix("store.sqlite") && reason.contains("store.sqlite-external/") && reason.contains("copy it with the store file")
        }
    }

    /// The other stores keep every value in place: the same values read back.
    @Test(arguments: StoreKind.allCases.filter { $0 != .sqlite })
    func otherStoresKeepLargeValuesInPlace(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Self.model(in: folder), folder)
        let id = try await Self.insertBooks(coordinator)
        let cover = try await ObjectContext(coordinator: coordinator).perform { ctx in try ctx.existingObject(with: id).value(forKey: "cover") }
        #expect(cover == .data(Self.large))
        #expect(Self.files(beside: folder.storeURL).isEmpty)
    }
}

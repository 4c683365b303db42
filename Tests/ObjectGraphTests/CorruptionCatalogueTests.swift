import Foundation
import GRDB
import Testing
@testable import ObjectGraph

/// The rest of SQLite's "How To Corrupt An SQLite Database File", a test per row (the rows with a second coordinator
/// and another process killed in the middle are `DurabilityTests`): each layout either keeps every acknowledged save
/// and a whole file, or is refused with a message that says why.
@Suite(.serialized) struct CorruptionCatalogueTests {
    static let model = DurabilityTests.model

    static func open(_ url: URL) throws -> PersistentStoreCoordinator {
        try PersistentStoreCoordinator(model: model, storeURL: url)
    }

    /// Saves `rows` items of `batch` through a new context of `coordinator`.
    static func save(batch: Int, rows: Int = 10, through coordinator: PersistentStoreCoordinator) async throws {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            for serial in 0..<rows {
                let item = try ctx.insert("Item")
                try item.setValue(Int64(batch), forKey: "batch")
                try item.setValue(Int64(serial), forKey: "serial")
            }
            try ctx.save()
        }
    }

    /// Whether the file at `path` passes SQLite's integrity check, and its rows by batch, read by a connection of
    /// its own.
    static func inspect(_ path: String) throws -> (whole: Bool, batches: [Int: Int]) {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            let whole = try String.fetchAll(db, sql: "PRAGMA integrity_check") == ["ok"]
            let rows = try Row.fetchAll(db, sql: "SELECT batch, COUNT(*) AS n FROM Item GROUP BY batch")
            return (whole, Dictionary(uniqueKeysWithValues: rows.map { (Int($0["batch"] as Int64), $0["n"] as Int) }))
        }
    }

    static func message(_ error: (any Error)?) -> String { error.map { "\($0)" } ?? "no error" }

    // MARK: Links

    /// SQLite resolves a symbolic link and keeps the `-wal` beside the real file, and so does the store: a link
    /// and the real path, in one process and in two, are one store.
    @Test func aSymbolicLinkAndTheRealPathAreOneStoreInOneProcessAndInTwo() async throws {
        let folder = try TemporaryFolder()
        let link = folder.url.appendingPathComponent("link.sqlite")
        let real = try Self.open(folder.storeURL)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: folder.storeURL)
        let linked = try Self.open(link)
        try await Self.save(batch: 0, through: real)
        try await Self.save(batch: 1, through: linked)
        let linkPath = link.path
        await #expect(processExitsWith: .success) { [linkPath = linkPath as String] in
            try await CorruptionCatalogueTests.save(batch: 2, through: CorruptionCatalogueTests.open(URL(filePath: linkPath)))
        }
        try await Self.save(batch: 3, through: real)
        #expect(!FileManager.default.fileExists(atPath: link.path + "-wal"))
        #expect(try await ObjectContext(coordinator: linked).perform { try $0.count(for: FetchRequest(entityName: "Item")) } == 40)
        let (whole, batches) = try Self.inspect(folder.storeURL.path)
        #expect(whole && batches == [0: 10, 1: 10, 2: 10, 3: 10])
    }

    /// Two names for one file give it two logs, one beside each name ("How To Corrupt", section 2.5): refused when
    /// the store opens, and before a save commits once a second name appears.
    @Test func aHardLinkedStoreFileIsRefusedWhenItOpensAndBeforeASaveCommits() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try Self.open(folder.storeURL)
        try await Self.save(batch: 0, through: coordinator)
        let second = folder.url.appendingPathComponent("second-name.sqlite")
        try FileManager.default.linkItem(at: folder.storeURL, to: second)
        let refusedSave = await #expect(throws: ObjectGraphError.self) { try await Self.save(batch: 1, through: coordinator) }
        #expect(Self.message(refusedSave).contains("a second name is a hard link"))
        for url in [folder.storeURL, second] {
            let refusedOpen = #expect(throws: ObjectGraphError.self) { try Self.open(url) }
            #expect(Self.message(refusedOpen).contains("a second name is a hard link"))
        }
        try FileManager.default.removeItem(at: second)
        try await Self.save(batch: 2, through: coordinator)
        #expect(try Self.inspect(folder.storeURL.path).batches == [0: 10, 2: 10])
    }

    // MARK: The file and its companions changed under an open store

    /// A store file moved away while open: a save would commit into a file the path no longer names.
    @Test func aStoreFileRenamedWhileOpenRefusesTheNextSave() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try Self.open(folder.storeURL)
        try await Self.save(batch: 0, through: coordinator)
        try FileManager.default.moveItem(at: folder.storeURL, to: folder.url.appendingPathComponent("moved.sqlite"))
        let refused = await #expect(throws: ObjectGraphError.self) { try await Self.save(batch: 1, through: coordinator) }
        #expect(Self.message(refused).contains("deleted or replaced"))
    }

    /// A `-wal` or `-shm` deleted while the store has it open (akin to "How To Corrupt", section 1.3, deleting a hot journal): another process would
    /// start a second log. The next save is refused, and closing the store writes what its log held into the file.
    @Test(arguments: ["-wal", "-shm"])
    func aCompanionDeletedWhileOpenRefusesTheNextSaveAndClosingKeepsEveryAcknowledgedSave(_ suffix: String) async throws {
        let folder = try TemporaryFolder()
        do {
            let coordinator = try Self.open(folder.storeURL)
            try await Self.save(batch: 0, through: coordinator)
            try await Self.save(batch: 1, through: coordinator)
            try FileManager.default.removeItem(atPath: folder.storeURL.path + suffix)
            let refused = await #expect(throws: ObjectGraphError.self) { try await Self.save(batch: 2, through: coordinator) }
            #expect(Self.message(refused).contains("store's \(suffix) file was deleted or replaced"))
        }
        let (whole, batches) = try Self.inspect(folder.storeURL.path)
        #expect(whole && batches == [0: 10, 1: 10])
    }

    /// SQLite's locks belong to the process that opened the store, and a fork has none of them ("How To Corrupt",
    /// section 2.6): a forked process's write is refused before it starts, and the parent goes on saving.
    @Test func aForkedProcessCannotWriteThroughItsParentsStore() async throws {
        let folder = try TemporaryFolder()
        let path = folder.storeURL.path
        await #expect(processExitsWith: .success) { [path = path as String] in
            let coordinator = try CorruptionCatalogueTests.open(URL(filePath: path))
            try await CorruptionCatalogueTests.save(batch: 0, through: coordinator)
            let store = try #require(coordinator.store as? SQLiteStore)
            let child = fork()
            if child == 0 {
                // Only the store's check runs here: it refuses before any of the store's queues is asked to run.
                do {
                    _ = try store.allocatePrimaryKeys(rootEntity: "Item", count: 1)
                    _exit(2)
                } catch {
                    _exit("\(error)".contains("is a fork of it") ? 0 : 3)
                }
            }
            var status: Int32 = 0
            #expect(waitpid(child, &status, 0) == child)
            #expect(status == 0, "the forked process ended with status \(status)")
            try await CorruptionCatalogueTests.save(batch: 1, through: coordinator)
        }
        let (whole, batches) = try Self.inspect(path)
        #expect(whole && batches == [0: 10, 1: 10])
    }

    // MARK: A long reader, and a full disk

    /// A reader that keeps one snapshot (here a read transaction of another connection) holds every later save in
    /// the log, which grows meanwhile and cannot be copied; once it goes, a checkpoint copies and empties it.
    @Test func aLongReaderHoldsTheLogUntilItGoesThenACheckpointCopiesAndEmptiesIt() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try Self.open(folder.storeURL)
        let store = try #require(coordinator.store as? SQLiteStore)
        try await Self.save(batch: 0, through: coordinator)
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let reader = try DatabaseQueue(path: folder.storeURL.path, configuration: configuration)
        let seen = try reader.inDatabase { db in
            try db.execute(sql: "BEGIN")
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM Item")
        }
        #expect(seen == 10)
        let before = store.writeAheadLogSize
        for batch in 1...20 { try await Self.save(batch: batch, rows: 100, through: coordinator) }
        #expect(store.writeAheadLogSize > before)
        #expect(try store.checkpoint() == false)
        // The reader still sees its snapshot.
        #expect(try reader.inDatabase { try Int.fetchOne($0, sql: "SELECT count(*) FROM Item") } == 10)
        try reader.inDatabase { try $0.execute(sql: "COMMIT") }
        try reader.close()
        #expect(try store.checkpoint() == true)
        #expect(store.writeAheadLogSize == 0)
        let (whole, batches) = try Self.inspect(folder.storeURL.path)
        #expect(whole && batches.count == 21 && batches.values.reduce(0, +) == 2_010)
    }

    /// The disk fills up during a save (a 3 MB tmpfs, filled by another file): the save throws, nothing of it is
    /// in the store, every acknowledged save is, and once space returns the store saves again.
    @Test func aFullDiskFailsTheSaveAndTheStoreIsWholeAndSavesOnceSpaceReturns() async throws {
        let folder = try TemporaryFolder()
        let disk = folder.url.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", disk.path])
        defer { try? Self.run("/bin/umount", [disk.path]) }
        let store = disk.appendingPathComponent("store.sqlite")
        var acknowledged: Set<Int> = []
        var refused = 0
        do {
            let coordinator = try Self.open(store)
            try await Self.save(batch: 0, through: coordinator)
            acknowledged.insert(0)
            // Fill what is left.
            let filler = disk.appendingPathComponent("filler")
            _ = FileManager.default.createFile(atPath: filler.path, contents: Data())
            let handle = try FileHandle(forWritingTo: filler)
            let chunk = Data(repeating: 0xAB, count: 16 * 1024)
            while (try? handle.write(contentsOf: chunk)) != nil {}
            try? handle.close()
            for batch in 1...10 {
                do {
                    try await Self.save(batch: batch, rows: 500, through: coordinator)
                    acknowledged.insert(batch)
                } catch let error as ObjectGraphError {
                    guard case .storeWriteFailed = error else { throw error }
                    refused += 1
                }
            }
            #expect(refused > 0, "no save met the full disk")
            try FileManager.default.removeItem(at: filler)
            try await Self.save(batch: 11, through: coordinator)
            acknowledged.insert(11)
        }
        let (whole, batches) = try Self.inspect(store.path)
        #expect(whole)
        #expect(Set(batches.keys) == acknowledged)
        for (batch, count) in batches { #expect(count == (batch == 0 || batch == 11 ? 10 : 500)) }
    }

    /// Runs a system tool, throwing with its output when it fails.
    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(filePath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardError = output
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(tool) \(arguments.joined(separator: " ")) failed: \(text)"])
        }
    }
}

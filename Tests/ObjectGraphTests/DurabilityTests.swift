import Foundation
import GRDB
import Testing
@testable import ObjectGraph

/// SQLite's catalogue of ways to lose a database ("How To Corrupt An SQLite Database File"), each as a layout a
/// user can make: every `save()` that returned is in the file afterwards (or the save threw), `PRAGMA
/// integrity_check` passes, and nothing reads as "malformed".
///
/// The saving process is an exit test that logs each acknowledged save (synced) and ends by SIGKILL; this process
/// plays the other program (reading, or holding the write lock), then checks the file as a fresh process would.
@Suite(.serialized) struct DurabilityTests {
    static let model = try! Model(entities: [
        EntityDescription("Item", attributes: [.init("batch", .int64), .init("serial", .int64)]),
    ])
    static let rowsPerBatch = 100

    /// What the other process does while the saving one has its coordinators open.
    enum Other: String, Sendable, Codable, CaseIterable {
        /// Opens the file, counts the rows and closes it (`sqlite3 store.sqlite 'SELECT count(*) ...'`).
        case reads
        /// Takes the write lock, changes a row, holds the lock a while, commits and closes.
        case writes
    }

    // MARK: Two and three coordinators in one process, another process beside them

    @Test(arguments: [2, 3], Other.allCases)
    func coordinatorsInOneProcessWithAnotherProcessThenSIGKILLKeepEveryAcknowledgedSave(coordinators: Int, other: Other) async throws {
        let folder = try TemporaryFolder()
        let path = folder.url.path
        try await Self.runChild(folder) {
            await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String, coordinators = coordinators as Int] in
                try await DurabilityTests.saveBesideOtherCoordinators(folder: path, coordinators: coordinators)
            }
        } other: { [url = folder.url] in
            try await Self.waitFor("ready", in: url)
            try Self.actAsOtherProcess(other, on: url.appendingPathComponent("store.sqlite").path, then: { Self.signal("go", in: url) })
        }
        let acknowledged = try Self.check(folder)
        #expect(acknowledged.count == 20 + coordinators - 1, "the child acknowledged \(acknowledged.count) saves")
    }

    /// The saving process: coordinator A saves a batch, more coordinators open on the file (and read), then, once the
    /// other process has been at the file, A saves 19 batches and each other coordinator one.
    static func saveBesideOtherCoordinators(folder: String, coordinators: Int) async throws -> Never {
        let folder = URL(filePath: folder)
        let log = try AcknowledgementLog(folder)
        let url = folder.appendingPathComponent("store.sqlite")
        let a = try PersistentStoreCoordinator(model: model, storeURL: url)
        try await save(batch: 0, through: a, log: log)
        var others: [PersistentStoreCoordinator] = []
        for _ in 1..<coordinators {
            let other = try PersistentStoreCoordinator(model: model, storeURL: url)
            _ = try await ObjectContext(coordinator: other).perform { try $0.count(for: FetchRequest(entityName: "Item")) }
            others.append(other)
        }
        // And what a tool does in the same process: a read-only coordinator, a summary and a query, each closed.
        do {
            let readOnly = try PersistentStoreCoordinator(model: model, storeURL: url, options: StoreOptions(isReadOnly: true))
            _ = try await ObjectContext(coordinator: readOnly).perform { try $0.count(for: FetchRequest(entityName: "Item")) }
        }
        _ = try StoreSummary(contentsOf: url)
        _ = try StoreQuery(contentsOf: url, entity: "Item", predicate: "batch == 0")
        signal("ready", in: folder)
        try await waitFor("go", in: folder)
        for batch in 1..<20 { try await save(batch: batch, through: a, log: log) }
        for (offset, other) in others.enumerated() { try await save(batch: 20 + offset, through: other, log: log) }
        kill(getpid(), SIGKILL)
        fatalError("unreachable")
    }

    static func save(batch: Int, through coordinator: PersistentStoreCoordinator, log: AcknowledgementLog) async throws {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            for serial in 0..<rowsPerBatch {
                let item = try ctx.insert("Item")
                try item.setValue(Int64(batch), forKey: "batch")
                try item.setValue(Int64(serial), forKey: "serial")
            }
            try ctx.save()
        }
        try log.acknowledge(batch)
    }

    // MARK: The seeds' stack, a second coordinator, and another process holding the write lock

    @Test(arguments: DataStack.Layout.allCases)
    func theStackBesideASecondCoordinatorAndAnotherProcessHoldingTheWriteLockKeepsEveryAcknowledgedSave(_ layout: DataStack.Layout) async throws {
        let folder = try TemporaryFolder()
        let path = folder.url.path
        try await Self.runChild(folder) {
            await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String, layout = layout.rawValue as String] in
                try await DurabilityTests.saveThroughTheStack(folder: path, layout: DataStack.Layout(rawValue: layout)!)
            }
        } other: { [url = folder.url] in
            try await Self.waitFor("ready", in: url)
            // Held four times the child's busy timeout: the saves meanwhile fail, and say so.
            try Self.actAsOtherProcess(.writes, on: url.appendingPathComponent("store.sqlite").path, holding: 2, then: { Self.signal("go", in: url) })
            Self.signal("released", in: url)
        }
        let acknowledged = try Self.check(folder)
        #expect(acknowledged.count >= 6, "the child acknowledged \(acknowledged.count) saves")
    }

    /// The saving process: the stack saves through workers (and main) while a second coordinator is open and reads;
    /// a save that times out on the other process's lock is not acknowledged, and the saves go on once it is gone.
    static func saveThroughTheStack(folder: String, layout: DataStack.Layout) async throws -> Never {
        let folder = URL(filePath: folder)
        let log = try AcknowledgementLog(folder)
        let url = folder.appendingPathComponent("store.sqlite")
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url, options: StoreOptions(busyTimeout: 0.5))
        let stack = DataStack(coordinator: coordinator, layout: layout)
        let second = try PersistentStoreCoordinator(model: model, storeURL: url)
        var batch = 0
        func saveBatch() async {
            let current = batch
            batch += 1
            do {
                try await stack.background { ctx in
                    for serial in 0..<rowsPerBatch {
                        let item = try ctx.insert("Item")
                        try item.setValue(Int64(current), forKey: "batch")
                        try item.setValue(Int64(serial), forKey: "serial")
                    }
                }
                try log.acknowledge(current)
            } catch {
                // Refused: its rows are pending in the main context, and a later save may write them.
            }
        }
        for _ in 0..<3 { await saveBatch() }
        _ = try await ObjectContext(coordinator: second).perform { try $0.count(for: FetchRequest(entityName: "Item")) }
        signal("ready", in: folder)
        try await waitFor("go", in: folder)
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("released").path) { await saveBatch() }
        for _ in 0..<3 { await saveBatch() }
        try await stack.save()
        try await save(batch: 1_000, through: second, log: log)
        kill(getpid(), SIGKILL)
        fatalError("unreachable")
    }

    // MARK: The other process, and the check

    /// Runs the child (an exit test) and this process's part beside it.
    static func runChild(_ folder: TemporaryFolder, _ child: @escaping @Sendable () async -> Void, other: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await child() }
            group.addTask { try await other() }
            try await group.waitForAll()
        }
    }

    /// Opens the file with plain SQLite, as another program would: counts its rows, or takes the write lock, changes
    /// a row and holds the lock for `holding` seconds; calls `then` meanwhile, and closes the file.
    static func actAsOtherProcess(_ other: Other, on path: String, holding: Double = 0.3, then: () -> Void) throws {
        let queue = try DatabaseQueue(path: path)
        switch other {
        case .reads:
            _ = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM Item") }
            try queue.close()
            then()
        case .writes:
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "UPDATE Item SET serial = serial WHERE batch = 0")
                then()
                Thread.sleep(forTimeInterval: holding)
                try db.execute(sql: "COMMIT")
            }
            try queue.close()
        }
    }

    /// Checks the store as a fresh process opens it: whole, and holding every acknowledged save's rows, and of any
    /// other save all of its rows or none. Returns the acknowledged saves.
    static func check(_ folder: TemporaryFolder) throws -> Set<Int> {
        let acknowledged = try AcknowledgementLog(folder.url).acknowledged
        let queue = try DatabaseQueue(path: folder.storeURL.path)
        defer { try? queue.close() }
        #expect(try queue.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") } == ["ok"])
        let counts = try queue.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT batch, COUNT(*) AS n FROM Item GROUP BY batch").map { (Int($0["batch"] as Int64), $0["n"] as Int) })
        }
        for batch in acknowledged { #expect(counts[batch] == rowsPerBatch, "acknowledged save \(batch) holds \(counts[batch] ?? 0) rows") }
        for (batch, count) in counts { #expect(count == rowsPerBatch, "save \(batch) holds \(count) rows") }
        return acknowledged
    }

    // MARK: Signals between the processes

    static func signal(_ name: String, in folder: URL) {
        _ = FileManager.default.createFile(atPath: folder.appendingPathComponent(name).path, contents: Data())
    }

    /// Waits until the other process made the file `name`; a minute is a guard against hanging, not a timing check.
    static func waitFor(_ name: String, in folder: URL) async throws {
        let path = folder.appendingPathComponent(name).path
        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: path) {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// The saves a child process was told succeeded, one line each, synced before the next save starts.
struct AcknowledgementLog {
    let url: URL

    init(_ folder: URL) throws {
        url = folder.appendingPathComponent("acknowledged")
        if !FileManager.default.fileExists(atPath: url.path) { _ = FileManager.default.createFile(atPath: url.path, contents: Data()) }
    }

    func acknowledge(_ save: Int) throws {
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\(save)\n".utf8))
        try handle.synchronize()
    }

    var acknowledged: Set<Int> {
        get throws { Set(try String(contentsOf: url, encoding: .utf8).split(separator: "\n").compactMap { Int($0) }) }
    }
}

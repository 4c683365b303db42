import Foundation
import GRDB
import Testing
@testable import ObjectGraph

/// A process saving in a loop is killed with SIGKILL at a random moment; the store it leaves opens, passes SQLite's
/// integrity check, and holds every save the process was told succeeded, whole, and no part of any other.
///
/// Each kill is an exit test: the child saves (plainly, through the nested stack, or deleting as it goes), writes
/// each acknowledged save to a log and syncs it, and a thread of its own sends it SIGKILL after a random delay. CI
/// runs 20 kills; `scripts/crash-test.sh N` runs N of each kind.
@Suite(.serialized) struct CrashTests {
    /// How the child saves.
    enum Mode: String, CaseIterable, Sendable, Codable {
        /// A root context on the store.
        case plain
        /// A worker of the nested stack, saved to disk through main and the writer.
        case nested
        /// A root context deleting an earlier save's rows in each save.
        case deletes
    }

    /// Kills of each mode: `OBJECTGRAPH_CRASH_KILLS` when set, else 7 (21 kills in all).
    static var kills: Int { ProcessInfo.processInfo.environment["OBJECTGRAPH_CRASH_KILLS"].flatMap(Int.init) ?? 7 }

    static let model = try! Model(entities: [EntityDescription("Entry", attributes: [.init("save", .int64), .init("label", .string)])])

    /// How many rows save `index` inserts: varied, so a torn save would show as a wrong count.
    static func rows(of index: Int) -> Int { 1 + (index * 37) % 200 }

    /// The child's loop: saves until killed, logging each acknowledged save.
    static func saveUntilKilled(folder: URL, mode: Mode) async throws -> Never {
        let log = try FileHandle(forWritingTo: folder.appendingPathComponent("acknowledged"))
        try log.seekToEnd()
        let delay = UInt32.random(in: 20_000...400_000)
        Thread.detachNewThread {
            usleep(delay)
            kill(getpid(), SIGKILL)
        }
        let url = folder.appendingPathComponent("store.sqlite")
        // A new run starts past every save of earlier runs, the one in flight at their kill included.
        let first = Log(folder).runs.map { $0.start + $0.acknowledged.count + 1 }.max() ?? 0
        try log.write(contentsOf: Data("start \(first)\n".utf8))
        try log.synchronize()
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url)
        let stack = DataStack(coordinator: coordinator, layout: .nested)
        let root = ObjectContext(coordinator: coordinator, name: "root")
        for index in first... {
            let body: @Sendable (isolated ObjectContext) throws -> Void = { ctx in
                for row in 0..<rows(of: index) {
                    let entry = try ctx.insert("Entry")
                    try entry.setValue(Int64(index), forKey: "save")
                    try entry.setValue("save \(index) row \(row)", forKey: "label")
                }
                // Only rows of this run's own saves: whether a save's deleter committed is then known from the log.
                if mode == .deletes, index - 3 >= first {
                    for entry in try ctx.fetch(FetchRequest(entityName: "Entry", format: "save == %d", index - 3)) { try ctx.delete(entry) }
                }
            }
            switch mode {
            case .plain, .deletes: try await root.perform { ctx in try body(ctx); try ctx.save() }
            case .nested: try await stack.background(body)
            }
            try log.write(contentsOf: Data("\(index)\n".utf8))
            try log.synchronize()
        }
        fatalError("unreachable")
    }

    @Test(arguments: Mode.allCases)
    func aProcessKilledWhileSavingLeavesEveryAcknowledgedSaveWholeAndNoPartOfAnother(_ mode: Mode) async throws {
        let folder = try TemporaryFolder()
        #expect(FileManager.default.createFile(atPath: folder.url.appendingPathComponent("acknowledged").path, contents: Data()))
        // The child gets its folder and mode through the capture list: setting the environment here would race
        // with other suites' processes starting, which copy it.
        let path = folder.url.path
        for _ in 0..<Self.kills {
            await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String, mode = mode as Mode] in
                try await CrashTests.saveUntilKilled(folder: URL(filePath: path), mode: mode)
            }
            try await Self.check(folder, mode: mode)
        }
    }

    /// Opens the store as an app would and checks it against the log of acknowledged saves.
    static func check(_ folder: TemporaryFolder, mode: Mode) async throws {
        let runs = Log(folder.url).runs
        let acknowledged = Set(runs.flatMap(\.acknowledged))
        guard FileManager.default.fileExists(atPath: folder.storeURL.path) else {
            #expect(acknowledged.isEmpty, "acknowledged saves but no store")
            return
        }
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        let store = try #require(coordinator.store as? SQLiteStore)
        #expect(try await store.writer.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") } == ["ok"])
        let counts = try await store.writer.read { db in
            [Int: Int](try Row.fetchAll(db, sql: "SELECT save, COUNT(*) AS n FROM Entry GROUP BY save").map { ($0["save"], $0["n"]) },
                           uniquingKeysWith: +)
        }
        // A run's save in flight at the kill may have committed before its acknowledgement was logged; no other.
        let inFlight = Set(runs.map { $0.start + $0.acknowledged.count })
        for (save, count) in counts {
            #expect(count == rows(of: save), "save \(save) holds \(count) of its \(rows(of: save)) rows")
            #expect(acknowledged.contains(save) || inFlight.contains(save), "save \(save) was never acknowledged")
        }
        for save in acknowledged {
            let deletedBy = save + 3
            // Its deleter is of the same run; committed when acknowledged, or when in flight at the kill and present.
            let sameRun = runs.contains { $0.acknowledged.contains(save) && deletedBy <= $0.start + $0.acknowledged.count }
            let deleted = mode == .deletes && sameRun && (acknowledged.contains(deletedBy) || counts[deletedBy] != nil)
            #expect(deleted ? counts[save] == nil : counts[save] == rows(of: save), "acknowledged save \(save) holds \(counts[save] ?? 0) rows")
        }
    }
}

/// The child's log: `start K` where a run begins, then each save it acknowledged, in order.
struct Log {
    struct Run {
        var start: Int
        var acknowledged: [Int] = []
    }

    var runs: [Run] = []

    init(_ folder: URL) {
        let text = (try? String(contentsOf: folder.appendingPathComponent("acknowledged"), encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            if line.hasPrefix("start "), let start = Int(line.dropFirst(6)) {
                runs.append(Run(start: start))
            } else if let save = Int(line), !runs.isEmpty {
                runs[runs.count - 1].acknowledged.append(save)
            }
        }
    }
}

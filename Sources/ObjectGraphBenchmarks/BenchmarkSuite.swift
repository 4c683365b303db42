import GRDBSQLite
import Foundation
import GRDB
import ObjectGraph

/// The benchmark suite: raw SQLite C calls, GRDB (rows by index, and records) and ObjectGraph on the same data in
/// the same process run. Timing is reported, never asserted.
public struct BenchmarkSuite: Sendable {
    /// Sizes and repetitions; ``tiny`` keeps CI fast and checks only that every workload runs.
    public struct Options: Sendable {
        public var insertCount = 50_000
        public var fetchCount = 200_000
        public var lookups = 2_000
        /// W3's lookups after a cache flush, per contender.
        public var coldLookups = 300
        public var memoryCount = 1_000_000
        public var scalingSizes = [10_000, 100_000, 1_000_000]
        /// W7's store.
        public var migrationCount = 1_000_000
        /// W8's import, its saves, and the result sizes of its one-object diffs.
        public var observationImportCount = 100_000
        public var observationBatch = 1_000
        public var observationResultSizes = [10_000, 100_000]
        /// W9's batch insert and update.
        public var batchCount = 1_000_000
        /// W11-W13's books, their authors, and how many books W12 changes and W13 deletes.
        public var graphBooks = 200_000
        public var graphAuthors = 20_000
        public var graphChanges = 50_000
        /// W14's store before the import, and the import saved in one save while the main actor fetches.
        public var responsivenessCount = 100_000
        /// The least import time, in seconds, one W4 sample watches: a 2 ms timer wakes about 200 times in 0.4 s,
        /// so one wake a few milliseconds late moves the occupancy by about a point, the target's margin. The
        /// sibling layout imports 50,000 objects in about 0.08 s, where one such wake moved it by five: its samples
        /// watch several imports in a row.
        public var leastWatchedImport = 0.4
        public var repetitions = 5
        public var folder = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-bench")
        /// The workloads to run ("W1" … "W14"); all of them when empty. Running one alone is how to profile it.
        public var workloads: Set<String> = []
        /// The contenders W1, W2, W3 and W6 run, and whose lookups W4 runs on the main actor (all of
        /// ``BenchmarkReport/contenders`` by default), and which object baselines W2 and W11 run
        /// (``BenchmarkReport/objectBaselines``, both by default).
        public var contenders = Set(BenchmarkReport.contenders + BenchmarkReport.objectBaselines)
        /// The command that runs W5 alone in a fresh process (given the count and the folder as two more arguments,
        /// it prints the batched and unbatched growth in MB); nil runs W5 in this process.
        public var freshProcessCommand: [String]?

        public init() {}

        /// A run that checks every workload works, in seconds.
        public static var tiny: Options {
            var options = Options()
            options.insertCount = 500
            options.fetchCount = 1_000
            options.lookups = 50
            options.coldLookups = 5
            options.memoryCount = 5_000
            options.scalingSizes = [100, 1_000]
            options.migrationCount = 2_000
            options.observationImportCount = 2_000
            options.observationBatch = 500
            options.observationResultSizes = [100, 1_000]
            options.batchCount = 2_000
            options.graphBooks = 1_000
            options.graphAuthors = 100
            options.graphChanges = 250
            options.responsivenessCount = 2_000
            options.leastWatchedImport = 0
            options.repetitions = 1
            return options
        }
    }

    let options: Options
    /// A contender from another package (Fluent), run on W1, W2, W3 and W11 beside the others.
    let peer: (any PeerContender)?
    /// Where progress lines go (standard error by default, so the table on standard output stays clean).
    var log: @Sendable (String) -> Void

    public init(options: Options, peer: (any PeerContender)? = nil,
                log: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }) {
        self.options = options
        self.peer = peer
        self.log = log
    }

    static let model: Model = try! Model([Item.self])

    func freshPath(_ name: String) throws -> String {
        try FileManager.default.createDirectory(at: options.folder, withIntermediateDirectories: true)
        let url = options.folder.appendingPathComponent(name + ".sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        return url.path
    }

    /// Runs every workload and returns the medians.
    @MainActor
    public func run() async throws -> BenchmarkReport {
        var report = BenchmarkReport()
        func selected(_ workload: String) -> Bool { options.workloads.isEmpty || options.workloads.contains(workload) }
        if selected("W1") {
            log("W1 insert \(options.insertCount)…")
            report.rows += try await insert(count: options.insertCount, label: "W1 insert \(options.insertCount)")
        }
        if selected("W2") {
            log("W2 fetch \(options.fetchCount)…")
            report.rows += try await fetch(count: options.fetchCount, label: "W2 fetch \(options.fetchCount)")
        }
        if selected("W3") {
            log("W3 lookups…")
            report.rows += try await lookups()
        }
        if selected("W4") {
            log("W4 the stack…")
            report.rows += try await stack()
        }
        if selected("W5") {
            log("W5 memory…")
            report.rows.append(try await memory())
        }
        if selected("W6") {
            log("W6 at \(options.scalingSizes.map(String.init).joined(separator: ", "))…")
            report.rows += try await scaling()
        }
        if selected("W7") {
            log("W7 migration of \(options.migrationCount) rows…")
            report.rows += try await migration()
        }
        if selected("W8") {
            log("W8 live results during an import of \(options.observationImportCount)…")
            report.rows += try await observation()
        }
        if selected("W9") {
            log("W9 batch insert and update of \(options.batchCount)…")
            report.rows += try await batch()
        }
        if selected("W10") {
            log("W10 W1 with history…")
            report.rows += try await historyCost()
        }
        if selected("W11") || selected("W12") || selected("W13") {
            log("W11-W13 relationships, updates and deletes over \(options.graphBooks) books…")
            report.rows += try await graph(options.workloads.intersection(["W11", "W12", "W13"]))
        }
        if selected("W14") {
            log("W14 the main context's fetches during a save of \(options.responsivenessCount)…")
            report.rows += try await responsiveness()
        }
        // Faster than the peer on every measure both ran.
        if let peer {
            for index in report.rows.indices where report.rows[index].values[peer.name] != nil {
                report.rows[index].fasterThanPeer = peer.name
            }
        }
        return report
    }

    // MARK: W1 insert

    /// W1's wall and CPU rows.
    func insert(count: Int, label: String) async throws -> [BenchmarkReport.Row] {
        let samples = try await insertSamples(count: count, contenders: options.contenders, repetitions: options.repetitions)
        return BenchmarkReport.Row.wallAndCPU(label, samples, target: .ratio(2))
    }

    /// Each contender's times for inserting `count` rows into a fresh store, `repetitions` times after one untimed
    /// warm-up. Raw SQLite writes as the store does (no mutex, WAL, `synchronous=NORMAL`, 64 rows per INSERT); GRDB
    /// as its documentation recommends (a `DatabasePool`, cached statements).
    func insertSamples(count: Int, contenders: Set<String>, repetitions: Int) async throws -> Samples {
        var samples = Samples()
        for repetition in 0...repetitions {
            var taken = Samples()
            if contenders.contains("raw") {
                let raw = try RawSQLite(path: try freshPath("w1-raw"), fair: true)
                try raw.execute(plainSchema)
                taken.add(try Measure.timed { try raw.insertRows(count, table: "item") }, for: "raw")
                raw.close()
                try checkStored(try freshPathKeeping("w1-raw"), count: count, table: "item", who: "raw")
            }
            if contenders.contains("GRDB rows") {
                let path = try freshPath("w1-grdb")
                let pool = try DatabasePool(path: path)
                try createPlainSchema(pool)
                taken.add(try Measure.timed {
                    try pool.write { db in
                        let statement = try db.cachedStatement(sql: "INSERT INTO item (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                        for row in 0..<count {
                            let base = Int64(row * 10)
                            try statement.execute(arguments: [base, base + 1, base + 2, base + 3, base + 4, base + 5, base + 6, base + 7, base + 8, base + 9])
                        }
                    }
                }, for: "GRDB rows")
                // Closed here, not whenever the pool is freed: its closing checkpoint then overlapped the next
                // contender's run (W1 took 0.08-0.10 s after GRDB's contenders, 0.063-0.069 s without them).
                try pool.close()
                try checkStored(path, count: count, table: "item", who: "GRDB rows")
            }
            if contenders.contains("GRDB records") {
                let path = try freshPath("w1-records")
                let pool = try DatabasePool(path: path)
                try createPlainSchema(pool)
                taken.add(try Measure.timed {
                    try pool.write { db in
                        for row in 0..<count {
                            let b = Int64(row * 10)
                            try ItemRecord(id: nil, a0: b, a1: b + 1, a2: b + 2, a3: b + 3, a4: b + 4, a5: b + 5, a6: b + 6, a7: b + 7, a8: b + 8, a9: b + 9).insert(db)
                        }
                    }
                }, for: "GRDB records")
                try pool.close()
                try checkStored(path, count: count, table: "item", who: "GRDB records")
            }
            if contenders.contains("ObjectGraph") {
                let path = try freshPath("w1-graph")
                let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: URL(fileURLWithPath: path))
                let context = ObjectContext(coordinator: coordinator, name: "bench")
                taken.add(try await Measure.timed(on: context) { ctx in
                    for row in 0..<count { try ctx.insert(Item.self).fill(row) }
                    try ctx.save()
                    ctx.reset()
                }.0, for: "ObjectGraph")
                try checkStored(path, count: count, table: "Item", who: "ObjectGraph")
            }
            if let peer, contenders.contains(peer.name) {
                let path = try freshPath("w1-peer")
                try await peer.open(path: path)
                try await peer.createItemTable()
                taken.add(try await Measure.timed { try await peer.insertItems(count: count) }, for: peer.name)
                try await peer.close()
                try checkStored(path, count: count, table: "item", who: peer.name)
            }
            // The first round warms code, caches and the file system up for every contender, and is not counted.
            if repetition > 0 { samples = samples + taken }
        }
        return samples
    }

    /// The path `freshPath(name)` gives, without removing what is there.
    func freshPathKeeping(_ name: String) throws -> String {
        options.folder.appendingPathComponent(name + ".sqlite").path
    }

    /// Checks that `table` in `path` holds `count` rows with the values W1 writes (`row * 10 + column`).
    func checkStored(_ path: String, count: Int, table: String, who: String) throws {
        let raw = try RawSQLite(path: path)
        defer { raw.close() }
        let found = try raw.integers("SELECT count(*), sum(a0), sum(a9) FROM \"\(table)\"")
        let rows = Int64(count)
        let expected = [rows, 10 * rows * (rows - 1) / 2, 10 * rows * (rows - 1) / 2 + 9 * rows]
        guard found == expected else { throw BenchmarkError("\(who) stored \(found) (rows, sums), expected \(expected)") }
    }

    // MARK: W2 fetch

    /// A store of `count` rows in each contender's schema, written with raw SQLite for speed, in files named after
    /// `name`.
    func populated(count: Int, name: String = "w2") throws -> (plain: String, graph: String) {
        let plain = try freshPath("\(name)-plain")
        let raw = try RawSQLite(path: plain)
        try raw.execute(plainSchema)
        try raw.insertRows(count, table: "item")
        raw.close()
        let graph = try freshPath("\(name)-graph")
        _ = try PersistentStoreCoordinator(model: Self.model, storeURL: URL(fileURLWithPath: graph))
        let rawGraph = try RawSQLite(path: graph)
        try rawGraph.execute("BEGIN")
        let statement = try rawGraph.prepare("INSERT INTO Item (\"row.id\", \"row.entity\", \"row.version\", a0, a1, a2, a3, a4, a5, a6, a7, a8, a9) VALUES (?, 'Item', 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        for row in 0..<count {
            sqlite3_bind_int64(statement, 1, Int64(row + 1))
            for column in 0..<10 { sqlite3_bind_int64(statement, Int32(column + 2), Int64(row * 10 + column)) }
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkError("populating \(graph) failed") }
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        try rawGraph.execute("UPDATE \"objectgraph.sequence\" SET max_key = \(count) WHERE entity = 'Item'")
        try rawGraph.execute("COMMIT")
        rawGraph.close()
        return (plain, graph)
    }

    /// W2's wall and CPU rows.
    func fetch(count: Int, label: String) async throws -> [BenchmarkReport.Row] {
        let fixture = try FetchFixture(suite: self, count: count, name: "w2")
        let samples = try await fetchSamples(fixture, contenders: options.contenders, repetitions: options.repetitions)
        // Judged against raw objects, not raw SQLite: plain Swift objects alone cost about twice raw SQLite's read.
        return BenchmarkReport.Row.wallAndCPU(label, samples, target: .ratioToObjects(1.1), cpuTarget: .ratioToObjects(1.3),
                                              cpuNote: "every thread: a large fetch reads ahead on a second one")
    }

    /// A populated store of `count` rows and an ObjectGraph context on it, kept across repetitions.
    struct FetchFixture {
        let count: Int
        let plain: String
        let context: ObjectContext

        init(suite: BenchmarkSuite, count: Int, name: String) throws {
            let (plain, graph) = try suite.populated(count: count, name: name)
            let coordinator = try PersistentStoreCoordinator(model: BenchmarkSuite.model, storeURL: URL(fileURLWithPath: graph))
            self.count = count
            self.plain = plain
            self.context = ObjectContext(coordinator: coordinator, name: "bench")
        }

        /// The sum of every value the rows hold (`row * 10 + column`), which each contender must read back.
        var expectedSum: Int64 { Int64(count) * Int64(count * 10 - 1) * 10 / 2 }
    }

    /// Each contender's times for reading every row of `fixture` and all ten values, `repetitions` times after one
    /// untimed warm-up.
    func fetchSamples(_ fixture: FetchFixture, contenders: Set<String>, repetitions: Int) async throws -> Samples {
        let (plain, context, expected) = (fixture.plain, fixture.context, fixture.expectedSum)
        var samples = Samples()
        let pool = try DatabasePool(path: plain)
        for repetition in 0...repetitions {
            var taken = Samples()
            if contenders.contains("raw") {
                let raw = try RawSQLite(path: plain, fair: true)
                var sum: Int64 = 0
                taken.add(try Measure.timed { sum = try raw.readAll(table: "item") }, for: "raw")
                raw.close()
                try check(sum, expected, "raw")
            }
            for baseline in BenchmarkReport.objectBaselines where contenders.contains(baseline) {
                let raw = try RawSQLite(path: plain, fair: true)
                let readingAhead = baseline == BenchmarkReport.objectBaselineReadAhead
                var sum: Int64 = 0
                taken.add(try Measure.timed { sum = try raw.readAllAsObjects(table: "item", readingAhead: readingAhead) }, for: baseline)
                raw.close()
                try check(sum, expected, baseline)
            }
            if contenders.contains("GRDB rows") {
                var sum: Int64 = 0
                taken.add(try Measure.timed {
                    try pool.read { db in
                        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 FROM item"))
                        while let row = try rows.next() { for column in 0..<10 { sum &+= row[column] as Int64 } }
                    }
                }, for: "GRDB rows")
                try check(sum, expected, "GRDB rows")
            }
            if contenders.contains("GRDB records") {
                var sum: Int64 = 0
                taken.add(try Measure.timed {
                    let records = try pool.read { db in try ItemRecord.fetchAll(db) }
                    for r in records { sum &+= r.a0 &+ r.a1 &+ r.a2 &+ r.a3 &+ r.a4 &+ r.a5 &+ r.a6 &+ r.a7 &+ r.a8 &+ r.a9 }
                }, for: "GRDB records")
                try check(sum, expected, "GRDB records")
            }
            if contenders.contains("ObjectGraph") {
                let (sample, sum) = try await Measure.timed(on: context) { ctx in
                    var total: Int64 = 0
                    for item in try ctx.fetch(Item.fetchRequest(), as: Item.self) {
                        total &+= item.a0 &+ item.a1 &+ item.a2 &+ item.a3 &+ item.a4 &+ item.a5 &+ item.a6 &+ item.a7 &+ item.a8 &+ item.a9
                    }
                    ctx.reset()
                    return total
                }
                taken.add(sample, for: "ObjectGraph")
                try check(sum, expected, "ObjectGraph")
            }
            if let peer, contenders.contains(peer.name) {
                var sum: Int64 = 0
                try await peer.open(path: plain)
                taken.add(try await Measure.timed { sum = try await peer.sumOfItems() }, for: peer.name)
                try await peer.close()
                try check(sum, expected, peer.name)
            }
            if repetition > 0 { samples = samples + taken }
        }
        return samples
    }

    func check(_ sum: Int64, _ expected: Int64, _ who: String) throws {
        guard sum == expected else { throw BenchmarkError("\(who) read a sum of \(sum), expected \(expected)") }
    }

    // MARK: W3 indexed lookup

    func lookups() async throws -> [BenchmarkReport.Row] {
        let (plain, graph) = try populated(count: options.fetchCount)
        var random = SystemRandomNumberGenerator()
        let keys = (0..<options.lookups).map { _ in Int64.random(in: 0..<Int64(options.fetchCount), using: &random) * 10 }
        var latencies: [String: [Double]] = [:]
        // The process's CPU time over each contender's loop, per lookup (GRDB's two kinds share one loop).
        var cpu: [String: Double] = [:]
        let contenders = options.contenders
        if contenders.contains("raw") {
            let raw = try RawSQLite(path: plain, fair: true)
            let statement = try raw.prepare("SELECT id, a1 FROM item WHERE a0 = ? LIMIT 1")
            let cpuStart = Measure.cpuSeconds()
            for key in keys {
                latencies["raw", default: []].append(Measure.seconds { _ = raw.lookup(key, statement: statement) })
            }
            cpu["raw"] = (Measure.cpuSeconds() - cpuStart) / Double(keys.count)
            sqlite3_finalize(statement)
            raw.close()
        }
        if !contenders.isDisjoint(with: ["GRDB rows", "GRDB records"]) {
            let grdb = try grdbLookups(path: plain, keys: keys)
            for (name, values) in [("GRDB rows", grdb.rows), ("GRDB records", grdb.records)] where contenders.contains(name) {
                latencies[name] = values
            }
        }
        if contenders.contains("ObjectGraph") {
            let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: URL(fileURLWithPath: graph))
            let context = ObjectContext(coordinator: coordinator, name: "bench")
            let cpuStart = Measure.cpuSeconds()
            let graphLatencies = try await context.perform { ctx in try Self.lookupLatencies(keys, in: ctx) }
            cpu["ObjectGraph"] = (Measure.cpuSeconds() - cpuStart) / Double(keys.count)
            latencies["ObjectGraph"] = graphLatencies
        }
        if let peer, contenders.contains(peer.name) {
            try await peer.open(path: plain)
            let cpuStart = Measure.cpuSeconds()
            for key in keys {
                var found: Int64?
                latencies[peer.name, default: []].append(try await Measure.seconds { found = try await peer.lookUp(a0: key) })
                guard found == key + 1 else { throw BenchmarkError("\(peer.name)'s lookup of \(key) read \(found.map(String.init) ?? "nothing")") }
            }
            cpu[peer.name] = (Measure.cpuSeconds() - cpuStart) / Double(keys.count)
            try await peer.close()
        }
        let cold = try await coldLookups(path: graph)
        return [
            BenchmarkReport.Row(workload: "W3 lookup median", unit: "µs", values: latencies.mapValues { Measure.median($0) * 1e6 }, target: .ratio(2)),
            BenchmarkReport.Row(workload: "W3 lookup p99", unit: "µs", values: latencies.mapValues { Measure.percentile($0, 0.99) * 1e6 }),
            BenchmarkReport.Row(workload: "W3 lookup CPU", unit: "µs", values: cpu.mapValues { $0 * 1e6 },
                                note: "the process's CPU time over the loop, per lookup", target: .ratio(2)),
            BenchmarkReport.Row(workload: "W3 cold lookup median", unit: "µs", values: cold.mapValues { Measure.median($0) * 1e6 },
                                note: "W4's main-actor lookup, each after the caches are flushed"),
        ]
    }

    /// ObjectGraph's W3: each of `keys` looked up by `a0` as an app would, one wall time per lookup. `store` names
    /// the store in the error a missing row throws.
    package static func lookupLatencies(_ keys: [Int64], in ctx: isolated ObjectContext, store: String = "SQLite") throws -> [Double] {
        var result: [Double] = []
        for key in keys {
            result.append(try Measure.seconds {
                var request = try FetchRequest(entityName: "Item", format: "a0 == %lld", key)
                request.fetchLimit = 1
                guard let item = try ctx.fetch(request, as: Item.self).first, item.a0 == key else {
                    throw BenchmarkError("\(store): lookup of \(key) found nothing")
                }
            })
        }
        return result
    }

    /// W4's main-actor lookups on `path`, each run right after writing over more memory than the caches hold: what a
    /// query costs when it finds nothing of itself in cache, as after W4's 2 ms sleep beside an import, but without
    /// the import's own noise. The contenders take turns, so a change in the machine's state moves them alike.
    @MainActor
    func coldLookups(path: String) throws -> [String: [Double]] {
        let stack = try DataStack(databaseFileName: path, model: Self.model, layout: .nested)
        let queries = try BenchmarkReport.contenders.filter(options.contenders.contains).map { try MainActorLookup(contender: $0, path: path) }
        defer { queries.forEach { $0.close() } }
        // More than the last-level cache of the machines this runs on (36 MB here): flushing only the core's own
        // caches left these lookups at a third of what W4 sees.
        var flush = [UInt8](repeating: 0, count: 48 << 20)
        var latencies: [String: [Double]] = [:]
        for round in 0..<options.coldLookups {
            for query in queries {
                flush.withUnsafeMutableBytes { bytes in
                    for offset in stride(from: 0, to: bytes.count, by: 64) { bytes[offset] &+= UInt8(truncatingIfNeeded: round) }
                }
                latencies[query.contender, default: []].append(try Measure.seconds { try query.run(in: stack) })
            }
        }
        return latencies
    }

    // MARK: W4 the seeds' stack

    /// The stack's import (a worker's insert saved up to disk) while the main actor looks one object up every 2 ms,
    /// as a screen would. The import is always ObjectGraph's; the contenders differ in the main actor's lookup, so
    /// the busy share can be read against what SQLite alone costs there: a lookup after a 2 ms sleep runs with cold
    /// caches and costs several times what the same lookup costs in a loop (W3).
    @MainActor
    func stack() async throws -> [BenchmarkReport.Row] {
        var rows: [BenchmarkReport.Row] = []
        // In the report's order: `options.contenders` is a set, whose order would change from run to run.
        let lookups = BenchmarkReport.contenders.filter(options.contenders.contains)
        for layout in DataStack.Layout.allCases {
            var times: [Double] = []
            var busy: [String: [Double]] = [:]
            var occupied: [String: [Double]] = [:]
            var late: [String: [Double]] = [:]
            var stalls: [String: [Double]] = [:]
            var queryTimes: [String: [Double]] = [:]
            for _ in 0..<options.repetitions {
                for contender in lookups {
                    let (elapsed, monitor) = try await importWatched(layout: layout, lookup: contender)
                    if contender == "ObjectGraph" { times.append(elapsed) }
                    busy[contender, default: []].append(monitor.busy / max(monitor.span, 1e-9) * 100)
                    occupied[contender, default: []].append(monitor.occupancy * 100)
                    late[contender, default: []].append(monitor.lateness / max(monitor.span, 1e-9) * 100)
                    stalls[contender, default: []].append(monitor.maxStall * 1000)
                    queryTimes[contender, default: []].append(Measure.median(monitor.queryTimes) * 1e6)
                }
            }
            let label = "W4 \(layout.rawValue)"
            if !times.isEmpty {
                let note = String(format: "main occupied %.1f%%, max stall %.1f ms",
                                  Measure.median(occupied["ObjectGraph"] ?? []), Measure.median(stalls["ObjectGraph"] ?? []))
                rows.append(BenchmarkReport.Row(workload: "\(label) insert \(options.insertCount)", unit: "s",
                                                values: ["ObjectGraph": Measure.median(times)], note: note))
            }
            // The late wakes are mostly the host's: the spread of ObjectGraph's distance to raw SQLite, pair by pair (the
            // contenders take turns within a repetition), says how far one run's verdict can be trusted.
            var occupiedNote = "the lookups' CPU time plus the timer's late wakes, over the import"
            if let graph = occupied["ObjectGraph"], let raw = occupied["raw"], !graph.isEmpty, graph.count == raw.count {
                let distances = zip(graph, raw).map { $0 - $1 }
                occupiedNote += String(format: "; ObjectGraph less raw by repetition: %+.1f to %+.1f points, median %+.1f, over %d",
                                       distances.min()!, distances.max()!, Measure.median(distances), distances.count)
            }
            rows.append(BenchmarkReport.Row(workload: "\(label) main occupied", unit: "%", values: occupied.mapValues(Measure.median),
                                            note: occupiedNote, target: .aboveRaw(points: layout == .siblings ? 0.5 : 1)))
            rows.append(BenchmarkReport.Row(workload: "\(label) main late wakes", unit: "%", values: late.mapValues(Measure.median),
                                            note: "how late the 2 ms timer woke, summed, over the import"))
            rows.append(BenchmarkReport.Row(workload: "\(label) lookups' share", unit: "%", values: busy.mapValues(Measure.median),
                                            note: "the lookups' own times summed, over the import"))
            rows.append(BenchmarkReport.Row(workload: "\(label) lookup median", unit: "µs", values: queryTimes.mapValues(Measure.median),
                                            note: "one main-actor lookup during the import"))
            // The import is ObjectGraph's whichever lookup runs: its stalls are reported, not compared with raw's.
            rows.append(BenchmarkReport.Row(workload: "\(label) max stall", unit: "ms", values: ["ObjectGraph": Measure.median(stalls["ObjectGraph"] ?? [])],
                                            note: "the longest late wake with ObjectGraph's lookup", target: .atMost(16)))
        }
        return rows
    }

    /// Imports through a fresh stack of `layout` (once, or as many times in a row as ``Options/leastWatchedImport``
    /// needs), with the main actor running `lookup`'s query meanwhile; `elapsed` is one import's time.
    @MainActor
    func importWatched(layout: DataStack.Layout, lookup: String) async throws -> (elapsed: Double, monitor: MainThreadSampler) {
        let path = try freshPath("w4-\(layout.rawValue)")
        let stack = try DataStack(databaseFileName: path, model: Self.model, layout: layout)
        let query = try MainActorLookup(contender: lookup, path: path)
        defer { query.close() }
        // Warm-up: the first lookup opens connections and prepares statements, which no later one pays.
        try query.run(in: stack)
        let count = options.insertCount
        let monitor = MainThreadSampler()
        let sampler = Task { @MainActor in try await monitor.run { try query.run(in: stack) } }
        let start = ContinuousClock.now
        var imports = 0
        repeat {
            let first = imports * count
            try await stack.background { ctx in
                for row in first..<(first + count) { try ctx.insert(Item.self).fill(row) }
            }
            imports += 1
        } while (ContinuousClock.now - start).seconds < options.leastWatchedImport
        let elapsed = (ContinuousClock.now - start).seconds / Double(imports)
        monitor.stop()
        try await sampler.value as Void
        let stored = try await stack.onMainContext { ctx in try ctx.count(for: Item.fetchRequest()) }
        guard stored == count * imports else {
            throw BenchmarkError("W4 \(layout): \(stored) of \(count * imports) objects stored")
        }
        return (elapsed, monitor)
    }

    // MARK: W5 memory

    /// W5, in a fresh process when ``Options/freshProcessCommand`` names one (memory freed by earlier workloads
    /// would otherwise already be resident, and hide part of the growth), else in this one.
    func memory() async throws -> BenchmarkReport.Row {
        let count = options.memoryCount
        let batched: Double
        let unbatched: Double
        let place: String
        if let command = options.freshProcessCommand, let executable = command.first {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = Array(command.dropFirst()) + ["\(count)", options.folder.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
            guard process.terminationStatus == 0, fields.count == 2 else {
                throw BenchmarkError("W5's process exited with \(process.terminationStatus) and printed \(String(decoding: data, as: UTF8.self))")
            }
            (batched, unbatched) = (fields[0], fields[1])
            place = "a fresh process"
        } else {
            (batched, unbatched) = try await memoryGrowth(count: count)
            place = "this process"
        }
        return BenchmarkReport.Row(workload: "W5 read \(count) peak RSS growth", unit: "MB", values: ["ObjectGraph": batched],
                                   note: String(format: "batched 1,000, in %@; unbatched: %.0f MB", place, unbatched), target: .atMost(40))
    }

    /// W5's measure: the peak growth of resident memory, in MB, reading `count` objects batched by 1,000, then all
    /// at once. What a fresh process runs.
    public func memoryGrowth(count: Int) async throws -> (batched: Double, unbatched: Double) {
        let (_, graph) = try populated(count: count)
        let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: URL(fileURLWithPath: graph))
        let context = ObjectContext(coordinator: coordinator, name: "bench")
        let (batched, unbatched) = try await context.perform { ctx -> (Double, Double) in
            var request = Item.fetchRequest()
            request.fetchBatchSize = 1_000
            var base = Measure.residentBytes()
            var peak = base
            var sum: Int64 = 0
            for (index, item) in try ctx.fetchResults(request, as: Item.self).enumerated() {
                sum &+= item.a0
                if index % 10_000 == 0 { peak = max(peak, Measure.residentBytes()) }
            }
            peak = max(peak, Measure.residentBytes())
            let batched = Double(peak - base) / 1_048_576
            ctx.reset()
            base = Measure.residentBytes()
            peak = base
            let all = try ctx.fetch(Item.fetchRequest(), as: Item.self)
            for (index, item) in all.enumerated() {
                sum &+= item.a0
                if index % 10_000 == 0 { peak = max(peak, Measure.residentBytes()) }
            }
            peak = max(peak, Measure.residentBytes())
            guard sum == 2 * Int64(count) * Int64(count - 1) * 10 / 2 else { throw BenchmarkError("W5 read the wrong sum \(sum)") }
            return (batched, Double(peak - base) / 1_048_576)
        }
        return (batched, unbatched)
    }

    // MARK: W6 scaling

    /// W1 and W2 at each of ``Options/scalingSizes``, interleaved: every round measures every size (so a change in
    /// the machine's state between minutes moves all sizes alike rather than one size's median), and a small size
    /// repeats up to five times a round (its repetition lasts milliseconds, short enough for one pause to move it).
    func scaling() async throws -> [BenchmarkReport.Row] {
        let contenders = options.contenders.intersection(["raw", "ObjectGraph"])
        let sizes = options.scalingSizes
        var fixtures: [Int: FetchFixture] = [:]
        for size in sizes { fixtures[size] = try FetchFixture(suite: self, count: size, name: "w6-\(size)") }
        var inserts: [Int: Samples] = [:]
        var fetches: [Int: Samples] = [:]
        for _ in 0..<options.repetitions {
            for size in sizes {
                let times = min(5, max(1, 100_000 / size))
                inserts[size] = (inserts[size] ?? Samples()) + (try await insertSamples(count: size, contenders: contenders, repetitions: times))
                fetches[size] = (fetches[size] ?? Samples()) + (try await fetchSamples(fixtures[size]!, contenders: contenders, repetitions: times))
            }
        }
        func perObject(_ samples: Samples?, _ size: Int, cpu: Bool = false) -> [String: Double] {
            ((cpu ? samples?.cpu : samples?.wall) ?? [:]).mapValues { $0 / Double(size) * 1e9 }
        }
        // The largest size is judged against the smallest: the cost per object stays flat.
        let smallest = sizes.min() ?? 0
        return sizes.flatMap { size in
            [("insert", inserts), ("fetch", fetches)].flatMap { kind, samples in [
                BenchmarkReport.Row(workload: "W6 \(kind) \(size)", unit: "ns/object", values: perObject(samples[size], size),
                                    target: size == sizes.max() && size != smallest ? .flat(reference: "W6 \(kind) \(smallest)", factor: 1.5) : nil),
                BenchmarkReport.Row(workload: "W6 \(kind) \(size) CPU", unit: "ns/object", values: perObject(samples[size], size, cpu: true)),
            ] }
        }
    }
}

/// Samples how available the main actor stays: wakes every 2 ms, runs a small main-context call, records lateness.
@MainActor
final class MainThreadSampler {
    private(set) var maxStall: Double = 0
    /// Each query's time, in seconds: their median is what one query costs beside the import, which the busy share
    /// multiplies by the cadence.
    private(set) var queryTimes: [Double] = []
    /// The time the queries took in all.
    var busy: Double { queryTimes.reduce(0, +) }
    private var running = true

    /// How late the timer woke in all: the time the main thread was busy with other work (W8's diffs), or waited
    /// for a core.
    private(set) var lateness: Double = 0
    /// The CPU time the queries took, each read on the thread that ran it: the main actor's jobs need not all run
    /// on one thread (on Linux they do not once `main` has awaited), so a thread's clock read at the start and the
    /// end of the sampling could be two threads'.
    private(set) var queryCPU: Double = 0
    /// How long the sampler ran.
    private(set) var span: Double = 0
    /// How occupied the main actor was over the sampler's span: the CPU time of its queries, plus how late its
    /// timer woke (the time it spent on anything else, or waiting for a core).
    var occupancy: Double { span > 0 ? (queryCPU + lateness) / span : 0 }

    func stop() { running = false }

    func run(_ query: @MainActor () throws -> Void) async throws {
        let clock = ContinuousClock()
        let started = clock.now
        defer { span = (clock.now - started).seconds }
        while running {
            let asleep = clock.now
            try await Task.sleep(for: .milliseconds(2))
            let awake = clock.now
            let late = max(0, (awake - asleep - .milliseconds(2)).seconds)
            maxStall = max(maxStall, late)
            lateness += late
            let cpu = Measure.threadCPUSeconds()
            try query()
            queryCPU += Measure.threadCPUSeconds() - cpu
            queryTimes.append((clock.now - awake).seconds)
        }
    }
}

/// The main actor's small query in W4, one per contender: one object by an indexed value (`a0 == 10`).
///
/// The contender is resolved once, into what its query needs: matching its name on every query cost each contender a
/// different number of string comparisons (the last one three), which the busy share would count as its own.
@MainActor
final class MainActorLookup {
    let contender: String
    private enum Query {
        case raw(connection: RawSQLite, statement: OpaquePointer)
        case grdbRows(DatabasePool)
        case grdbRecords(DatabasePool)
        case objectGraph
        case closed
    }
    private var query: Query

    init(contender: String, path: String) throws {
        self.contender = contender
        switch contender {
        case "raw":
            let connection = try RawSQLite(path: path, fair: true)
            query = .raw(connection: connection, statement: try connection.prepare("SELECT * FROM \"Item\" WHERE a0 = ? LIMIT 1"))
        case "GRDB rows":
            query = .grdbRows(try DatabasePool(path: path))
        case "GRDB records":
            query = .grdbRecords(try DatabasePool(path: path))
        case "ObjectGraph":
            query = .objectGraph
        default:
            throw BenchmarkError("no contender named \(contender)")
        }
    }

    func run(in stack: DataStack) throws {
        switch query {
        case .raw(let connection, let statement): _ = connection.lookup(10, statement: statement)
        case .grdbRows(let queue): _ = try grdbLookupRow(queue)
        case .grdbRecords(let queue): _ = try grdbLookupRecord(queue)
        case .objectGraph: _ = try Item.one(in: stack, where: "a0 == %lld", Int64(10))
        case .closed: throw BenchmarkError("\(contender)'s lookup ran after it was closed")
        }
    }

    func close() {
        if case .raw(let connection, let statement) = query {
            sqlite3_finalize(statement)
            connection.close()
        }
        query = .closed
    }
}

/// Synchronous GRDB calls, kept out of async functions where GRDB's async overloads would be chosen.
func createPlainSchema(_ writer: some DatabaseWriter) throws {
    try writer.write { try $0.execute(sql: plainSchema) }
}

func grdbLookups(path: String, keys: [Int64]) throws -> (rows: [Double], records: [Double]) {
    let pool = try DatabasePool(path: path)
    return try pool.read { db in
        var rows: [Double] = []
        var records: [Double] = []
        for key in keys {
            rows.append(try Measure.seconds {
                _ = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, a1 FROM item WHERE a0 = ? LIMIT 1"), arguments: [key])
            })
            records.append(try Measure.seconds { _ = try ItemRecord.filter(Column("a0") == key).fetchOne(db) })
        }
        return (rows, records)
    }
}

func grdbLookupRow(_ queue: DatabasePool) throws -> Row? {
    try queue.read { db in try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM \"Item\" WHERE a0 = ? LIMIT 1"), arguments: [Int64(10)]) }
}

func grdbLookupRecord(_ queue: DatabasePool) throws -> ItemRecord? {
    try queue.read { db in try ItemRecord.filter(Column("a0") == Int64(10)).fetchOne(db) }
}

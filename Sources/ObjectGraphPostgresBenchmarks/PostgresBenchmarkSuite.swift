import Foundation
import Logging
import ObjectGraph
import ObjectGraphBenchmarks
import ObjectGraphPostgres
import PostgresNIO

/// W1, W2, W3, W9 and W11-W13 on PostgreSQL: ObjectGraph's PostgreSQL store against raw postgres-nio (async/await on
/// one connection, as its documentation shows) running the same statements on tables of the same layout, in one run.
///
/// Each contender works in a database of its own, created and dropped by the suite on the server the URL names
/// (its role must be allowed to create databases).
public struct PostgresBenchmarkSuite: Sendable {
    public struct Options: Sendable {
        /// A database on the server, used to create and drop the benchmark's own.
        public var url: String
        public var insertCount = 50_000
        public var fetchCount = 200_000
        public var lookups = 2_000
        /// Saves whose announcement to another host's coordinator is timed.
        public var notices = 200
        /// W11-W13's books (authors are a tenth of them); W12 changes and W13 deletes ``graphChanges`` of them.
        public var graphBooks = 200_000
        public var graphChanges = 50_000
        /// W9's batch insert and update; its batch delete takes ``graphChanges`` books of the graph.
        public var batchCount = 200_000
        public var repetitions = 5
        /// The workloads to run (W1, W2, W3, W9, W11, W12, W13; W2 and W3 run together, and so do W11-W13); all
        /// when empty.
        public var workloads: Set<String> = []

        public init(url: String) { self.url = url }

        /// A run that checks every workload works, in seconds.
        public static func tiny(url: String) -> Options {
            var options = Options(url: url)
            options.insertCount = 500
            options.fetchCount = 1_000
            options.lookups = 20
            options.notices = 5
            options.graphBooks = 1_000
            options.graphChanges = 250
            options.batchCount = 1_000
            options.repetitions = 1
            return options
        }
    }

    let options: Options
    let log: @Sendable (String) -> Void
    static let model: Model = try! Model([Item.self])
    /// Rows per INSERT: as many as the store's save puts in one statement for this table (30,000 bound values).
    static let rowsPerInsert = 30_000 / 12
    static let logger = Logger(label: "ObjectGraph.PostgresBenchmarks")

    public init(options: Options, log: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }) {
        self.options = options
        self.log = log
    }

    public func run() async throws -> BenchmarkReport {
        var report = BenchmarkReport()
        func selected(_ names: String...) -> Bool { options.workloads.isEmpty || !options.workloads.isDisjoint(with: names) }
        if selected("W1") { try await insertRows(into: &report) }
        if selected("W2", "W3") { try await readRows(into: &report) }
        if options.workloads.isEmpty { try await noticeRows(into: &report) }
        if selected("W9", "W11", "W12", "W13") { try await makeGraphTemplate() }
        if selected("W9") { try await batchRows(into: &report) }
        if selected("W11", "W12", "W13") { report.rows += try await graph() }
        return report
    }

    func insertRows(into report: inout BenchmarkReport) async throws {
        log("PostgreSQL W1: insert \(options.insertCount)")
        let insert = try await insertSamples(count: options.insertCount)
        report.rows.append(.init(workload: "PG W1 insert \(options.insertCount)", unit: "s", values: insert.wall, target: .ratio(1.5)))
        report.rows.append(.init(workload: "PG W1 insert CPU", unit: "s", values: insert.cpu, note: "this process only; the server's is apart"))
    }

    func readRows(into report: inout BenchmarkReport) async throws {
        log("PostgreSQL W2, W3: fetch \(options.fetchCount), \(options.lookups) lookups")
        let (fetch, lookups) = try await readSamples(count: options.fetchCount)
        report.rows.append(.init(workload: "PG W2 fetch \(options.fetchCount)", unit: "s", values: fetch.wall, target: .ratio(1.5)))
        report.rows.append(.init(workload: "PG W2 fetch CPU", unit: "s", values: fetch.cpu, note: "this process only"))
        report.rows.append(.init(workload: "PG W3 lookup median", unit: "µs", values: lookups.mapValues { Measure.median($0) * 1e6 }, target: .ratio(1.5)))
        report.rows.append(.init(workload: "PG W3 lookup p99", unit: "µs", values: lookups.mapValues { Measure.percentile($0, 0.99) * 1e6 }))
    }

    func noticeRows(into report: inout BenchmarkReport) async throws {
        log("PostgreSQL: another host's saves heard, \(options.notices) times")
        let heard = try await noticeLatencies(count: options.notices)
        report.rows.append(.init(
            workload: "PG another host's save heard, median", unit: "ms", values: ["ObjectGraph": Measure.median(heard) * 1e3],
            note: "from the save's return to the watching coordinator's notification", target: .atMost(100)))
        report.rows.append(.init(
            workload: "PG another host's save heard, p99", unit: "ms", values: ["ObjectGraph": Measure.percentile(heard, 0.99) * 1e3],
            target: .atMost(100)))
    }

    // MARK: Databases

    func configuration(_ database: String) throws -> PostgresStoreConfiguration {
        var configuration = try PostgresStoreConfiguration(url: options.url)
        configuration.database = database
        configuration.queryTimeout = .seconds(600)
        return configuration
    }

    func connect(_ database: String) async throws -> PostgresConnection {
        let configuration = try configuration(database)
        return try await PostgresConnection.connect(
            configuration: PostgresConnection.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username, password: configuration.password,
                database: configuration.database, tls: .disable),
            id: 1, logger: Self.logger)
    }

    /// Drops and creates `name` on the server.
    ///
    /// With a `template`, `name` is created as a copy of it, after ending whatever sessions are still connected to
    /// the template (a store's pool closes its connections asynchronously once it goes).
    func freshDatabase(_ name: String, template: String? = nil) async throws {
        let admin = try await connect(try PostgresStoreConfiguration(url: options.url).database)
        defer { Task { try? await admin.close() } }
        _ = try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: Self.logger)
        guard let template else {
            _ = try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Self.logger)
            return
        }
        _ = try await admin.query(PostgresQuery(unsafeSQL: """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(template)' AND pid <> pg_backend_pid()
            """), logger: Self.logger)
        _ = try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE \(template)"), logger: Self.logger)
    }

    /// A coordinator over a new PostgreSQL store of `model` on `database`.
    func makeCoordinator(on database: String, model: Model) throws -> PersistentStoreCoordinator {
        PersistentStoreCoordinator(model: model, store: try PostgresStore(configuration: try configuration(database), model: model))
    }

    /// A context over a new PostgreSQL store of `model` on `database`.
    func makeContext(on database: String, model: Model) throws -> ObjectContext {
        ObjectContext(coordinator: try makeCoordinator(on: database, model: model), name: "bench")
    }

    /// The raw contender's table: the store's layout for `Item`, and its index.
    static let rawSchema = [
        #"CREATE TABLE "Item" ("row.id" BIGINT PRIMARY KEY, "row.entity" TEXT NOT NULL, "row.version" BIGINT NOT NULL DEFAULT 1, "#
            + (0..<10).map { "a\($0) BIGINT" }.joined(separator: ", ") + ")",
        #"CREATE INDEX "Item(a0)" ON "Item"(a0)"#,
    ]

    /// Raw postgres-nio's W1: the store's statements for the same rows, in one transaction.
    static func rawInsert(_ connection: PostgresConnection, count: Int) async throws {
        _ = try await connection.query("BEGIN", logger: logger)
        for start in stride(from: 0, to: count, by: rowsPerInsert) {
            let rows = start..<min(start + rowsPerInsert, count)
            var binds = PostgresBindings(capacity: rows.count * 12)
            var tuples: [String] = []
            for row in rows {
                let first = binds.count
                tuples.append("(" + (1...12).map { "$\(first + $0)" }.joined(separator: ", ") + ")")
                binds.append(Int64(row + 1))
                binds.append("Item")
                for column in 0..<10 { binds.append(Int64(row * 10 + column)) }
            }
            let names = (["row.id", "row.entity"] + (0..<10).map { "a\($0)" }).map { "\"\($0)\"" }.joined(separator: ", ")
            _ = try await connection.query(
                PostgresQuery(unsafeSQL: "INSERT INTO \"Item\" (\(names)) VALUES \(tuples.joined(separator: ", "))", binds: binds), logger: logger)
        }
        _ = try await connection.query("COMMIT", logger: logger)
    }

    func check(_ found: Int64, _ expected: Int64, _ who: String) throws {
        guard found == expected else { throw BenchmarkError("PostgreSQL: \(who) read a sum of \(found), expected \(expected)") }
    }

    static func expectedSum(_ count: Int) -> Int64 { Int64(count) * Int64(count * 10 - 1) * 10 / 2 }

    // MARK: W1

    func insertSamples(count: Int) async throws -> Samples {
        var samples = Samples()
        for repetition in 0...options.repetitions {
            var taken = Samples()
            try await freshDatabase("og_bench_raw")
            let connection = try await connect("og_bench_raw")
            for statement in Self.rawSchema { _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Self.logger) }
            taken.add(try await Measure.timed { try await Self.rawInsert(connection, count: count) }, for: "raw")
            try check(try await rawSum(connection), Self.expectedSum(count), "raw")
            try await connection.close()

            try await freshDatabase("og_bench_graph")
            let context = try makeContext(on: "og_bench_graph", model: Self.model)
            taken.add(try await Measure.timed {
                try await context.perform { ctx in
                    for row in 0..<count { try ctx.insert(Item.self).fill(row) }
                    try ctx.save()
                    ctx.reset()
                }
            }, for: "ObjectGraph")
            let stored = try await context.perform { ctx in try Self.graphSum(ctx) }
            try check(stored, Self.expectedSum(count), "ObjectGraph")
            // The first round warms code, caches and the server up for both, and is not counted.
            if repetition > 0 { samples = samples + taken }
        }
        return samples
    }

    func rawSum(_ connection: PostgresConnection) async throws -> Int64 {
        var sum: Int64 = 0
        let rows = try await connection.query(
            #"SELECT "row.id", "row.entity", "row.version", a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 FROM "Item""#, logger: Self.logger)
        for try await row in rows {
            let cells = row.makeRandomAccess()
            for column in 3..<13 { sum &+= try cells[column].decode(Int64.self) }
        }
        return sum
    }

    static func graphSum(_ ctx: isolated ObjectContext) throws -> Int64 {
        var total: Int64 = 0
        for item in try ctx.fetch(Item.fetchRequest(), as: Item.self) {
            total &+= item.a0 &+ item.a1 &+ item.a2 &+ item.a3 &+ item.a4 &+ item.a5 &+ item.a6 &+ item.a7 &+ item.a8 &+ item.a9
        }
        ctx.reset()
        return total
    }

    // MARK: Other hosts

    /// For each of `count` saves on one coordinator, the time from the save's return until a second coordinator on
    /// the same database (another host, as far as the server can tell: a pool and a listening connection of its own)
    /// hands the transaction to its observers.
    func noticeLatencies(count: Int) async throws -> [Double] {
        try await freshDatabase("og_bench_notify")
        let configuration = try configuration("og_bench_notify")
        let writer = PersistentStoreCoordinator(model: Self.model, store: try PostgresStore(configuration: configuration, model: Self.model))
        let listener = try PersistentStoreCoordinator(
            model: Self.model, store: try PostgresStore(configuration: configuration, model: Self.model), watchesRemoteChanges: true)
        var heard = listener.remoteChangeNotifications().makeAsyncIterator()
        let context = ObjectContext(coordinator: writer, name: "writer")
        var latencies: [Double] = []
        for index in 0...count {
            let saved = try await context.perform { ctx in
                try ctx.insert(Item.self).fill(index)
                try ctx.save()
                return ContinuousClock.now
            }
            guard await heard.next() != nil else { throw BenchmarkError("PostgreSQL: the listening coordinator stopped hearing") }
            // The first save warms both up.
            if index > 0 { latencies.append((ContinuousClock.now - saved).seconds) }
        }
        return latencies
    }

    // MARK: W2 and W3

    func readSamples(count: Int) async throws -> (fetch: Samples, lookups: [String: [Double]]) {
        try await freshDatabase("og_bench_raw")
        let connection = try await connect("og_bench_raw")
        for statement in Self.rawSchema { _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Self.logger) }
        try await Self.rawInsert(connection, count: count)
        _ = try await connection.query(#"ANALYZE "Item""#, logger: Self.logger)
        try await freshDatabase("og_bench_graph")
        let context = try makeContext(on: "og_bench_graph", model: Self.model)
        try await context.perform { ctx in
            for row in 0..<count { try ctx.insert(Item.self).fill(row) }
            try ctx.save()
            ctx.reset()
        }
        // Both tables get the planner's statistics, as autovacuum would give them after a while.
        let graphConnection = try await connect("og_bench_graph")
        _ = try await graphConnection.query(#"ANALYZE "Item""#, logger: Self.logger)
        try await graphConnection.close()
        let expected = Self.expectedSum(count)
        var fetch = Samples()
        for repetition in 0...options.repetitions {
            var taken = Samples()
            var sum: Int64 = 0
            taken.add(try await Measure.timed { sum = try await rawSum(connection) }, for: "raw")
            try check(sum, expected, "raw")
            taken.add(try await Measure.timed { sum = try await context.perform { ctx in try Self.graphSum(ctx) } }, for: "ObjectGraph")
            try check(sum, expected, "ObjectGraph")
            if repetition > 0 { fetch = fetch + taken }
        }
        var random = SystemRandomNumberGenerator()
        let keys = (0..<options.lookups).map { _ in Int64.random(in: 0..<Int64(count), using: &random) * 10 }
        var lookups: [String: [Double]] = [:]
        for key in keys {
            lookups["raw", default: []].append(try await Measure.seconds {
                let rows = try await connection.query(
                    #"SELECT "row.id", a1 FROM "Item" WHERE a0 = \#(key) LIMIT 1"#, logger: Self.logger)
                var found = false
                for try await row in rows { found = try row.makeRandomAccess()[1].decode(Int64.self) == key + 1 }
                guard found else { throw BenchmarkError("PostgreSQL: raw lookup of \(key) found nothing") }
            })
        }
        lookups["ObjectGraph"] = try await context.perform { ctx in try BenchmarkSuite.lookupLatencies(keys, in: ctx, store: "PostgreSQL") }
        try await connection.close()
        return (fetch, lookups)
    }
}

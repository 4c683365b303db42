import Foundation
import GRDB
import ObjectGraph
import Synchronization

/// W7: migrating a store of ``BenchmarkSuite/Options/migrationCount`` rows, two ways, against raw SQLite doing the
/// same to a copy of the same file.
///
/// - Adding an optional attribute: the store's in-place step against `ALTER TABLE … ADD COLUMN`.
/// - Renaming an attribute, which rebuilds the table: the store's rebuild against `CREATE TABLE`,
///   `INSERT INTO new SELECT … FROM old`, `DROP TABLE` and `ALTER TABLE … RENAME` in one transaction.
///
/// Both are timed inside their transaction, before it commits: the store's time is the step's own
/// (``MigrationProgress/elapsed``), without opening the file or committing, and raw SQLite's from `BEGIN` to its
/// last statement. Each repetition migrates a fresh copy, and checks what it migrated.
extension BenchmarkSuite {
    /// The benchmark model with an optional attribute added.
    static let modelWithExtra: Model = {
        var entity = Item.entityDescription
        entity.attributes.append(AttributeDescription("extra", .string))
        return try! Model(entities: [entity])
    }()

    /// The benchmark model with `a1` renamed `b1` (no rule keeps the column, so the table is rebuilt).
    static let modelWithRename: Model = {
        var entity = Item.entityDescription
        entity.attributes[1].name = "b1"
        entity.attributes[1].renamingIdentifier = "a1"
        return try! Model(entities: [entity])
    }()

    func migration() async throws -> [BenchmarkReport.Row] {
        let count = options.migrationCount
        let (_, template) = try populated(count: count, name: "w7")
        var samples: [String: [String: [Double]]] = [:]
        for _ in 0..<options.repetitions {
            for (name, target) in [("add", Self.modelWithExtra), ("rebuild", Self.modelWithRename)] {
                let copy = try freshPath("w7-\(name)")
                try FileManager.default.copyItem(atPath: template, toPath: copy)
                let elapsed = Mutex<Double>(0)
                _ = try PersistentStoreCoordinator(versions: try SchemaVersions([Self.model, target]), storeURL: URL(fileURLWithPath: copy)) { progress in
                    elapsed.withLock { $0 = progress.elapsed.seconds }
                }
                try checkMigrated(copy, count: count, column: name == "add" ? "extra" : "b1")
                samples[name, default: [:]]["ObjectGraph", default: []].append(elapsed.withLock { $0 })
                let rawCopy = try freshPath("w7-\(name)-raw")
                try FileManager.default.copyItem(atPath: template, toPath: rawCopy)
                let raw = try RawSQLite(path: rawCopy)
                let seconds = try Measure.seconds {
                    try raw.execute("BEGIN IMMEDIATE")
                    if name == "add" {
                        try raw.execute("ALTER TABLE \"Item\" ADD COLUMN \"extra\" TEXT")
                    } else {
                        let columns = "\"row.id\", \"row.entity\", \"row.version\", a0, a1, a2, a3, a4, a5, a6, a7, a8, a9"
                        try raw.execute("""
                            CREATE TABLE "Item.new" ("row.id" INTEGER PRIMARY KEY, "row.entity" TEXT NOT NULL, "row.version" INTEGER NOT NULL DEFAULT 1,
                              a0 INTEGER, b1 INTEGER, a2 INTEGER, a3 INTEGER, a4 INTEGER, a5 INTEGER, a6 INTEGER, a7 INTEGER, a8 INTEGER, a9 INTEGER)
                            """)
                        try raw.execute("INSERT INTO \"Item.new\" SELECT \(columns) FROM \"Item\"")
                        try raw.execute("DROP TABLE \"Item\"")
                        try raw.execute("ALTER TABLE \"Item.new\" RENAME TO \"Item\"")
                        try raw.execute("CREATE INDEX \"Item(a0)\" ON \"Item\"(a0)")
                    }
                }
                // Committed outside the time, as the store's step is timed before its transaction commits.
                try raw.execute("COMMIT")
                raw.close()
                samples[name, default: [:]]["raw", default: []].append(seconds)
            }
        }
        return [
            BenchmarkReport.Row(workload: "W7 add attribute, \(count) rows", unit: "ms",
                                values: samples["add", default: [:]].mapValues { Measure.median($0) * 1e3 }, note: "ALTER TABLE ADD COLUMN in place"),
            BenchmarkReport.Row(workload: "W7 rebuild table, \(count) rows", unit: "ms",
                                values: samples["rebuild", default: [:]].mapValues { Measure.median($0) * 1e3 }, note: "INSERT … SELECT in one transaction", target: .ratio(2)),
        ]
    }

    /// Every row is there after the migration, and the migrated column holds what it should.
    private func checkMigrated(_ path: String, count: Int, column: String) throws {
        let queue = try DatabaseQueue(path: path)
        let (rows, sum) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \"Item\"") ?? 0,
             try Int64.fetchOne(db, sql: "SELECT TOTAL(\(column == "b1" ? "b1" : "0")) FROM \"Item\"").map { $0 } ?? 0)
        }
        try queue.close()
        guard rows == count else { throw BenchmarkError("W7 kept \(rows) of \(count) rows") }
        // b1 is a1 renamed: row r holds r * 10 + 1.
        if column == "b1", sum != Int64(count) * Int64(count - 1) * 5 + Int64(count) {
            throw BenchmarkError("W7's renamed column sums to \(sum)")
        }
    }
}

import Foundation
import GRDBSQLite
import ObjectGraph

/// W9: batch insert and batch update of ``BenchmarkSuite/Options/batchCount`` rows, against raw SQLite's best at the
/// same work; W10: what persistent history adds to W1.
///
/// Raw SQLite's best writes the same table (a copy of an empty store's file, so the same columns and index) in one
/// transaction, through a connection opened without SQLite's mutex, with WAL and `synchronous=NORMAL` as the store's
/// own connections, 64 rows per INSERT as the store writes them, and one `UPDATE … SET a1 = a1 + 1` moving each
/// row's version on, as the batch update does. Both contenders' results are checked after each repetition.
extension BenchmarkSuite {
    func batch() async throws -> [BenchmarkReport.Row] {
        let count = options.batchCount
        var samples: [String: Samples] = [:]
        for _ in 0..<options.repetitions {
            let empty = try freshPath("w9-empty")
            _ = try PersistentStoreCoordinator(model: Self.model, storeURL: URL(fileURLWithPath: empty))

            let graph = try freshPath("w9-graph")
            try FileManager.default.copyItem(atPath: empty, toPath: graph)
            let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: URL(fileURLWithPath: graph))
            let insert = BatchInsertRequest(entityName: "Item", keys: (0..<10).map { "a\($0)" }) { row in
                guard row.index < count else { return false }
                let base = Int64(row.index * 10)
                for column in 0..<10 { row[column] = .int(base + Int64(column)) }
                return true
            }
            samples["insert", default: Samples()].add(try Measure.timed { try coordinator.execute(insert) }, for: "ObjectGraph")
            let update = try BatchUpdateRequest(entityName: "Item", format: "TRUEPREDICATE", set: ["a1": "a1 + 1"])
            samples["update", default: Samples()].add(try Measure.timed { try coordinator.execute(update) }, for: "ObjectGraph")
            try checkBatch(graph, count: count)

            let rawPath = try freshPath("w9-raw")
            try FileManager.default.copyItem(atPath: empty, toPath: rawPath)
            let raw = try RawSQLite(path: rawPath, fair: true)
            samples["insert", default: Samples()].add(try Measure.timed { try raw.insertRows(count, table: "Item", storeTable: true) }, for: "raw")
            samples["update", default: Samples()].add(try Measure.timed {
                try raw.execute("UPDATE \"Item\" SET a1 = a1 + 1, \"row.version\" = \"row.version\" + 1")
            }, for: "raw")
            raw.close()
            try checkBatch(rawPath, count: count)
        }
        return ["insert", "update"].flatMap { kind in
            BenchmarkReport.Row.wallAndCPU(
                "W9 batch \(kind) \(count)", samples[kind]!, note: kind == "insert" ? "a closure fills the rows" : "a1 = a1 + 1, every row",
                target: .ratio(1.5))
        }
    }

    /// What W9 leaves in the table after inserting `count` rows and adding 1 to each `a1`: the row count, the sums
    /// of `a0` and `a1`, and the lowest and highest versions.
    package static func batchExpectation(count: Int) -> [Int64] {
        let rows = Int64(count)
        let sumA0 = 10 * rows * (rows - 1) / 2
        return [rows, sumA0, sumA0 + 2 * rows, 2, 2]
    }

    /// Every row stored once, with the values written and the update applied.
    private func checkBatch(_ path: String, count: Int) throws {
        let raw = try RawSQLite(path: path)
        defer { raw.close() }
        let found = try raw.integers("SELECT count(*), sum(a0), sum(a1), min(\"row.version\"), max(\"row.version\") FROM \"Item\"")
        let expected = Self.batchExpectation(count: count)
        guard found == expected else { throw BenchmarkError("\(path) holds \(found), expected \(expected)") }
    }

    /// W1's ObjectGraph save into a store recording history against one that does not, interleaved.
    func historyCost() async throws -> [BenchmarkReport.Row] {
        let count = options.insertCount
        var samples = Samples()
        for _ in 0..<options.repetitions {
            for recordsHistory in [false, true] {
                let url = URL(fileURLWithPath: try freshPath("w10-\(recordsHistory)"))
                let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: url, options: StoreOptions(recordsHistory: recordsHistory))
                let context = ObjectContext(coordinator: coordinator, name: "bench")
                let (sample, _) = try await Measure.timed(on: context) { ctx in
                    for row in 0..<count { try ctx.insert(Item.self).fill(row) }
                    try ctx.save()
                    ctx.reset()
                }
                samples.add(sample, for: recordsHistory ? "ObjectGraph" : "raw")
                if recordsHistory, try coordinator.history(after: nil).first?.insertedObjectIDs.count != count {
                    throw BenchmarkError("W10: the history does not list the \(count) inserts")
                }
            }
        }
        return BenchmarkReport.Row.wallAndCPU("W10 W1 with history", samples, note: "raw column: the same save without history", target: .ratio(1.15))
    }
}

import Foundation
import ObjectGraph
import ObjectGraphBenchmarks
import ObjectGraphPostgres
import PostgresNIO

/// W9 on PostgreSQL: a batch insert of ``PostgresBenchmarkSuite/Options/batchCount`` rows, a batch update of every
/// one (`a1 = a1 + 1`), and a batch delete of W13's books (their chapters by cascade), each through the coordinator,
/// against raw postgres-nio's best at the same work: W1's multi-row INSERTs, one `UPDATE`, and one `DELETE` per table.
extension PostgresBenchmarkSuite {
    func batchRows(into report: inout BenchmarkReport) async throws {
        let count = options.batchCount
        log("PostgreSQL W9: batch insert and update \(count), batch delete \(options.graphChanges) of \(options.graphBooks) books")
        var samples: [String: Samples] = [:]
        let deletes = options.graphChanges
        for repetition in 0...options.repetitions {
            var taken: [String: Samples] = [:]
            try await freshDatabase("og_bench_w9_graph")
            let coordinator = try makeCoordinator(on: "og_bench_w9_graph", model: Self.model)
            let insert = BatchInsertRequest(entityName: "Item", keys: (0..<10).map { "a\($0)" }) { row in
                guard row.index < count else { return false }
                for column in 0..<10 { row[column] = .int(Int64(row.index * 10 + column)) }
                return true
            }
            taken["insert", default: Samples()].add(try Measure.timed { _ = try coordinator.execute(insert) }, for: "ObjectGraph")
            let update = try BatchUpdateRequest(entityName: "Item", format: "TRUEPREDICATE", set: ["a1": "a1 + 1"])
            taken["update", default: Samples()].add(try Measure.timed { _ = try coordinator.execute(update) }, for: "ObjectGraph")
            try await checkBatch("og_bench_w9_graph", count: count, who: "ObjectGraph")

            try await freshDatabase("og_bench_w9_raw")
            let connection = try await connect("og_bench_w9_raw")
            for statement in Self.rawSchema { _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Self.logger) }
            taken["insert", default: Samples()].add(try await Measure.timed { try await Self.rawInsert(connection, count: count) }, for: "raw")
            taken["update", default: Samples()].add(try await Measure.timed {
                _ = try await connection.query(#"UPDATE "Item" SET a1 = a1 + 1, "row.version" = "row.version" + 1"#, logger: Self.logger)
            }, for: "raw")
            try await connection.close()
            try await checkBatch("og_bench_w9_raw", count: count, who: "raw")

            try await copyTemplate(to: "og_bench_w9_delete_graph")
            let graph = try makeCoordinator(on: "og_bench_w9_delete_graph", model: BenchmarkSuite.graphModel)
            let delete = BatchDeleteRequest(entityName: "Book", predicate: try FormatPredicate("serial < %d", deletes))
            taken["delete", default: Samples()].add(try Measure.timed { _ = try graph.execute(delete) }, for: "ObjectGraph")
            try await checkRemaining("og_bench_w9_delete_graph", who: "ObjectGraph (W9 delete)")
            try await copyTemplate(to: "og_bench_w9_delete_raw")
            let deleting = try await connect("og_bench_w9_delete_raw")
            taken["delete", default: Samples()].add(try await Measure.timed {
                _ = try await deleting.query("BEGIN", logger: Self.logger)
                _ = try await deleting.query(#"DELETE FROM "Chapter" WHERE book IN (SELECT "row.id" FROM "Book" WHERE serial < \#(Int64(deletes)))"#, logger: Self.logger)
                _ = try await deleting.query(#"DELETE FROM "Book" WHERE serial < \#(Int64(deletes))"#, logger: Self.logger)
                _ = try await deleting.query("COMMIT", logger: Self.logger)
            }, for: "raw")
            try await deleting.close()
            try await checkRemaining("og_bench_w9_delete_raw", who: "raw (W9 delete)")
            // The first round warms code, caches and the server up for both, and is not counted.
            if repetition > 0 { for (kind, sample) in taken { samples[kind] = (samples[kind] ?? Samples()) + sample } }
        }
        for kind in ["insert", "update", "delete"] {
            let size = kind == "delete" ? deletes : count
            let note = ["insert": "a closure fills the rows", "update": "a1 = a1 + 1, every row", "delete": "books by predicate, chapters by cascade"][kind]!
            report.rows += BenchmarkReport.Row.wallAndCPU("PG W9 batch \(kind) \(size)", samples[kind]!, note: note + "; CPU: this process only", workThread: "the calling thread")
        }
    }

    /// Every row stored once, with the values written and the update applied.
    func checkBatch(_ database: String, count: Int, who: String) async throws {
        let connection = try await connect(database)
        let found = [
            try await integer(#"SELECT count(*) FROM "Item""#, on: connection),
            try await integer(#"SELECT sum(a0)::BIGINT FROM "Item""#, on: connection),
            try await integer(#"SELECT sum(a1)::BIGINT FROM "Item""#, on: connection),
            try await integer(#"SELECT min("row.version") FROM "Item""#, on: connection),
            try await integer(#"SELECT max("row.version") FROM "Item""#, on: connection),
        ]
        try await connection.close()
        let expected = BenchmarkSuite.batchExpectation(count: count)
        guard found == expected else { throw BenchmarkError("PostgreSQL W9 \(who): rows, sum(a0), sum(a1), versions \(found), expected \(expected)") }
    }
}

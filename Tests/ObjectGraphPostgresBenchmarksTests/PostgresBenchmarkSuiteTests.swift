import Foundation
import ObjectGraphBenchmarks
import ObjectGraphPostgresBenchmarks
import Testing

/// The PostgreSQL workloads at a tiny size: every one runs, checks what it read or wrote, and reports both contenders.
/// Their timings are the benchmark's business, not this test's.
@Suite struct PostgresBenchmarkSuiteTests {
    @Test func everyWorkloadRunsAtATinySizeAndReportsBothContenders() async throws {
        let url = try #require(ProcessInfo.processInfo.environment["OBJECTGRAPH_POSTGRES_URL"], "run under scripts/with-postgres.sh")
        let report = try await PostgresBenchmarkSuite(options: .tiny(url: url), log: { _ in }).run()
        #expect(report.rows.map(\.workload) == [
            "PG W1 insert 500", "PG W1 insert CPU", "PG W2 fetch 1000", "PG W2 fetch CPU", "PG W3 lookup median", "PG W3 lookup p99",
            "PG another host's save heard, median", "PG another host's save heard, p99",
            "PG W9 batch insert 1000", "PG W9 batch insert 1000 CPU", "PG W9 batch update 1000", "PG W9 batch update 1000 CPU",
            "PG W9 batch delete 250", "PG W9 batch delete 250 CPU",
            "PG W11 1000 books, authors prefetched", "PG W11 1000 books, authors prefetched CPU",
            "PG W11 1000 books, tags prefetched", "PG W11 1000 books, tags prefetched CPU",
            "PG W11 1000 books, authors faulted", "PG W11 1000 books, authors faulted CPU",
            "PG W12 update 250", "PG W12 update 250 CPU", "PG W13 delete 250", "PG W13 delete 250 CPU",
        ])
        for row in report.rows {
            let contenders = row.workload.contains("heard") ? ["ObjectGraph"] : ["ObjectGraph", "raw"]
            #expect(row.values.keys.sorted() == contenders, "\(row.workload)")
            #expect(row.values.values.allSatisfy { $0 > 0 }, "\(row.workload)")
        }
    }
}

import Foundation
import Testing
@testable import ObjectGraphBenchmarks

/// CI runs the whole suite once at a tiny size so it keeps compiling and working; nothing here is about speed.
@Suite struct BenchmarkSuiteTests {
    @MainActor
    @Test func everyWorkloadRunsAtATinySizeAndReportsEveryContender() async throws {
        var options = BenchmarkSuite.Options.tiny
        options.folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: options.folder) }
        let report = try await BenchmarkSuite(options: options, log: { _ in }).run()
        let workloads = report.rows.map(\.workload)
        for prefix in ["W1", "W2", "W3 lookup median", "W3 lookup p99", "W4 nested", "W4 siblings", "W5", "W6 insert 100", "W6 fetch 1000", "W8 live results main busy", "W8 save to diff", "W8 one-object diff in 1000"] {
            #expect(workloads.contains { $0.hasPrefix(prefix) }, "\(prefix) is missing from \(workloads)")
        }
        let w1 = try #require(report.rows.first { $0.workload.hasPrefix("W1") })
        #expect(Set(w1.values.keys) == Set(BenchmarkReport.contenders))
        #expect(report.table().contains("| W1 insert 500 | s |"))
        // W4's main-actor lookups: every contender's, each a share of the import's time, and what one costs.
        for layout in ["nested", "siblings"] {
            let busy = try #require(report.rows.first { $0.workload == "W4 \(layout) main busy" })
            #expect(Set(busy.values.keys) == Set(BenchmarkReport.contenders))
            #expect(busy.values.values.allSatisfy { $0 >= 0 && $0 <= 100 })
            let lookup = try #require(report.rows.first { $0.workload == "W4 \(layout) lookup median" })
            #expect(Set(lookup.values.keys) == Set(BenchmarkReport.contenders))
            #expect(lookup.values.values.allSatisfy { $0 > 0 })
        }
    }
}

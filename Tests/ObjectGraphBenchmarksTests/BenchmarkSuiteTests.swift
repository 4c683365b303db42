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
        for prefix in ["W1", "W2", "W3 lookup median", "W3 lookup p99", "W4 nested", "W4 siblings", "W5", "W6 insert 100", "W6 fetch 1000", "W8 live results controller's main CPU", "W8 live results main busy", "W8 save to diff", "W8 one-object diff in 1000",
                       "W14 nested longest lookup", "W14 nested longest sorted fetch", "W14 siblings main max stall"] {
            #expect(workloads.contains { $0.hasPrefix(prefix) }, "\(prefix) is missing from \(workloads)")
        }
        // Wall and CPU time for W1 and W2, and a verdict wherever a target has what it needs.
        #expect(workloads.contains("W1 insert 500 CPU") && workloads.contains("W2 fetch 1000 CPU"))
        for row in report.rows where row.target != nil {
            #expect(report.met(row) != nil, "\(row.workload) has a target but no verdict")
        }
        let w1 = try #require(report.rows.first { $0.workload.hasPrefix("W1") })
        #expect(Set(w1.values.keys) == Set(BenchmarkReport.contenders))
        // Where objects are read, the plain way of making them runs too, and the same read ahead (their sums checked
        // like every contender's), and the table gives ObjectGraph's ratio to each.
        let objectReads = report.rows.filter { $0.workload.hasPrefix("W2") || $0.workload.hasPrefix("W11") }
        #expect(objectReads.count == 8)
        for row in objectReads {
            for baseline in BenchmarkReport.objectBaselines { #expect((row.values[baseline] ?? 0) > 0, "\(row.workload) lacks \(baseline)") }
        }
        #expect(report.columns.prefix(3) == ["raw", BenchmarkReport.objectBaseline, BenchmarkReport.objectBaselineReadAhead])
        #expect(report.table().split(separator: "\n").filter { $0.contains("ObjectGraph / raw objects: ") }.count == 8)
        #expect(report.table().split(separator: "\n").filter { $0.contains("ObjectGraph / raw objects, read ahead: ") }.count == 8)
        #expect(report.table().contains("| W1 insert 500 | s |"))
        // W4's main-actor lookups: every contender's, each a share of the import's time, and what one costs.
        for layout in ["nested", "siblings"] {
            let busy = try #require(report.rows.first { $0.workload == "W4 \(layout) main occupied" })
            #expect(Set(busy.values.keys) == Set(BenchmarkReport.contenders))
            #expect(busy.values.values.allSatisfy { $0 >= 0 && $0 <= 100 })
            let lookup = try #require(report.rows.first { $0.workload == "W4 \(layout) lookup median" })
            #expect(Set(lookup.values.keys) == Set(BenchmarkReport.contenders))
            #expect(lookup.values.values.allSatisfy { $0 > 0 })
        }
    }

    /// A CPU row splits ObjectGraph's CPU time by thread, medians of its samples: the context's thread the work ran
    /// on, and the others (a fetch reading ahead); no split when a sample does not know its thread's time.
    @Test func theCPURowSplitsObjectGraphsTimeByThread() {
        var samples = Samples()
        samples.add(Sample(wall: 1, cpu: 0.5, workThreadCPU: 0.5), for: "raw")
        for (cpu, thread) in [(1.5, 1.0), (1.7, 1.1), (1.4, 0.9)] {
            samples.add(Sample(wall: 1, cpu: cpu, workThreadCPU: thread), for: "ObjectGraph")
        }
        let split = samples.threadSplit(of: "ObjectGraph")
        #expect(split?.work == 1.0 && split?.others == 0.5)
        let rows = BenchmarkReport.Row.wallAndCPU("W", samples, cpuNote: "every thread")
        #expect(rows[0].note == "")
        #expect(rows[1].note == "every thread; ObjectGraph: 1.00 s on its context's thread, 0.500 s on others")
        samples.add(Sample(wall: 1, cpu: 1.6), for: "ObjectGraph")
        #expect(samples.threadSplit(of: "ObjectGraph") == nil)
        #expect(BenchmarkReport.Row.wallAndCPU("W", samples, cpuNote: "every thread")[1].note == "every thread")
    }

    /// The verdicts the report prints are computed from the values: each kind of target at its boundary.
    @Test func targetsAreJudgedFromTheRunsValues() {
        func row(_ name: String, raw: Double?, graph: Double, _ target: BenchmarkTarget) -> BenchmarkReport.Row {
            var values = ["ObjectGraph": graph]
            values["raw"] = raw
            return BenchmarkReport.Row(workload: name, unit: "s", values: values, target: target)
        }
        var report = BenchmarkReport()
        report.rows = [
            row("ratio met", raw: 2, graph: 5, .ratio(2.5)),
            row("ratio missed", raw: 2, graph: 5.1, .ratio(2.5)),
            row("ratio without raw", raw: nil, graph: 1, .ratio(2.5)),
            row("busy met", raw: 1.5, graph: 2.5, .aboveRaw(points: 1)),
            row("busy missed", raw: 1.5, graph: 2.6, .aboveRaw(points: 1)),
            row("memory", raw: nil, graph: 41, .atMost(40)),
            row("small", raw: nil, graph: 100, .atMost(1_000)),
            row("large", raw: nil, graph: 150, .flat(reference: "small", factor: 1.5)),
            row("larger", raw: nil, graph: 151, .flat(reference: "small", factor: 1.5)),
        ]
        #expect(report.rows.map(report.met) == [true, false, nil, true, false, false, true, true, false])
        #expect(report.table().contains("| ratio missed | s | 2.00 |  |  | 5.10 | 2.55x | ≤ 2.50x raw | **no** |"))
        // The object baseline informs; it judges nothing.
        report.rows[1].values[BenchmarkReport.objectBaseline] = 3
        #expect(report.met(report.rows[1]) == false)
        #expect(report.table().contains("| ratio missed | s | 2.00 | 3.00 |  |  | 5.10 | 2.55x | ≤ 2.50x raw | **no** | ObjectGraph / raw objects: 1.70x |"))
    }

    /// Where objects are read, the limit is the object baseline (targets against raw SQLite alone were below
    /// what plain objects cost): its ratio judges, at its boundary, and raw SQLite's does not.
    @Test func objectTargetsAreJudgedAgainstRawObjects() {
        func row(_ name: String, objects: Double?, graph: Double) -> BenchmarkReport.Row {
            var values = ["raw": 1.0, "ObjectGraph": graph]
            values[BenchmarkReport.objectBaseline] = objects
            return BenchmarkReport.Row(workload: name, unit: "s", values: values, target: .ratioToObjects(1.1))
        }
        let report = BenchmarkReport(rows: [
            row("met", objects: 2, graph: 2.2),
            row("missed", objects: 2, graph: 2.21),
            row("no baseline", objects: nil, graph: 1),
        ])
        #expect(report.rows.map(report.met) == [true, false, nil])
        #expect(report.table().contains("| met | s | 1.00 | 2.00 |  |  | 2.20 | 2.20x | ≤ 1.10x raw objects | yes | ObjectGraph / raw objects: 1.10x |"))
    }

    /// Made with ObjectGraph's own read-ahead, the object baseline stays a limit: the faster of the two judges.
    @Test func theFasterObjectBaselineJudges() {
        func row(plain: Double, readAhead: Double, graph: Double) -> BenchmarkReport.Row {
            BenchmarkReport.Row(workload: "W", unit: "s", values: [
                "raw": 1, "ObjectGraph": graph, BenchmarkReport.objectBaseline: plain, BenchmarkReport.objectBaselineReadAhead: readAhead,
            ], target: .ratioToObjects(1.1))
        }
        let report = BenchmarkReport(rows: [
            row(plain: 2, readAhead: 1.5, graph: 1.65),
            row(plain: 2, readAhead: 1.5, graph: 1.66),
            row(plain: 1.5, readAhead: 2, graph: 1.66),
        ])
        #expect(report.rows.map(report.met) == [true, false, false])
        #expect(report.table().contains("| W | s | 1.00 | 2.00 | 1.50 |  |  | 1.65 | 1.65x | ≤ 1.10x raw objects | yes | ObjectGraph / raw objects: 0.82x; ObjectGraph / raw objects, read ahead: 1.10x |"))
    }
}

import ArgumentParser
import Foundation
import ObjectGraphBenchmarks

/// Runs W1, W2, W3 and W11 of ObjectGraph's suite with Fluent beside raw SQLite and ObjectGraph, and prints the
/// suite's table with a Fluent column.
@main
struct FluentBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Benchmark ObjectGraph against Fluent (and raw SQLite) on W1, W2, W3 and W11.")

    @Flag(help: "A tiny run that only checks every workload works.") var tiny = false
    @Option(help: "Repetitions per workload (the median is reported).") var repetitions: Int?
    @Option(help: "Run only these of W1, W2, W3, W11.") var only: [String] = []
    @Option(help: "W11's books (authors are a tenth of them).") var graphBooks: Int?
    @Flag(help: "Run GRDB too.") var grdb = false

    @MainActor
    mutating func run() async throws {
        var options = tiny ? BenchmarkSuite.Options.tiny : BenchmarkSuite.Options()
        let workloads: Set<String> = ["W1", "W2", "W3", "W11"]
        options.workloads = only.isEmpty ? workloads : workloads.intersection(only.map { $0.uppercased() })
        options.contenders = Set(["raw", "ObjectGraph", "Fluent"] + (grdb ? ["GRDB rows", "GRDB records"] : []))
        options.folder = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-fluent-bench")
        if let repetitions { options.repetitions = repetitions }
        if let graphBooks {
            options.graphBooks = graphBooks
            options.graphAuthors = max(1, graphBooks / 10)
        }
        let started = Date()
        let report = try await BenchmarkSuite(options: options, peer: FluentContender()).run()
        print(report.table())
        print(String(format: "\n(%d repetitions, %.0f s in all)", options.repetitions, Date().timeIntervalSince(started)))
    }
}

import ArgumentParser
import Foundation
import ObjectGraphBenchmarks
#if OBJECTGRAPH_POSTGRES
import ObjectGraphPostgresBenchmarks
#endif

/// Runs the benchmark suite and prints its table (run it in release: `swift run -c release objectgraph bench`).
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Benchmark ObjectGraph against raw SQLite and GRDB in one run.")

    @Flag(help: "A tiny run that only checks every workload works.") var tiny = false
    @Option(help: "Repetitions per workload (the median is reported).") var repetitions: Int?
    @Option(help: "Largest W6 size.") var largest: Int?
    @Option(help: "Run only these workloads (W1 … W14), e.g. --only W2 --only W3; for profiling one alone.") var only: [String] = []
    @Option(help: "Contenders to run (raw, raw objects, \"raw objects, read ahead\", GRDB rows, GRDB records, ObjectGraph); all when not given.") var contender: [String] = []

    @Option(help: "Run W1-W3, W9 and W11-W13 on this PostgreSQL server instead (postgres://user@host:port/database; its role creates and drops og_bench_* databases).")
    var postgres: String?
    @Option(help: "W11-W13's books (W12 changes and W13 deletes a quarter of them).") var graphBooks: Int?
    @Flag(help: .hidden) var memoryChild = false
    @Argument(help: .hidden) var childArguments: [String] = []

    @MainActor
    mutating func run() async throws {
        if memoryChild {
            // W5 in a fresh process: the parent reads the two numbers printed.
            guard childArguments.count == 2, let count = Int(childArguments[0]) else { throw ValidationError("--memory-child COUNT FOLDER") }
            var options = BenchmarkSuite.Options()
            options.folder = URL(fileURLWithPath: childArguments[1])
            let growth = try await BenchmarkSuite(options: options, log: { _ in }).memoryGrowth(count: count)
            print(growth.batched, growth.unbatched)
            return
        }
        if let postgres {
            #if OBJECTGRAPH_POSTGRES
            var options = tiny ? PostgresBenchmarkSuite.Options.tiny(url: postgres) : PostgresBenchmarkSuite.Options(url: postgres)
            if let repetitions { options.repetitions = repetitions }
            if let graphBooks {
                options.graphBooks = graphBooks
                options.graphChanges = graphBooks / 4
            }
            options.workloads = Set(only.map { $0.uppercased() })
            let started = Date()
            print(try await PostgresBenchmarkSuite(options: options).run().table())
            print(String(format: "\n(%d repetitions, %.0f s in all)", options.repetitions, Date().timeIntervalSince(started)))
            return
            #else
            throw withoutPostgres("--postgres \(postgres) cannot be used")
            #endif
        }
        var options = tiny ? BenchmarkSuite.Options.tiny : BenchmarkSuite.Options()
        options.freshProcessCommand = [CommandLine.arguments[0], "bench", "--memory-child"]
        if let repetitions { options.repetitions = repetitions }
        options.workloads = Set(only.map { $0.uppercased() })
        if !contender.isEmpty { options.contenders = Set(contender) }
        if let graphBooks {
            options.graphBooks = graphBooks
            options.graphAuthors = max(1, graphBooks / 10)
            options.graphChanges = graphBooks / 4
        }
        if let largest { options.scalingSizes = options.scalingSizes.filter { $0 < largest } + [largest] }
        let started = Date()
        let report = try await BenchmarkSuite(options: options).run()
        print(report.table())
        print(String(format: "\n(%d repetitions, %.0f s in all)", options.repetitions, Date().timeIntervalSince(started)))
    }
}

import Foundation
import ObjectGraph

/// W14: the seeds' promise that the main context never waits for the writer. The stack holds
/// ``BenchmarkSuite/Options/responsivenessCount`` objects; a worker imports as many again in one save, which the
/// nested layout passes through the main context to the writer and the sibling layout hands to the writer directly,
/// while the main actor fetches every 2 ms, turn by turn, one object by an indexed value and the first 1,000 objects
/// by a sort on the indexed attribute. Reported: each kind's longest fetch over the import, and the main actor's
/// longest stall (a fetch's wait included), both against 16 ms: a frame.
extension BenchmarkSuite {
    @MainActor
    func responsiveness() async throws -> [BenchmarkReport.Row] {
        var rows: [BenchmarkReport.Row] = []
        for layout in DataStack.Layout.allCases {
            var lookups: [Double] = [], sorted: [Double] = [], typical: [Double] = [], stalls: [Double] = [], counts: [Double] = []
            for _ in 0..<options.repetitions {
                let run = try await fetchesDuringSave(layout: layout)
                lookups.append(run.lookup * 1000)
                sorted.append(run.sorted * 1000)
                typical.append(run.sortedMedian * 1000)
                stalls.append(run.stall * 1000)
                counts.append(Double(run.fetches))
            }
            let label = "W14 \(layout.rawValue)"
            let note = String(format: "the longest of about %.0f fetches during one save of %d", Measure.median(counts), options.responsivenessCount)
            rows.append(BenchmarkReport.Row(workload: "\(label) longest lookup", unit: "ms", values: ["ObjectGraph": Measure.median(lookups)],
                                            note: note, target: .atMost(16)))
            rows.append(BenchmarkReport.Row(workload: "\(label) longest sorted fetch of 1,000", unit: "ms",
                                            values: ["ObjectGraph": Measure.median(sorted)], note: note, target: .atMost(16)))
            rows.append(BenchmarkReport.Row(workload: "\(label) sorted fetch of 1,000 median", unit: "ms",
                                            values: ["ObjectGraph": Measure.median(typical)], note: "the median of one import's sorted fetches"))
            rows.append(BenchmarkReport.Row(workload: "\(label) main max stall", unit: "ms", values: ["ObjectGraph": Measure.median(stalls)],
                                            note: "the longest late wake of the 2 ms timer, a fetch's time included", target: .atMost(16)))
        }
        return rows
    }

    /// One import watched by the main actor's fetches: each kind's longest time, the longest stall, how many ran.
    @MainActor
    private func fetchesDuringSave(layout: DataStack.Layout) async throws -> (lookup: Double, sorted: Double, sortedMedian: Double, stall: Double, fetches: Int) {
        let path = try freshPath("w14-\(layout.rawValue)")
        let stack = try DataStack(databaseFileName: path, model: Self.model, layout: layout)
        let count = options.responsivenessCount
        try await stack.background { ctx in
            for row in 0..<count { try ctx.insert(Item.self).fill(row) }
        }
        var request = Item.fetchRequest()
        request.sortKeys = [SortKey("a0", ascending: false)]
        request.fetchLimit = 1_000
        // Warm-up: statements prepared, connections open.
        _ = try Item.one(in: stack, where: "a0 == %lld", Int64(10))
        _ = try stack.onMain { try $0.fetch(request) }

        let watch = FetchWatch()
        let watcher = Task { @MainActor in
            try await watch.run(
                lookup: {
                    guard try Item.one(in: stack, where: "a0 == %lld", Int64(10)) != nil else {
                        throw BenchmarkError("W14's lookup found nothing")
                    }
                },
                sorted: {
                    let found = try stack.onMain { try $0.fetch(request, as: Item.self).map(\.a0) }
                    guard found.count == 1_000, zip(found, found.dropFirst()).allSatisfy({ $0 > $1 }) else {
                        throw BenchmarkError("W14's sorted fetch found \(found.count) objects, or out of order")
                    }
                })
        }
        try await stack.background { ctx in
            for row in count..<(2 * count) { try ctx.insert(Item.self).fill(row) }
        }
        watch.stop()
        try await watcher.value
        let stored = try await stack.onMainContext { ctx in try ctx.count(for: Item.fetchRequest()) }
        guard stored == 2 * count else { throw BenchmarkError("W14 \(layout): \(stored) of \(2 * count) objects stored") }
        return (watch.longestLookup, watch.sortedTimes.max() ?? 0, Measure.median(watch.sortedTimes), watch.longestStall, watch.fetches)
    }
}

/// W14's main-actor loop: every 2 ms, a lookup and a sorted fetch by turns; the longest lookup and every sorted
/// fetch's time kept.
@MainActor
private final class FetchWatch {
    private(set) var longestLookup = 0.0, longestStall = 0.0, fetches = 0
    private(set) var sortedTimes: [Double] = []
    private var running = true

    func stop() { running = false }

    func run(lookup: @MainActor () throws -> Void, sorted: @MainActor () throws -> Void) async throws {
        let clock = ContinuousClock()
        while running {
            let asleep = clock.now
            try await Task.sleep(for: .milliseconds(2))
            let awake = clock.now
            if fetches % 2 == 0 {
                try lookup()
                longestLookup = max(longestLookup, (clock.now - awake).seconds)
            } else {
                try sorted()
                sortedTimes.append((clock.now - awake).seconds)
            }
            // A fetch that waits shows as a late wake of the next turn too: the stall counts both.
            longestStall = max(longestStall, (awake - asleep - .milliseconds(2)).seconds, (clock.now - awake).seconds)
            fetches += 1
        }
    }
}

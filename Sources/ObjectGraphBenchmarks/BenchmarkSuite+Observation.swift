import Foundation
import ObjectGraph
import Synchronization

/// W8: a main-queue ``FetchedResultsController`` kept current during an import, and the cost of one diff.
///
/// - Live results: the nested stack imports ``BenchmarkSuite/Options/observationImportCount`` items in saves of
///   ``BenchmarkSuite/Options/observationBatch`` while the main context's controller keeps a sorted, sectioned tenth
///   of them (`modulus:by:(a0, 100) == 0`, sections by `a5`, ten of them). Reported: what the controller costs the
///   main actor, by CPU time (the process's CPU time over the import with the controller, less the same import's
///   without one: the controller's work all runs on the main actor), the main thread's busy share and longest stall
///   by a 2 ms timer's lateness, and the time from a worker's save to the controller's diff.
/// - One changed object: in results of each of ``BenchmarkSuite/Options/observationResultSizes`` objects, one object
///   changes a sort key and the context processes it; the diff's cost should not grow with the results.
extension BenchmarkSuite {
    @MainActor
    func observation() async throws -> [BenchmarkReport.Row] {
        var busy: [Double] = [], stalls: [Double] = [], latencies: [Double] = []
        var quietBusy: [Double] = [], quietStalls: [Double] = []
        var controllerCPU: [Double] = []
        var resultCount = 0
        for _ in 0..<options.repetitions {
            let run = try await liveResults(observing: true)
            busy.append(run.busy)
            stalls.append(run.maxStall)
            latencies.append(Measure.median(run.latencies))
            resultCount = run.count
            // The same import with nobody observing: what the stack's main context costs the main thread anyway.
            let quiet = try await liveResults(observing: false)
            quietBusy.append(quiet.busy)
            quietStalls.append(quiet.maxStall)
            // Paired by repetition, so that a slow minute of the host moves both runs of a pair.
            controllerCPU.append((run.cpu - quiet.cpu) / run.elapsed * 100)
        }
        var rows = [
            BenchmarkReport.Row(workload: "W8 live results controller's main CPU", unit: "%", values: ["ObjectGraph": Measure.median(controllerCPU)],
                                note: String(format: "CPU time with the controller less without, over the import; %.1f to %.1f points over %d pairs",
                                             controllerCPU.min() ?? 0, controllerCPU.max() ?? 0, controllerCPU.count),
                                target: .atMost(5)),
            BenchmarkReport.Row(workload: "W8 live results main busy", unit: "%", values: ["ObjectGraph": Measure.median(busy)],
                                note: String(format: "%d of %d imported in saves of %d; %.1f%% with no controller",
                                             resultCount, options.observationImportCount, options.observationBatch, Measure.median(quietBusy))),
            BenchmarkReport.Row(workload: "W8 live results max stall", unit: "ms", values: ["ObjectGraph": Measure.median(stalls)],
                                note: String(format: "%.1f ms with no controller", Measure.median(quietStalls)), target: .atMost(16)),
            BenchmarkReport.Row(workload: "W8 save to diff median", unit: "ms", values: ["ObjectGraph": Measure.median(latencies)]),
        ]
        for size in options.observationResultSizes {
            rows.append(BenchmarkReport.Row(workload: "W8 one-object diff in \(size) results", unit: "µs",
                                            values: ["ObjectGraph": try await oneObjectDiff(in: size) * 1e6]))
        }
        return rows
    }

    /// Each save's end, and each diff's arrival, in seconds since the import began.
    private final class Timeline: Sendable {
        let saves = Mutex<[Double]>([])
        let diffs = Mutex<[(time: Double, count: Int)]>([])
    }

    @MainActor
    private func liveResults(observing: Bool) async throws -> (busy: Double, maxStall: Double, latencies: [Double], count: Int, cpu: Double, elapsed: Double) {
        let path = try freshPath("w8")
        let stack = try DataStack(databaseFileName: path, model: Self.model, layout: .nested)
        var request = try FetchRequest(entityName: "Item", format: "modulus:by:(a0, 100) == 0", argumentArray: [])
        request.sortKeys = [SortKey("a5"), SortKey("a0", ascending: false)]
        let clock = ContinuousClock()
        let start = clock.now
        let startCPU = Measure.cpuSeconds()
        let timeline = Timeline()
        let controller = observing ? try stack.onMain { try $0.fetchedResultsController(for: request, sectionNameKeyPath: "a5") } : nil
        controller?.onChange { change in
            let now = (clock.now - start).seconds
            timeline.diffs.withLock { $0.append((now, change.snapshot.count)) }
        }
        let monitor = MainThreadSampler()
        let sampler = Task { @MainActor in try await monitor.run {} }
        let (total, batch) = (options.observationImportCount, max(1, options.observationBatch))
        var imported = 0
        while imported < total {
            let (first, size) = (imported, min(batch, total - imported))
            try await stack.background { ctx in
                for row in first..<(first + size) {
                    let item = try ctx.insert(Item.self)
                    item.fill(row)
                    item.a5 = Int64(row % 100)
                }
                // The block's end: its save follows at once.
                timeline.saves.withLock { $0.append((clock.now - start).seconds) }
            }
            imported += size
        }
        // The last diff may still be on its way to the main actor.
        while observing, timeline.diffs.withLock({ $0.last?.count ?? 0 }) < total / 10 { try await Task.sleep(for: .milliseconds(1)) }
        let elapsed = (clock.now - start).seconds
        let cpu = Measure.cpuSeconds() - startCPU
        monitor.stop()
        try await sampler.value as Void
        let expected = try stack.onMain { try $0.count(for: request) }
        guard let controller else { return (monitor.lateness / elapsed * 100, monitor.maxStall * 1000, [], expected, cpu, elapsed) }
        guard controller.snapshot.count == expected, expected == total / 10 else {
            throw BenchmarkError("W8's controller holds \(controller.snapshot.count) objects, a fetch counts \(expected)")
        }
        // Each save's diff is the first diff at or after it that holds its objects.
        let saves = timeline.saves.withLock { $0 }
        let diffs = timeline.diffs.withLock { $0 }
        var latencies: [Double] = []
        for (index, saved) in saves.enumerated() {
            let wanted = min(total, (index + 1) * batch) / 10
            if let diff = diffs.first(where: { $0.count >= wanted && $0.time >= saved }) { latencies.append((diff.time - saved) * 1000) }
        }
        controller.cancel()
        return (monitor.lateness / elapsed * 100, monitor.maxStall * 1000, latencies, controller.snapshot.count, cpu, elapsed)
    }

    /// The median time for the context to process one object's change of sort key in results of `size` objects.
    private func oneObjectDiff(in size: Int) async throws -> Double {
        let (_, graph) = try populated(count: size, name: "w8-\(size)")
        let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: URL(fileURLWithPath: graph))
        let context = ObjectContext(coordinator: coordinator, name: "bench")
        let rounds = max(10, min(200, options.lookups / 10))
        return try await context.perform { ctx -> Double in
            var request = Item.fetchRequest()
            request.sortKeys = [SortKey("a1")]
            let controller = try ctx.fetchedResultsController(for: request)
            var moves = 0
            controller.onChange { change in moves += change.objectChanges.count }
            let objects = controller.fetchedObjects.compactMap { $0 as? Item }
            var times: [Double] = []
            for round in 0..<rounds {
                let item = objects[(round * 7_919) % objects.count]
                item.a1 = -item.a1 - 1   // to the other end of the order
                times.append(Measure.seconds { ctx.processPendingChanges() })
            }
            guard moves == rounds, controller.snapshot.count == size else {
                throw BenchmarkError("W8's one-object diffs reported \(moves) changes for \(rounds) rounds")
            }
            return Measure.median(times)
        }
    }
}

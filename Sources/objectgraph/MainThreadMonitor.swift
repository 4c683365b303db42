import Foundation

/// Measures how available the main thread stays: a main-actor loop wakes every few milliseconds, runs a small
/// query, and records how late it woke (a stall) and how long the query took (busy time).
@MainActor
final class MainThreadMonitor {
    private(set) var stalls: [Double] = []
    private(set) var busy: Double = 0
    private(set) var queries = 0
    private var running = true
    let started = ContinuousClock.now

    func stop() { running = false }

    /// Runs until `stop()`, calling `query` on the main actor between sleeps of `interval`.
    func run(every interval: Duration, query: @MainActor () throws -> Void) async throws {
        let clock = ContinuousClock()
        while running {
            let asleep = clock.now
            try await Task.sleep(for: interval)
            let awake = clock.now
            stalls.append(max(0, (awake - asleep - interval).seconds))
            try query()
            busy += (clock.now - awake).seconds
            queries += 1
        }
    }

    func percentile(_ p: Double) -> Double {
        guard !stalls.isEmpty else { return 0 }
        let sorted = stalls.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

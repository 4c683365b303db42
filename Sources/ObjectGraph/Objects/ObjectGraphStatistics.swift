import Synchronization

/// Process-wide counters for tests and benchmarks: how many objects hold loaded values right now.
public enum ObjectGraphStatistics {
    static let materialized = Atomic<Int>(0)

    /// The number of live objects whose values are loaded (not faults), across every context.
    public static var materializedObjects: Int { materialized.load(ordering: .relaxed) }
}

import Synchronization

/// A count that one thread at a time changes (its context's executor) and any thread reads.
///
/// Changes are a load and a store rather than an atomic read-modify-write: a context counts each object it fills
/// and each one that goes, twice per row of a large fetch, and a locked add costs a few times more than a plain
/// one. Sound because every change runs on the owner's executor, which runs one thing at a time; a reader on
/// another thread sees some value the count held.
struct ConfinedCounter: ~Copyable {
    private let storage = Atomic<Int>(0)

    /// The count now.
    var value: Int { storage.load(ordering: .relaxed) }

    /// Adds `delta`; only on the owner's executor.
    @inline(__always)
    func add(_ delta: Int) {
        storage.store(storage.load(ordering: .relaxed) &+ delta, ordering: .relaxed)
    }
}

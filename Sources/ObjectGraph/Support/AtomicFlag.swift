import Synchronization

/// A Boolean that any thread may read and write: a process-wide switch.
final class AtomicFlag: Sendable {
    private let storage: Atomic<Bool>

    init(_ value: Bool) { storage = Atomic(value) }

    var value: Bool {
        get { storage.load(ordering: .relaxed) }
        set { storage.store(newValue, ordering: .relaxed) }
    }
}

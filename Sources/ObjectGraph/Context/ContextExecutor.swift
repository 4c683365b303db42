import Dispatch
import Foundation

/// A serial executor backed by a private dispatch queue: a private-queue context's actor runs its jobs here, and
/// `performAndWait` can enter it synchronously with `queue.sync`.
final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue
    private static let key = DispatchSpecificKey<ObjectIdentifier>()

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Whether the calling thread is running this executor's queue (directly or inside `queue.sync`).
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) == ObjectIdentifier(self) }

    func checkIsolated() {
        precondition(isCurrent, "not on the queue \(queue.label)")
    }

    func isIsolatingCurrentContext() -> Bool? { isCurrent }
}

/// Where a context's work runs: the main actor's executor, or a private serial queue.
enum ContextExecutor: Sendable {
    case main
    case queue(QueueExecutor)

    /// Marks the main dispatch queue, which runs the main actor's jobs. On Linux that queue is not always drained
    /// by the process's first thread (a test runner may drain it elsewhere), so `Thread.isMainThread` alone would
    /// call main-actor code foreign.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    var isCurrent: Bool {
        switch self {
        case .main: DispatchQueue.getSpecific(key: Self.mainQueueKey) == true || Thread.isMainThread
        case .queue(let executor): executor.isCurrent
        }
    }
}

/// The run-time half of queue confinement (Core Data's ConcurrencyDebug, always on by default).
///
/// The compiler already refuses to move a ``ManagedObject`` out of its context's `perform`; this check catches
/// what it cannot see (unsafe escapes, objects smuggled through `@unchecked Sendable` boxes) and traps with the
/// entity, the object ID and the context's name. A release build may switch it off for speed:
///
/// ```swift
/// ConcurrencyChecks.isEnabled = false   // at start-up, before any context exists
/// ```
public enum ConcurrencyChecks {
    private static let flag = AtomicFlag(true)

    /// Whether object accessors and context calls verify that they run on their context's executor.
    public static var isEnabled: Bool {
        get { flag.value }
        set { flag.value = newValue }
    }
}

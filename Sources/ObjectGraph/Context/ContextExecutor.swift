import Dispatch
import Foundation
import Synchronization

/// A serial executor backed by a private dispatch queue: a private-queue context's actor runs its jobs here, and
/// `performAndWait` can enter it synchronously with ``sync(_:)``.
///
/// It records which thread is running its queue, so that "am I on this context's queue?", asked by every object
/// accessor, is one atomic load and a thread-ID comparison rather than a dispatch-specific lookup. Every block it
/// runs goes through ``async(_:)`` or ``sync(_:)``, which set the record.
final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue
    /// The thread running a block on `queue` (0 when none).
    private let owner = Atomic<UInt>(0)

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    @inline(__always)
    static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    /// Runs `body` as this executor's owner: the calling thread holds the queue (inside one of its blocks).
    private func owning<T>(_ body: () throws -> T) rethrows -> T {
        let previous = owner.exchange(Self.currentThread, ordering: .relaxed)
        defer { owner.store(previous, ordering: .relaxed) }
        return try body()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { self.owning { job.runSynchronously(on: executor) } }
    }

    /// Runs `body` on the queue and waits for it.
    func sync<T>(_ body: () throws -> T) rethrows -> T {
        try queue.sync { try owning(body) }
    }

    /// Runs `body` on the queue later.
    func async(_ body: @escaping @Sendable () -> Void) {
        queue.async { self.owning(body) }
    }

    /// Whether the calling thread is running this executor's queue (directly or inside ``sync(_:)``). Relaxed
    /// ordering is enough: a thread only ever compares the record with its own ID, and it sees its own writes.
    @inline(__always)
    var isCurrent: Bool { isOwned(by: Self.currentThread) }

    /// Whether `thread` is running this executor's queue.
    @inline(__always)
    func isOwned(by thread: UInt) -> Bool { owner.load(ordering: .relaxed) == thread }

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

    /// The process's main thread, once a check has seen it (0 before): later checks on it compare one word, where
    /// asking Foundation and Dispatch cost a twentieth of a screen's small query.
    private static let knownMainThread = Atomic<UInt>(0)

    @inline(__always)
    var isCurrent: Bool {
        switch self {
        case .main: Self.isOnMainQueue
        case .queue(let executor): executor.isCurrent
        }
    }

    /// The main thread is remembered; a thread draining the main queue for it (Linux's `dispatchMain()` retires the
    /// main thread, and a pool thread drains the queue) is not, as it may run other queues later: the queue mark,
    /// asked first, answers for it.
    private static var isOnMainQueue: Bool {
        let thread = QueueExecutor.currentThread
        if thread == knownMainThread.load(ordering: .relaxed) { return true }
        if DispatchQueue.getSpecific(key: mainQueueKey) == true { return true }
        guard Thread.isMainThread else { return false }
        knownMainThread.store(thread, ordering: .relaxed)
        return true
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

    /// Whether object accessors and context calls verify that they run on their context's executor. Each context
    /// reads it once, when it is created (so the check costs no global load per access): set it before.
    public static var isEnabled: Bool {
        get { flag.value }
        set { flag.value = newValue }
    }
}

import Foundation

/// A value guarded by a lock, for state shared across queues (caches, registries, subscriber lists).
///
/// It uses `NSLock` rather than `Synchronization.Mutex` because on Linux the Mutex is a raw futex that
/// ThreadSanitizer cannot see, so every correctly locked access would be reported as a race.
///
/// The value lives in memory of its own rather than in a stored property: `inout` access to a class's stored
/// property is checked for exclusivity at run time (a thread-local look-up per access), which the lock already
/// guarantees, and which cost a third of a cached parse's look-up when caches are cold.
package final class Protected<Value>: @unchecked Sendable {
    // @unchecked Sendable: sound because `value` is only ever touched inside `withLock`, under `lock`.
    private let lock = NSLock()
    private let value: UnsafeMutablePointer<Value>

    package init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value.pointee)
    }
}

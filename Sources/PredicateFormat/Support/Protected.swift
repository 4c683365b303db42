#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a lock, for state shared across queues (caches, registries, subscriber lists).
///
/// It uses a pthread mutex rather than `Synchronization.Mutex` because on Linux the Mutex is a raw futex that
/// ThreadSanitizer cannot see, so every correctly locked access would be reported as a race; and rather than
/// `NSLock`, which wraps the same mutex in a call of its own: a screen's small query takes several of these locks,
/// and with cold caches each extra call is code to fetch.
///
/// The value lives in memory of its own rather than in a stored property: `inout` access to a class's stored
/// property is checked for exclusivity at run time (a thread-local look-up per access), which the lock already
/// guarantees, and which cost a third of a cached parse's look-up when caches are cold.
package final class Protected<Value>: @unchecked Sendable {
    // @unchecked Sendable: sound because `value` is only ever touched inside `withLock`, under `lock`.
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    package init(_ value: Value) {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(lock)
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value.pointee)
    }
}

import Foundation

/// A value guarded by a lock, for state shared across queues (caches, registries, subscriber lists).
///
/// It uses `NSLock` rather than `Synchronization.Mutex` because on Linux the Mutex is a raw futex that
/// ThreadSanitizer cannot see, so every correctly locked access would be reported as a race.
package final class Protected<Value>: @unchecked Sendable {
    // @unchecked Sendable: sound because `value` is only ever touched inside `withLock`, under `lock`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

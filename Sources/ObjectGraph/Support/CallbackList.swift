import PredicateFormat

/// Callbacks registered for values of one kind, called in registration order on the posting thread.
final class CallbackList<Value: Sendable>: Sendable {
    typealias Callback = @Sendable (Value) -> Void

    private struct Entries {
        var callbacks: [Int: Callback] = [:]
        var next = 0
    }

    private let entries = Protected(Entries())

    /// Registers `callback`; the number returned removes it.
    func add(_ callback: @escaping Callback) -> Int {
        entries.withLock { state in
            defer { state.next += 1 }
            state.callbacks[state.next] = callback
            return state.next
        }
    }

    func remove(_ token: Int) {
        _ = entries.withLock { $0.callbacks.removeValue(forKey: token) }
    }

    func post(_ value: Value) {
        let callbacks = entries.withLock { state in state.callbacks.sorted { $0.key < $1.key }.map(\.value) }
        for callback in callbacks { callback(value) }
    }

    /// The values posted from now on, as an AsyncSequence.
    func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .unbounded)
        let token = add { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.remove(token) }
        return stream
    }
}

import Synchronization

/// Which state of the store a context reads (Core Data's `NSQueryGenerationToken`): ``current`` pins a context to
/// the store as it is at that moment, and a pinned context's ``ObjectContext/queryGenerationToken`` pins another
/// context to the same state.
///
/// ```swift
/// try await context.perform { ctx in try ctx.setQueryGenerationFrom(.current) }
/// ```
public struct QueryGenerationToken: Sendable, Hashable, CustomStringConvertible {
    let generation: StoreGeneration?

    /// The store as it is when a context is pinned with it.
    public static let current = QueryGenerationToken(generation: nil)

    public static func == (a: Self, b: Self) -> Bool { a.generation === b.generation }
    public func hash(into hasher: inout Hasher) { hasher.combine(generation.map(ObjectIdentifier.init)) }

    public var description: String {
        generation.map { "query generation \($0.number) of \($0.store.location)" } ?? "the current query generation"
    }
}

/// One state of a store held open for the contexts pinned to it (a read transaction, a copy of the rows), released
/// when the last of them moves on.
package protocol StoreSnapshot: AnyObject, Sendable {
    /// Lets go of the state: the read transaction ends, the connection closes.
    func close()
}

/// A store that can hold a state open for readers: Core Data's query generations.
package protocol QueryGenerationStore: PersistentStore {
    /// The store as it is now, held until the snapshot closes.
    func openSnapshot() throws -> any StoreSnapshot
}

/// A state of a store that contexts read (see ``QueryGenerationToken``): while ``reading(_:)`` runs, the store
/// answers from the snapshot instead of its current state.
package final class StoreGeneration: Sendable {
    /// The generation the current thread's store reads answer from, bound by ``reading(_:)``.
    @TaskLocal package static var bound: StoreGeneration?
    private static let counter = Atomic<Int>(0)

    package let store: any PersistentStore
    package let snapshot: any StoreSnapshot
    /// A number for messages, counting generations opened in this process.
    let number: Int

    init(store: any QueryGenerationStore) throws {
        self.store = store
        snapshot = try store.openSnapshot()
        number = Self.counter.add(1, ordering: .relaxed).newValue
    }

    deinit { snapshot.close() }

    /// Runs `body` with the store's reads answered from this generation.
    func reading<T>(_ body: () throws -> T) rethrows -> T {
        try Self.$bound.withValue(self) { try body() }
    }

    /// The snapshot of type `S` bound for `store` on this thread, if a pinned context is reading it.
    package static func snapshot<S: StoreSnapshot>(of store: any PersistentStore, as type: S.Type) -> S? {
        guard let generation = bound, generation.store === store else { return nil }
        return generation.snapshot as? S
    }
}

/// The generation a root context reads, readable from any thread: its children read the store through it too.
final class GenerationPin: Sendable {
    private let current = Mutex<StoreGeneration?>(nil)

    var generation: StoreGeneration? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Runs `body` reading the pinned generation, or the store as it is when nothing is pinned.
    func reading<T>(_ body: () throws -> T) rethrows -> T {
        guard let generation else { return try body() }
        return try generation.reading(body)
    }
}

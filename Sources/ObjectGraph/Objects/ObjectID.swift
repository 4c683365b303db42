import Foundation
import Synchronization

/// The identity of an object across contexts and queues: Sendable, Hashable and Codable.
///
/// An inserted object has a temporary ID until its context saves to a store or calls
/// ``ObjectContext/obtainPermanentIDs(for:)``; then it has a permanent one, the primary key of its row. Pass IDs
/// between queues, never objects. The coordinator remembers which permanent ID each temporary one became, so a
/// temporary ID handed to another context keeps resolving after the save.
///
/// ```swift
/// let id = try await worker.perform { ctx in ctx.insert("Book").objectID }
/// let book = try await main.perform { ctx in try ctx.existingObject(with: id)["title"] }
/// ```
public struct ObjectID: Sendable, Hashable, Codable, CustomStringConvertible, Comparable {
    /// The name of the object's entity.
    public let entityName: String
    /// The primary key (positive) of a permanent ID, or a process-wide unique negative number for a temporary one.
    public let rawKey: Int64

    private static let temporaryCounter = Atomic<Int64>(0)

    /// The permanent ID of the stored row `rawKey` (positive) of `entityName`: what a store hands back for a row it
    /// holds, or for an insert it gave a key. Temporary IDs are made by contexts only.
    ///
    /// ```swift
    /// let id = ObjectID(entityName: "Book", rawKey: 42)
    /// ```
    public init(entityName: String, rawKey: Int64) {
        self.entityName = entityName
        self.rawKey = rawKey
    }

    /// A new temporary ID for an inserted object of `entityName`.
    static func temporary(_ entityName: String) -> ObjectID {
        let next = temporaryCounter.subtract(1, ordering: .relaxed).newValue
        return ObjectID(entityName: entityName, rawKey: next)
    }

    /// Whether the object has not been saved to a store yet.
    public var isTemporaryID: Bool { rawKey < 0 }

    /// The row's primary key, for a permanent ID.
    public var primaryKey: Int64? { rawKey > 0 ? rawKey : nil }

    public var description: String {
        isTemporaryID ? "\(entityName)/t\(-rawKey)" : "\(entityName)/p\(rawKey)"
    }

    /// Hashes the key alone: keys are unique within an inheritance tree and temporary keys across the process, so
    /// the entity name (a string, costly to hash) rarely separates two IDs; equality still compares it.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawKey) }

    /// The hash a `Dictionary` or `Set` keyed by IDs uses: the key's own one-word hash, as for an `Int` key.
    ///
    /// Every context keeps several tables keyed by IDs (change sets, ID maps, versions), so each saved or fetched
    /// object is hashed several times; through ``hash(into:)`` each time builds and seeds a full `Hasher` (the
    /// seeding alone was 6% of a large save). This is the standard library's own customization point for one-word
    /// keys, with the same hash function and per-table seed, so tables stay as resistant to crafted keys as
    /// `Int`-keyed ones.
    public func _rawHashValue(seed: Int) -> Int { rawKey._rawHashValue(seed: seed) }

    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.rawKey == rhs.rawKey && lhs.entityName == rhs.entityName
    }

    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        (lhs.entityName, lhs.rawKey) < (rhs.entityName, rhs.rawKey)
    }
}

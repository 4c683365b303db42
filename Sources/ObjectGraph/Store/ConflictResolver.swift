/// A merge policy an app writes, as Core Data apps subclass `NSMergePolicy`: it settles each conflict a root
/// context's save meets, one object at a time, with the values on both sides.
///
/// ```swift
/// struct KeepTheLargerCount: ConflictResolver {
///     func resolve(_ conflict: MergeConflict) throws -> MergeResolution {
///         guard case .int(let mine) = conflict.objectValues["count"], case .int(let theirs) = conflict.storedValues["count"]
///         else { return .object }
///         return .values(["count": .int(max(mine, theirs))])
///     }
/// }
/// context.mergePolicy = .custom(KeepTheLargerCount())
/// ```
public protocol ConflictResolver: Sendable {
    /// How `conflict` is settled; throwing fails the save with that error.
    func resolve(_ conflict: MergeConflict) throws -> MergeResolution
}

/// One conflict a save met, for a ``ConflictResolver``.
public struct MergeConflict: Sendable {
    /// What kind of conflict it is.
    public enum Kind: Sendable, Hashable {
        /// The object's update met a row changed in the store since it was read (optimistic locking).
        case update
        /// The object's update met a row deleted in the store since it was read: only ``MergeResolution/store``
        /// (drop the update) settles it.
        case updateOfDeletedRow
        /// The object's deletion met a row changed in the store since it was read.
        case deletion
        /// The object, an insert, has the values of a stored row's uniqueness constraint: the stored row is the one
        /// the resolution keeps or updates.
        case uniqueness
    }

    /// The conflict's kind.
    public let kind: Kind
    /// The object (for a uniqueness conflict, the stored row the insert collides with).
    public let objectID: ObjectID
    /// The object's entity.
    public let entityName: String
    /// Every attribute of the object, as its save would write them (empty for a deletion).
    public let objectValues: [String: AttributeValue]
    /// Every attribute of the stored row (empty when it was deleted).
    public let storedValues: [String: AttributeValue]
    /// The attributes the object changed since it was read (all of an insert's).
    public let changedKeys: [String]
}

/// How a ``ConflictResolver`` settles a conflict.
public enum MergeResolution: Sendable, Hashable {
    /// The object wins: its whole row is written (its deletion goes ahead; an insert updates the stored row).
    case object
    /// The store wins: the object takes the stored row, and its change is dropped.
    case store
    /// The stored row with these attributes set is written (an insert's collision: the stored row updated with
    /// them), and the object takes it.
    case values([String: AttributeValue])
}

/// A ``ConflictResolver`` as a ``MergePolicy`` value: equal only to itself.
public struct CustomMergePolicy: Sendable, Hashable {
    /// The resolver.
    public let resolver: any ConflictResolver
    private let identity = Identity()

    private final class Identity: Sendable {}

    /// Wraps `resolver`.
    public init(_ resolver: any ConflictResolver) { self.resolver = resolver }

    public static func == (lhs: CustomMergePolicy, rhs: CustomMergePolicy) -> Bool { lhs.identity === rhs.identity }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(identity)) }
}

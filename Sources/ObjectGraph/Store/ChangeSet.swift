/// Everything one save writes, as Sendable values: what a context hands to its store (or, nested, to its parent).
public struct ChangeSet: Sendable {
    /// One object's row as it should be after the save.
    public struct Row: Sendable {
        /// The object; a temporary ID for an insert that has no permanent ID yet.
        public var objectID: ObjectID
        /// The version the context last saw (0 for an insert): a mismatch at save is a conflict.
        public var version: Int64
        /// All attribute values, in the entity's attribute order.
        public var values: AttributeValues
        /// All to-one destinations, in slot order.
        public var toOne: [ObjectID?]
        /// For an update, the attributes that changed (indexes); inserts write everything.
        public var changedAttributes: [Int]
        /// For an update, the to-one slots that changed.
        public var changedToOne: [Int]
        /// For an update, the attribute values as read (what store-trump merging compares the stored row with).
        public var committedValues: AttributeValues = []

        /// The changed attributes and to-one slots a store keeps, of an update of an `entity` object: transient
        /// attributes and the transient to-ones (the last slots) are in memory only.
        package func storedChanges(of entity: ModelEntity) -> (attributes: [Int], toOneSlots: [Int]) {
            (changedAttributes.filter { !entity.attributes[$0].isTransient }, changedToOne.filter { $0 < entity.storedToOneCount })
        }
    }

    /// The new contents of one to-many relationship whose storage is not the destination's to-one column alone: a
    /// join table, or the positions of an ordered one-to-many.
    public struct ToManyContents: Sendable {
        /// The object owning the relationship.
        public var objectID: ObjectID
        /// The relationship's name on that object's entity.
        public var relationship: String
        /// The destinations, in order.
        public var destinations: [ObjectID]

        /// The relationship these contents are of, on the entity of `owner` (the owner's ID as the store writes it).
        package func modelRelationship(of owner: ObjectID, in model: Model) throws -> ModelRelationship {
            let entity = try model.entity(named: owner.entityName)
            guard let found = entity.relationship(named: relationship) else {
                throw ObjectGraphError.unknownKey(entity: entity.name, key: relationship)
            }
            return found
        }
    }

    /// Objects to insert.
    public var inserted: [Row] = []
    /// Objects to update.
    public var updated: [Row] = []
    /// Objects to delete, with the version the context last saw.
    public var deleted: [(objectID: ObjectID, version: Int64)] = []
    /// To-many relationships whose contents changed (the store rewrites those it keeps in join tables or order
    /// columns; a parent context reads all of them).
    public var toMany: [ToManyContents] = []
    /// Objects the save writes nothing for whose rows must still be at the version the context read (Core Data's
    /// `detectConflicts(for:)`): a row moved on or gone is a conflict.
    public var checked: [(objectID: ObjectID, version: Int64)] = []
    /// Lookups for contexts that keep the change set as a pending layer.
    public internal(set) var index = ChangeSetIndex()
    /// What happens when stored rows changed since they were read.
    public var mergePolicy: MergePolicy = .error
    /// Who made the change set, as persistent history records it: the saving context's author and name.
    public var source = TransactionSource()
    /// Temporary IDs already settled (inserts a merge policy turned into updates of existing rows).
    public var presetIDs: [ObjectID: ObjectID] = [:]
    /// How many ID-assigning saves the coordinator had counted when the IDs here were last current: a save since
    /// then may have made some of its temporary IDs permanent, and a context keeping the set as a layer renames them
    /// before reading it (see `ContextState.layers`).
    var namesCurrentAt = 0

    /// Whether the change set writes nothing.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && toMany.isEmpty }
}

/// What a store reports after writing a change set.
///
/// A store written outside this package builds one as it writes:
///
/// ```swift
/// var result = SaveResult()
/// result.permanentIDs = PermanentIDMap(newKeys)     // [temporary ID: permanent ID], one per insert
/// result.recordUpdate(of: row.objectID, version: newVersion)
/// ```
public struct SaveResult: Sendable {
    /// An empty result: nothing inserted, updated or refreshed.
    public init() {}

    /// Records that the save wrote the updated row `objectID` at `version` (its version before plus one).
    public mutating func recordUpdate(of objectID: ObjectID, version: Int64) { updatedRows.append((objectID, version)) }

    /// The permanent ID each temporary ID became.
    public var permanentIDs: PermanentIDMap = [:]
    /// The updated rows the store wrote, each with its new version, in the order it wrote them. Inserted rows are
    /// at version 1 and not listed (a large save would otherwise list every new row for nothing).
    package var updatedRows: [(objectID: ObjectID, version: Int64)] = []
    /// The new version of every updated row, by ID (built from the rows written: a save reads them in order, and
    /// a table filled and read by ID for 50,000 updates cost a cache miss per row each way).
    public var versions: [ObjectID: Int64] {
        Dictionary(updatedRows.lazy.map { ($0.objectID, $0.version) }, uniquingKeysWith: { _, last in last })
    }
    /// Rows whose stored values differ from what the context wrote, after a merge policy resolved a conflict.
    public var refreshed: [ObjectID: Snapshot] = [:]
    /// Objects a child's save named that its parent had deleted for good: the parent let go of the child's rows of
    /// them, and of them in other objects' lists; the child lets go of them too.
    package var discarded: Set<ObjectID> = []
}

/// How a root context's save resolves rows that changed in the store since they were read (optimistic locking),
/// and inserts that collide with a stored row's uniqueness constraint.
public enum MergePolicy: Sendable, Hashable {
    /// Fail the save, listing every conflicting object, its keys, and the stored and in-memory values (the default).
    case error
    /// Per property: the object's changed values win; the other properties take the stored values. A colliding
    /// insert updates the stored row (an upsert).
    case mergeByPropertyObjectTrump
    /// Per property: properties changed in the store keep the stored values; the object's other changes are
    /// written. A colliding insert takes the stored row's values.
    case mergeByPropertyStoreTrump
    /// The object's whole row replaces the stored one.
    case overwrite
    /// The object's conflicting changes are dropped: it takes the stored values.
    case rollback
    /// The app's own rules, as a subclass of Core Data's `NSMergePolicy` (see ``ConflictResolver``).
    case custom(CustomMergePolicy)

    /// The app's own rules: `resolver` settles each conflict.
    ///
    /// ```swift
    /// context.mergePolicy = .custom(KeepTheLargerCount())
    /// ```
    public static func custom(_ resolver: some ConflictResolver) -> MergePolicy { .custom(CustomMergePolicy(resolver)) }
}

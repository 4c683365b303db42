/// Everything one save writes, as Sendable values: what a context hands to its store (or, nested, to its parent).
public struct ChangeSet: Sendable {
    /// One object's row as it should be after the save.
    public struct Row: Sendable {
        /// The object; a temporary ID for an insert that has no permanent ID yet.
        public var objectID: ObjectID
        /// The version the context last saw (0 for an insert): a mismatch at save is a conflict.
        public var version: Int64
        /// All attribute values, in the entity's attribute order.
        public var values: [AttributeValue]
        /// All to-one destinations, in slot order.
        public var toOne: [ObjectID?]
        /// For an update, the attributes that changed (indexes); inserts write everything.
        public var changedAttributes: [Int]
        /// For an update, the to-one slots that changed.
        public var changedToOne: [Int]
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
    }

    /// Objects to insert.
    public var inserted: [Row] = []
    /// Objects to update.
    public var updated: [Row] = []
    /// Objects to delete, with the version the context last saw.
    public var deleted: [(objectID: ObjectID, version: Int64)] = []
    /// To-many relationships to rewrite.
    public var toMany: [ToManyContents] = []

    /// Whether the change set writes nothing.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && toMany.isEmpty }
}

/// What a store reports after writing a change set.
public struct SaveResult: Sendable {
    /// The permanent ID each temporary ID became.
    public var permanentIDs: [ObjectID: ObjectID] = [:]
    /// The new version of every inserted or updated row, by (permanent) ID.
    public var versions: [ObjectID: Int64] = [:]
}

import Foundation

/// The results of a ``FetchedResultsController`` at one moment, by object ID: Sendable, so it can go to any
/// queue (a view model on the main actor, a websocket writer).
public struct FetchedResultsSnapshot: Sendable, Hashable {
    /// One section: its name (the section key's value as text, "" for nil) and its objects' IDs in order.
    public struct Section: Sendable, Hashable {
        public var name: String
        public var objectIDs: ObjectIDList

        /// A section of these IDs.
        public init(name: String, objectIDs: ObjectIDList) {
            self.name = name
            self.objectIDs = objectIDs
        }
    }

    /// The sections in order; one unnamed section when the controller has no section key.
    public var sections: [Section]

    /// Every object's ID, section after section.
    public var objectIDs: [ObjectID] { sections.flatMap(\.objectIDs) }

    /// The number of objects.
    public var count: Int { sections.reduce(0) { $0 + $1.objectIDs.count } }
}

/// How one object moved in the results between two snapshots, as NSFetchedResultsController reports it: `indexPath`
/// is in the previous snapshot, `newIndexPath` in the new one (each `[section, item]`).
public struct FetchedResultsObjectChange: Sendable, Hashable {
    /// The kinds of change.
    public enum Kind: Sendable, Hashable {
        /// The object entered the results (newly inserted, or changed to match).
        case insert
        /// The object left the results (deleted, or changed not to match).
        case delete
        /// The object moved to another place (a sort key changed, or it changed section).
        case move
        /// The object changed in place.
        case update
    }

    public var kind: Kind
    /// The object's ID in the new snapshot (its ID in the previous one is in the change's `renamedIDs`, if it changed).
    public var objectID: ObjectID
    /// Where it was: for delete, move and update.
    public var indexPath: IndexPath?
    /// Where it is: for insert, move and update.
    public var newIndexPath: IndexPath?
}

/// A section that appeared or disappeared.
public struct FetchedResultsSectionChange: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case insert, delete }
    public var kind: Kind
    /// The section's name.
    public var name: String
    /// Its index: in the previous snapshot for a delete, in the new one for an insert.
    public var index: Int
}

/// One diff of a ``FetchedResultsController``'s results, with the snapshot it leads to.
///
/// Applied to the previous snapshot, it gives the new one: rename the IDs in `renamedIDs` (objects a save gave
/// permanent IDs), then apply `difference` to the flat list of IDs; or use the section and object changes as
/// NSFetchedResultsControllerDelegate's callbacks would (deletes at old index paths, then inserts at new ones).
public struct FetchedResultsChange: Sendable {
    /// The results after the change.
    public var snapshot: FetchedResultsSnapshot
    /// Sections that appeared or disappeared.
    public var sectionChanges: [FetchedResultsSectionChange]
    /// Objects inserted, deleted, moved and updated.
    public var objectChanges: [FetchedResultsObjectChange]
    /// The change of the flat list of IDs (after `renamedIDs`), moves as a removal and an insertion associated.
    public var difference: CollectionDifference<ObjectID>
    /// Objects whose ID changed (temporary to permanent, when this context's inserts were saved): old to new.
    public var renamedIDs: [ObjectID: ObjectID]

    /// Whether nothing changed.
    public var isEmpty: Bool { sectionChanges.isEmpty && objectChanges.isEmpty && difference.isEmpty && renamedIDs.isEmpty }
}

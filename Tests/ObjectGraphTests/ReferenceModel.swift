/// The semantics of saving, pushing and merging, small enough to be obviously right: the store as a dictionary of
/// rows, each context as its pending changes over what lies below it. `ReferenceModelTests` drives the real graph and
/// this model with the same random operations and checks after every step that they agree.
///
/// The rules it encodes are those ARCHITECTURE.md states ("What a context shows, and how saves combine"); each rule
/// is at the operation that applies it here.
/// Objects are named by a serial number given at insert, which no operation changes. Each row has a to-one link,
/// `next` (the serial it points to, or ``none``), whose inverse to-many (`previous`) is derived from the rows a
/// context shows; deleting an object nullifies the links to it, as the relationship's rule says.
struct ReferenceModel {
    typealias Row = [String: Int]
    /// The attributes an update step changes.
    static let keys = ["title", "pages"]
    /// A `next` that points nowhere.
    static let none = -1

    /// One context's pending object: what it read, what its children's saves pushed into it, and what it changed.
    struct Pending {
        var snapshot: Row
        var pushed: Row = [:]
        var changed: Row = [:]
        var isInserted = false
        var isDeleted = false
        /// Whether the context ever changed it (a value set back keeps it held, as Core Data keeps such an object
        /// among its updated objects, until a save, a rollback or a merge of a save of it).
        var isHeld = false
        /// What the object shows before this context's own edits.
        var base: Row { snapshot.merging(pushed) { $1 } }
        var values: Row { base.merging(changed) { $1 } }
        /// Every key this context will write: pushed or changed.
        var written: Row { pushed.merging(changed) { $1 } }
        var isChange: Bool { isInserted || isDeleted || !pushed.isEmpty || !changed.isEmpty }
        var isKept: Bool { isChange || isHeld }
    }

    struct Context {
        var parent: Int?
        var pending: [Int: Pending] = [:]
        /// What this context deleted for good (unsaved inserts it deleted, deletions it saved): a child's later
        /// change to one does not bring it back.
        var discarded: Set<Int> = []
    }

    var store: [Int: Row] = [:]
    /// Every object a save put in the store, deleted since or not.
    var everStored: Set<Int> = []
    var contexts: [Context]

    init(parents: [Int?]) { contexts = parents.map { Context(parent: $0) } }

    /// What `context` shows: serial to values.
    func view(_ context: Int) -> [Int: Row] {
        var shown = contexts[context].parent.map(view) ?? store
        for (serial, pending) in contexts[context].pending {
            if pending.isDeleted {
                shown[serial] = nil
            } else {
                shown[serial] = pending.values
            }
        }
        return shown
    }

    mutating func insert(_ context: Int, serial: Int, values: Row) {
        contexts[context].pending[serial] = Pending(snapshot: values.merging(["next": Self.none]) { given, _ in given }, isInserted: true)
    }

    /// The objects `context` shows whose `next` is `serial`: its inverse to-many there.
    func previous(_ serial: Int, in context: Int) -> Set<Int> {
        Set(view(context).filter { $0.value["next"] == serial }.keys)
    }

    /// The nullify rule of `next`'s inverse: deleting `serial` in `context` unlinks every other object the context
    /// shows pointing at it, as changes of that context (Core Data's delete propagation).
    private mutating func nullifyLinks(to serial: Int, in context: Int) {
        for other in previous(serial, in: context).sorted() where other != serial {
            update(context, serial: other, key: "next", value: Self.none)
        }
    }

    /// Registers the object as `context` shows it now, if it is not pending there yet.
    private mutating func touch(_ context: Int, _ serial: Int) {
        if contexts[context].pending[serial] == nil, let shown = view(context)[serial] {
            contexts[context].pending[serial] = Pending(snapshot: shown)
        }
    }

    /// A key set to the value the object read is no change (and an object left with none is not pending).
    mutating func update(_ context: Int, serial: Int, key: String, value: Int) {
        touch(context, serial)
        guard var pending = contexts[context].pending[serial] else { return }
        // Setting the value it shows is no change at all; another value is, even when it is the one read.
        guard pending.values[key] != value else {
            contexts[context].pending[serial] = pending.isKept ? pending : nil
            return
        }
        if !pending.isInserted && pending.base[key] == value { pending.changed[key] = nil } else { pending.changed[key] = value }
        pending.isHeld = true
        contexts[context].pending[serial] = pending
    }

    /// A deleted unsaved insert is gone for good: a child's later save of a change to it does not bring it back.
    mutating func delete(_ context: Int, serial: Int) {
        nullifyLinks(to: serial, in: context)
        if contexts[context].pending[serial]?.isInserted == true {
            contexts[context].pending[serial] = nil
            contexts[context].discarded.insert(serial)
            return
        }
        touch(context, serial)
        contexts[context].pending[serial]?.isDeleted = true
    }

    mutating func rollback(_ context: Int) { contexts[context].pending = [:] }

    /// A child's save into its parent; returns nothing (a child's save cannot fail here).
    ///
    /// A link the child shows to an object the parent deleted for good arrives as no link: no row will ever have
    /// that object, and the parent's save would otherwise fail on it. The child's deletions unlink, in the parent,
    /// every row the parent shows once the whole save has arrived, the save's own rows included (a link that reached
    /// the child from below after its deletion).
    mutating func pushToParent(_ context: Int) {
        guard let parent = contexts[context].parent else { return }
        // The save runs the delete rules again for what is left: a link this context shows to its own deletion,
        // which reached it from below after the deletion, is nullified as its change.
        for (serial, change) in contexts[context].pending.sorted(by: { $0.key < $1.key }) where change.isDeleted {
            nullifyLinks(to: serial, in: context)
        }
        let gone = contexts[parent].discarded
        defer {
            for (serial, change) in contexts[context].pending where change.isDeleted { nullifyLinks(to: serial, in: parent) }
            contexts[context].pending = [:]
        }
        for (serial, var change) in contexts[context].pending.sorted(by: { $0.key < $1.key }) {
            if let next = change.values["next"], gone.contains(next), change.isInserted || change.written["next"] != nil {
                change.changed["next"] = Self.none
            }
            if change.isDeleted {
                delete(parent, serial: serial)
                // Hidden in the parent by a deletion further down, the child's deletion is still the parent's own:
                // it stands when that other one is rolled back.
                if contexts[parent].pending[serial] == nil {
                    contexts[parent].pending[serial] = Pending(snapshot: change.snapshot, isDeleted: true)
                }
                contexts[context].discarded.insert(serial)
            } else if change.isInserted {
                contexts[parent].pending[serial] = Pending(snapshot: change.values, isInserted: true)
            } else if contexts[parent].pending[serial]?.isDeleted == true || contexts[parent].discarded.contains(serial) {
                // The parent deleted it since (pending, or saved on): a deletion is not undone by a later change.
                continue
            } else if !change.written.isEmpty {
                touch(parent, serial)
                // Gone below since the child read it (another root's deletion, merged here): the parent keeps the
                // change, and its save to the store will fail.
                var pending = contexts[parent].pending[serial] ?? {
                    // Shown from the child's row alone: a link it holds to an object the parent deleted for good
                    // arrives as no link, as one the child wrote does.
                    var snapshot = change.snapshot
                    if let next = snapshot["next"], gone.contains(next) { snapshot["next"] = Self.none }
                    return Pending(snapshot: snapshot)
                }()
                if pending.isInserted {
                    pending.changed.merge(change.written) { $1 }
                } else {
                    pending.pushed.merge(change.written) { $1 }
                    for key in change.written.keys { pending.changed[key] = nil }
                }
                contexts[parent].pending[serial] = pending
            }
        }
    }

    /// A root's save to the store. Returns the serials it updated and deleted, or nil when it must fail: it
    /// changes or deletes an object the store no longer has.
    ///
    /// A link to an object the store does not have after the save refuses it too (the store's foreign key, checked
    /// at commit); a row the save deletes leaves the links other rows hold to it null (`ON DELETE SET NULL`), which
    /// the save does not announce: the saving context unlinked what it showed pointing there.
    mutating func saveRoot(_ context: Int) -> (updated: [Int: Row], inserted: Set<Int>, deleted: Set<Int>)? {
        // The save runs the delete rules again for what is left: a link a child pushed after this context deleted
        // its destination is nullified, as the deletion's rule nullified the links there when it was made.
        let deletedHere = Set(contexts[context].pending.filter(\.value.isDeleted).keys)
        for (serial, change) in contexts[context].pending.sorted(by: { $0.key < $1.key })
        where !change.isDeleted && change.values["next"].map(deletedHere.contains) == true {
            update(context, serial: serial, key: "next", value: Self.none)
        }
        let pending = contexts[context].pending
        if pending.contains(where: { serial, change in !change.isInserted && !change.isDeleted && store[serial] == nil }) { return nil }
        let remaining = Set(store.keys).subtracting(pending.filter(\.value.isDeleted).keys).union(pending.filter(\.value.isInserted).keys)
        for (_, change) in pending where !change.isDeleted {
            let next = change.isInserted ? change.values["next"] : change.written["next"]
            if let next, next != Self.none, !remaining.contains(next) { return nil }
        }
        var updated: [Int: Row] = [:]
        var inserted: Set<Int> = []
        var deleted: Set<Int> = []
        for (serial, change) in pending {
            if change.isDeleted {
                // A row another save deleted first is announced again: other roots drop what they still hold of it.
                store.removeValue(forKey: serial)
                if everStored.contains(serial) { deleted.insert(serial) }
                contexts[context].discarded.insert(serial)
            } else if change.isInserted {
                store[serial] = change.values
                everStored.insert(serial)
                inserted.insert(serial)
            } else if !change.written.isEmpty {
                store[serial]?.merge(change.written) { $1 }
                updated[serial] = store[serial]
            }
        }
        for (serial, row) in store where row["next"].map({ $0 != Self.none && store[$0] == nil }) == true { store[serial]?["next"] = Self.none }
        contexts[context].pending = [:]
        return (updated, inserted, deleted)
    }

    /// A batch request on the store (Core Data's `NSBatchUpdateRequest` and `NSBatchDeleteRequest`): the rows whose
    /// title is `title` take `value` for `pages`, or, with `value` nil, leave the store. No context changes until it
    /// merges the result (see ``merge(_:updated:deleted:)``); returns what every root then merges.
    mutating func batch(title: Int, pages value: Int?) -> (updated: [Int: Row], deleted: Set<Int>) {
        let selected = store.filter { $0.value["title"] == title }.keys
        guard let value else {
            for serial in selected { store[serial] = nil }
            // The request applies the delete rules: rows linking to a deleted one are unlinked, and announced.
            var unlinked: [Int: Row] = [:]
            for (serial, row) in store where row["next"].map({ $0 != Self.none && store[$0] == nil }) == true {
                store[serial]?["next"] = Self.none
                unlinked[serial] = store[serial]
            }
            return (unlinked, Set(selected))
        }
        var updated: [Int: Row] = [:]
        for serial in selected {
            store[serial]?["pages"] = value
            updated[serial] = store[serial]
        }
        return (updated, [])
    }

    /// A root merging another root's save (its updated rows, its deleted objects).
    ///
    /// A merged deletion runs the deleted object's rules here too (Core Data's merge "invokes `delete(_:)` on those
    /// which have been deleted"): what the context holds linking to it lets go. A link it read from the store is
    /// what the store now holds (the save nulled it); a link of its own, or one a child pushed, becomes its change
    /// to none.
    mutating func merge(_ context: Int, updated: [Int: Row], inserted: Set<Int> = [], deleted: Set<Int>) {
        for serial in deleted where contexts[context].pending[serial]?.isInserted != true {
            // Its own pending deletion is done: a child's later change to it does not bring it back.
            if contexts[context].pending[serial]?.isDeleted == true { contexts[context].discarded.insert(serial) }
            contexts[context].pending[serial] = nil
        }
        for (serial, row) in updated {
            contexts[context].pending[serial]?.snapshot = row
            // A change is a value that differs from what the object read (as Core Data's `changedValues`): a key
            // the merged row now holds at the context's own value is no change any more.
            if var pending = contexts[context].pending[serial], !pending.isInserted {
                pending.changed = pending.changed.filter { pending.base[$0.key] != $0.value }
                contexts[context].pending[serial] = pending
            }
            // Held with nothing changed: it lets go, and shows the store's row.
            if contexts[context].pending[serial]?.isChange == false { contexts[context].pending[serial] = nil }
        }
        // After the updated rows, as Core Data's merge refreshes the updated objects before it deletes: a link of the
        // context's own to a deleted object becomes none even where the merged row links elsewhere.
        for (serial, pending) in contexts[context].pending.sorted(by: { $0.key < $1.key })
        where !pending.isDeleted && pending.values["next"].map(deleted.contains) == true {
            if pending.snapshot["next"].map(deleted.contains) == true { contexts[context].pending[serial]?.snapshot["next"] = Self.none }
            if contexts[context].pending[serial]!.values["next"] != Self.none { update(context, serial: serial, key: "next", value: Self.none) }
        }
        // A merged row linking to an object this context deleted and has not saved: the deletion's rule runs over it
        // too, as the context's save would run it again; the link becomes the context's change to none.
        let deletedHere = Set(contexts[context].pending.filter(\.value.isDeleted).keys)
        guard !deletedHere.isEmpty else { return }
        let shown = view(context)
        for serial in Set(updated.keys).union(inserted).sorted() where shown[serial]?["next"].map(deletedHere.contains) == true {
            update(context, serial: serial, key: "next", value: Self.none)
        }
    }
}

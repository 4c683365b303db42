import Foundation
import Observation

/// An object of the graph: one row of one entity, confined to the context that registered it.
///
/// A managed object is deliberately not `Sendable`: the compiler refuses to let it leave its context's `perform`
/// closure. Pass its ``objectID`` instead. Every accessor also checks at run time that it runs on its context's
/// executor (see ``ConcurrencyChecks``).
///
/// Declare typed entities with the `@Entity` macro; for models built at run time, use the untyped accessors:
///
/// ```swift
/// let book = ctx.insert(try model.entity(named: "Book"))
/// try book.setValue("Dune", forKey: "title")
/// let title = try book.value(forKey: "title")     // .string("Dune")
/// ```
open class ManagedObject: Hashable, CustomStringConvertible {
    // `@exclusivity(unchecked)` for the reason `values` is: it is set once more, at the insert of an object made by
    // its class's initializer, by this module on the inserting context's executor, before any context reads it.
    /// The object's entity. An object made by an `@Entity` class's own initializer has its class's entity until it
    /// is inserted, then the context's model's.
    @exclusivity(unchecked) public final internal(set) var entity: ModelEntity
    /// The object's ID: temporary until saved to the store (or given one by `obtainPermanentIDs`), permanent after;
    /// once any context's save makes it permanent, every context of the tree sees the permanent one.
    public internal(set) var objectID: ObjectID {
        get {
            if storedKey < 0, let state { state.adoptPermanentIDsIfNeeded() }
            return storedObjectID
        }
        set { storedObjectID = newValue }
    }
    /// The ID as stored, without adopting permanent IDs.
    var storedObjectID: ObjectID {
        get { ObjectID(entityName: entity.name, rawKey: storedKey) }
        set { storedKey = Self.key(of: newValue, for: entity) }
    }
    /// The key of `id`, which must be an ID of `entity`: the object keeps no name of its own to hold another's.
    private static func key(of id: ObjectID, for entity: ModelEntity) -> Int64 {
        precondition(id.entityName == entity.name, "object of \(entity.name) given the ID \(id)")
        return id.rawKey
    }
    /// The key of the object's ID; its entity name is ``entity``'s (an ID's name is a string of two words, and an
    /// object without it is a size class smaller: less memory to fill, read and free per row of a large fetch). See
    /// ``values`` for `@exclusivity(unchecked)`.
    @exclusivity(unchecked) var storedKey: Int64
    /// Whether the object is inserted and not yet saved.
    @exclusivity(unchecked) public internal(set) var isInserted = false
    /// Whether the object is deleted (pending until save, then for good).
    @exclusivity(unchecked) public internal(set) var isDeleted = false
    /// Whether the attribute values are not loaded yet. (The flags sit together so they share one word: a smaller
    /// object is a cheaper allocation and less memory touched per row of a large fetch.)
    @exclusivity(unchecked) var isFaultStorage: Bool
    /// Whether the object sits in its context's updated set.
    @exclusivity(unchecked) var isMarkedUpdated = false
    /// ``isListedUpdated``, ``hasCommitted``, ``currentIsCommitted``, ``isGatheredForPrefetch``,
    /// ``isMarkedForListsOnly`` and ``isInaccessible``, a bit each: with
    /// ``heldSingleIndex`` beside them, the flags still share one word.
    @exclusivity(unchecked) private var bookkeepingFlags: UInt8 = 0
    /// Why ``state`` is nil, for the error message.
    var detachReason = DetachReason.contextDeallocated
    /// The relationship whose destinations ``heldSingle`` holds; ``HeldIndex/none`` or ``HeldIndex/table`` when it
    /// holds nothing. `@exclusivity(unchecked)` for the reason ``heldSingle`` is.
    @exclusivity(unchecked) var heldSingleIndex = HeldIndex.none
    /// The object's Observation registrar, made on the first tracked read (see `ManagedObject+Observation`). Boxed:
    /// `ObservationRegistrar` is another module's resilient type, and testing an optional of it for nil went through
    /// its value witnesses on every setter (3% of a large insert); a box is tested by its pointer.
    /// `@exclusivity(unchecked)` for the reason ``values`` is: every setter reads it, only on the context's executor.
    @exclusivity(unchecked) var observationRegistrar: ObservationRegistrarBox?
    /// The destinations this object keeps alive (see ``HeldDestination``), while they are one relationship's: a walk
    /// across one relationship then holds them with no storage of their own (an array per book, made and freed, was
    /// a tenth of walking 200,000 books to their authors). Once a second relationship's are held, all of them move to
    /// ``ObjectExtras/heldDestinations``. `@exclusivity(unchecked)` for the reason ``values`` is; releasing what it
    /// held never reaches back into it (a freed object's destinations wait in its context's queue).
    @exclusivity(unchecked) var heldSingle = HeldDestination.nothing

    /// Whether the context's list of updated objects holds an entry for the object, marked or not (see
    /// `UpdatedObjects`).
    final var isListedUpdated: Bool {
        get { bookkeepingFlags & 1 != 0 }
        set { bookkeepingFlags = newValue ? bookkeepingFlags | 1 : bookkeepingFlags & ~1 }
    }
    /// Whether a prefetch has gathered the object into the level it loads next (see `ContextState.prefetch`): a
    /// mark on the object, where a set of the objects gathered so far was checked for each of 200,000 sources.
    final var isGatheredForPrefetch: Bool {
        get { bookkeepingFlags & 8 != 0 }
        set { bookkeepingFlags = newValue ? bookkeepingFlags | 8 : bookkeepingFlags & ~8 }
    }
    /// Whether the object is marked updated only for changes to its to-many lists (what linking another object to
    /// it does through the inverse): its values still follow below. An edit of an attribute or a to-one clears it,
    /// and it stays clear while the object is marked, set back or not.
    final var isMarkedForListsOnly: Bool {
        get { bookkeepingFlags & 16 != 0 }
        set { bookkeepingFlags = newValue ? bookkeepingFlags | 16 : bookkeepingFlags & ~16 }
    }
    /// Whether the object is an inaccessible fault filled with nil and zero values (see
    /// ``ObjectContext/shouldDeleteInaccessibleFaults``): no row stands behind it.
    final var isInaccessible: Bool {
        get { bookkeepingFlags & 32 != 0 }
        set { bookkeepingFlags = newValue ? bookkeepingFlags | 32 : bookkeepingFlags & ~32 }
    }
    /// Whether ``committed`` holds a row.
    final var hasCommitted: Bool {
        get { bookkeepingFlags & 2 != 0 }
        set { bookkeepingFlags = newValue ? bookkeepingFlags | 2 : bookkeepingFlags & ~2 }
    }
    /// Whether the committed row's values and destinations are the current ones, not kept apart: true from a fetch
    /// or a save until the next change (the object then holds its row's storage once, not twice).
    final var currentIsCommitted: Bool {
        get { bookkeepingFlags & 4 != 0 }
        set { bookkeepingFlags = newValue ? bookkeepingFlags | 4 : bookkeepingFlags & ~4 }
    }

    /// The context's bookkeeping; nil once the context forgot the object (reset, rollback of an insert, saved delete,
    /// the context's deallocation).
    ///
    /// Strong, not weak: a weak reference gives the bookkeeping a side table, and then every access to every object
    /// pays an atomic load through it plus slow-path reference counting (a sixth of a large fetch). The cycle this
    /// makes with the change sets (which hold changed objects) is cut when the context goes: its `isolated deinit`
    /// detaches every object on the context's own executor.
    @exclusivity(unchecked) var state: ContextState?
    /// Current attribute values (meaningless while a fault).
    ///
    /// `@exclusivity(unchecked)` on the storage of this, of ``toOne`` and of ``committed``, and on the ID, flags and
    /// state above: Swift checks at run time that no two accesses to a class's stored property overlap, which cost a
    /// tenth of a large insert (every setter modifies `values`), then a twentieth more for the flags every setter
    /// reads. It is sound to skip: these properties are modified only by this module's code on the context's executor
    /// (confinement is checked on every access; the check is per thread, so it never caught races between threads
    /// anyway), and none of that code reaches the same property again while modifying it (a replaced value's release
    /// runs no code of ours).
    var values: AttributeValues {
        _read { yield currentValues }
        set {
            keepCommittedApart()
            currentValues = newValue
        }
        _modify {
            keepCommittedApart()
            yield &currentValues
        }
    }
    /// Current to-one destinations (meaningless while a fault).
    var toOne: [ObjectID?] {
        _read { yield currentDestinations }
        set {
            keepCommittedApart()
            currentDestinations = newValue
        }
        _modify {
            keepCommittedApart()
            yield &currentDestinations
        }
    }
    /// The storage behind ``values`` and ``toOne``; written directly only where the committed row is set with them.
    @exclusivity(unchecked) var currentValues: AttributeValues
    @exclusivity(unchecked) var currentDestinations: [ObjectID?]

    /// Before the current row changes: a committed row that was the current one gets its own copy (sharing storage).
    @inline(__always)
    func keepCommittedApart() {
        guard currentIsCommitted else { return }
        currentIsCommitted = false
        let extras = madeExtras()
        (extras.committedAttributes, extras.committedDestinations) = (currentValues, currentDestinations)
    }
    /// What few objects use, made on first use (see ``ObjectExtras``); nil in most objects.
    @exclusivity(unchecked) var extras: ObjectExtras?

    /// The object's extras, made now if it has none.
    @inline(__always)
    func madeExtras() -> ObjectExtras {
        if let extras { return extras }
        let made = ObjectExtras()
        extras = made
        return made
    }
    /// Loaded to-many relationships, by relationship index.
    var toMany: ToManyTable {
        get { extras?.toMany ?? ToManyTable() }
        set {
            // Emptying what was never loaded makes no box.
            if newValue.isEmpty && extras == nil { return }
            madeExtras().toMany = newValue
        }
        _modify { yield &madeExtras().toMany }
    }
    /// To-many contents as last loaded or saved, by relationship index.
    var committedToMany: ToManyTable {
        get { extras?.committedToMany ?? ToManyTable() }
        set {
            if newValue.isEmpty && extras == nil { return }
            madeExtras().committedToMany = newValue
        }
        _modify { yield &madeExtras().committedToMany }
    }
    /// The row as last stored or fetched; nil for an inserted object. Kept in parts, without the row's ID (the
    /// object's own) and the optional's padding, and the parts in ``extras`` unless they are the current row's.
    var committed: Snapshot? {
        get {
            guard hasCommitted else { return nil }
            return Snapshot(objectID: storedObjectID, version: committedVersion, values: committedAttributes, toOne: committedDestinations)
        }
        set {
            // A committed row set here is kept apart from the current one (see ``commitCurrentRow(version:)``).
            currentIsCommitted = false
            if let newValue {
                (hasCommitted, committedVersion) = (true, newValue.version)
                let extras = madeExtras()
                (extras.committedAttributes, extras.committedDestinations) = (newValue.values, newValue.toOne)
            } else {
                (hasCommitted, committedVersion) = (false, 0)
                extras?.dropCommittedRow()
            }
        }
    }

    /// Makes the current row the committed one at `version`, held once (a fetch's fill, a save's commit): the
    /// row is kept apart again only when it next changes.
    @inline(__always)
    func commitCurrentRow(version: Int64) {
        (hasCommitted, committedVersion, currentIsCommitted) = (true, version, true)
        extras?.dropCommittedRow()
    }
    /// The committed row's version (see ``committed``).
    @exclusivity(unchecked) var committedVersion: Int64 = 0
    /// `committed?.version` without building the snapshot: a save reads it for every row it writes.
    var committedVersionIfAny: Int64? { hasCommitted ? committedVersion : nil }
    /// The committed row's attribute values (see ``committed``).
    var committedAttributes: AttributeValues {
        _read {
            if currentIsCommitted {
                yield currentValues
            } else if let extras {
                yield extras.committedAttributes
            } else {
                yield .empty
            }
        }
    }
    /// The committed row's to-one destinations (see ``committed``).
    var committedDestinations: [ObjectID?] {
        _read {
            if currentIsCommitted {
                yield currentDestinations
            } else if let extras {
                yield extras.committedDestinations
            } else {
                yield []
            }
        }
    }

    /// A new object in no context, for an `@Entity` class's own initializers, as SwiftData's models are made: set
    /// its properties, then hand it to a context with ``ObjectContext/insert(_:)-(ManagedObject)``, which inserts it (and
    /// the new objects it links to) with the values it was given.
    ///
    /// ```swift
    /// @Entity final class Book: ManagedObject {
    ///     var title = ""
    ///     @Relationship(inverse: "books") var author: Author?
    ///
    ///     init(title: String, author: Author? = nil) {
    ///         super.init()
    ///         self.title = title
    ///         self.author = author
    ///     }
    /// }
    ///
    /// let book = Book(title: "Dune")
    /// try ctx.insert(book)
    /// ```
    ///
    /// Until then it has no context: its values are its own, and a link it holds shows on the other side only once
    /// both are inserted.
    public init() {
        entity = DetachedEntity.placeholder
        storedKey = 0
        isFaultStorage = false
        currentValues = .empty
        currentDestinations = []
        detachReason = .notInserted
        entity = DetachedEntity.of(type(of: self))?.entity ?? DetachedEntity.placeholder
        storedKey = ObjectID.temporary(entity.name).rawKey
        currentValues = entity.defaultValues
    }

    /// Creates an object; only contexts call this, with an ID of `entity`.
    public required init(entity: ModelEntity, objectID: ObjectID) {
        self.entity = entity
        self.storedKey = Self.key(of: objectID, for: entity)
        self.isFaultStorage = true
        self.currentValues = .empty
        self.currentDestinations = []
    }

    deinit {
        // Attached objects are released on their context's executor (confinement); the context's teardown, which
        // also runs there, detaches the rest first.
        guard let attached = state.map(Unmanaged.passUnretained) else { return }
        // Borrowed rather than retained (a retain and a release per object were a twentieth of freeing a large
        // fetch's objects): this object's `state` holds the context's state until it is destroyed, after this.
        attached._withUnsafeGuaranteedRef { state in
            if !state.isAccessible { concurrencyViolation(context: state.name) }
            if !isFaultStorage { state.materializedCount.add(-1) }
            state.registered.remove(self)
            // Moved to the queue, none left here: what is left would be released after the drain, nested.
            guard heldSingleIndex != HeldIndex.none else { return }
            if heldSingleIndex == HeldIndex.table, let extras {
                state.heldAwaitingRelease.append(contentsOf: extras.heldDestinations)
                extras.heldDestinations = []
            } else {
                state.heldAwaitingRelease.append(heldSingle)
                heldSingle = .nothing
            }
            heldSingleIndex = HeldIndex.none
            state.releaseHeldAwaitingRelease()
        }
    }

    /// Whether the object's values are not loaded yet; the first access loads them.
    public var isFault: Bool { isFaultStorage }

    /// The context the object belongs to (Core Data's `managedObjectContext`); nil once it left it: its context was
    /// reset, or its deletion was saved, or another context's save deleted its row.
    ///
    /// ```swift
    /// let id = book.objectID
    /// let owner = book.managedObjectContext   // the context that fetched it
    /// try await owner?.perform { ctx in try ctx.delete(try ctx.object(with: id)) }
    /// ```
    public var managedObjectContext: ObjectContext? { state?.owner }

    /// Whether the object has unsaved changes of its own (inserted, deleted, or changed values).
    public var hasChanges: Bool {
        isInserted || isDeleted || (isMarkedUpdated && !changedKeys().isEmpty)
    }

    /// Whether the object has saved-pending changed values.
    public var isUpdated: Bool { !isInserted && !isDeleted && isMarkedUpdated && !changedKeys().isEmpty }

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The hash a `Set` or `Dictionary` of objects uses: the address's one-word hash, as for an `Int` key, with the
    /// table's seed (the standard library's customization point that ``ObjectID`` also takes). Through
    /// ``hash(into:)`` each member built, fed and finalized a `Hasher`: a typed to-many read as a `Set` hashes each of
    /// its members, which was a twentieth of walking 200,000 books to their tags.
    public final func _rawHashValue(seed: Int) -> Int { Int(bitPattern: ObjectIdentifier(self))._rawHashValue(seed: seed) }

    public var description: String {
        "<\(entity.name) \(objectID)\(isFaultStorage ? " fault" : "")\(isDeleted ? " deleted" : "")>"
    }

    /// A hook for rules no model attribute can express; throw ``ValidationFailure`` values (or any error) to refuse
    /// the save. Called at save for inserted and updated objects; every object's failures are reported together.
    ///
    /// ```swift
    /// override func validateForSave() throws {
    ///     if pages < 1 && title.isEmpty { throw ValidationFailure(entity: "Book", objectID: objectID, key: nil, reason: "empty book") }
    /// }
    /// ```
    open func validateForSave() throws {}

    /// Called once after the object is inserted, with its default values set; override to fill in more.
    open func awakeFromInsert() {}

    /// Called when the object's values are read from below (a fetch, a fault firing, a refresh): Core Data's
    /// `awakeFromFetch()`. Set transient values derived from stored ones here; a change made here is no change of
    /// the context's.
    open func awakeFromFetch() {}

    /// Called on each inserted, updated and deleted object when its context saves, after the deletions' rules ran
    /// and before validation: Core Data's `willSave()`. A change made here is saved with the rest; change only this
    /// object (test ``hasPersistentChangedValues`` before stamping a date, or each save stamps again).
    open func willSave() {}

    /// Called on each object a save wrote (inserted, updated, deleted) once the save succeeded: Core Data's
    /// `didSave()`. A deleted object has left its context by then (``isDeleted`` is true).
    open func didSave() {}

    /// Called when the object is deleted, before its relationships' delete rules run (a cascade's objects too): Core
    /// Data's `prepareForDeletion()`. Undo here what the deletion's rules would not (a count kept elsewhere).
    open func prepareForDeletion() {}

    /// Called before the object turns into a fault (a refresh without keeping changes): Core Data's
    /// `willTurnIntoFault()`. Its values are still there.
    open func willTurnIntoFault() {}

    /// Called after the object turned into a fault: Core Data's `didTurnIntoFault()`. Let go of what was derived from
    /// its values.
    open func didTurnIntoFault() {}

    /// Checks one attribute's value at save: an inserted object's every attribute, an updated object's changed ones
    /// (Core Data's `validateValue(_:forKey:)`, which it calls for each property). Throw ``ValidationFailure`` values
    /// (or any error) to refuse the save; the model's own rules are checked as well.
    open func validateValue(_ value: AttributeValue, forKey key: String) throws {}

    /// Whether instances of `type` may run a ``validateValue(_:forKey:)`` of their own, so that a save must call it
    /// for every value: `@Entity` answers false for its class when neither its body nor an `@Entity` ancestor's
    /// mentions one (an override cannot sit in an extension), and every other class answers true. Saving skips the
    /// calls only on false: a large insert of a class without the hook then makes no call per value.
    ///
    /// Generated by `@Entity`; there is no need to write it.
    open class func _mayValidateValues(_ type: AnyClass) -> Bool { type != ManagedObject.self }

    /// Checks an inserted object at save, beside the model's rules and ``validateForSave()``: Core Data's
    /// `validateForInsert()`.
    open func validateForInsert() throws {}

    /// Checks an updated object at save, beside the model's rules and ``validateForSave()``: Core Data's
    /// `validateForUpdate()`.
    open func validateForUpdate() throws {}

    /// Checks a deleted object at save (its delete rules have run): Core Data's `validateForDelete()`. Throw to
    /// refuse the save, as a deny rule does.
    open func validateForDelete() throws {}

    // MARK: Access checks

    /// The context's bookkeeping, after checking the caller runs on its executor; traps with a message naming the
    /// entity, the object ID and the context when it does not.
    @inline(__always)
    func checkedState() throws -> ContextState {
        guard let state else {
            throw ObjectGraphError.objectInaccessible(entity: entity.name, objectID: objectID, reason: detachReason.description)
        }
        if !state.isAccessible { concurrencyViolation(context: state.name) }
        return state
    }

    func concurrencyViolation(context: String) -> Never {
        fatalError(
            "ObjectGraph concurrency violation: \(entity.name) \(storedObjectID) was accessed off the queue of its context "
                + "'\(context)'. Use the object only inside its context's perform { }, and pass its objectID elsewhere.")
    }

    /// Loads the values if the object is a fault.
    @inline(__always)
    func fulfilledState() throws -> ContextState {
        let state = try checkedState()
        if isFaultStorage { try state.fulfill(self) }
        return state
    }

    func attributeIndex(_ key: String) throws -> Int {
        if let index = entity.attributeIndex[key] { return index }
        if entity.relationshipIndex[key] != nil {
            throw ObjectGraphError.wrongPropertyKind(
                entity: entity.name, key: key, reason: "is a relationship; use object(forKey:) or objects(forKey:)")
        }
        if entity.fetchedProperties.contains(where: { $0.name == key }) {
            throw ObjectGraphError.wrongPropertyKind(entity: entity.name, key: key, reason: "is a fetched property; use objects(forKey:)")
        }
        throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
    }

    // MARK: Untyped attribute access

    /// The value of the attribute `key`, loading the object if it is a fault.
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` for a key the entity lacks, or an error when the object
    ///   can no longer be loaded.
    public func value(forKey key: String) throws -> AttributeValue {
        let index = try attributeIndex(key)
        if isNewAndDetached { return values[index] }
        _ = try fulfilledState()
        return values[index]
    }

    /// The value of the attribute `key`; reading throws like ``value(forKey:)``.
    public subscript(key: String) -> AttributeValue {
        get throws { try value(forKey: key) }
    }

    /// Sets the attribute `key`. Setting the value it already has is not a change.
    ///
    /// - Throws: ``ObjectGraphError/typeMismatch(entity:key:expected:got:)`` when the value does not fit the
    ///   attribute's type, ``ObjectGraphError/unknownKey(entity:key:)`` for a key the entity lacks.
    public func setValue(_ value: (any AttributeValueConvertible)?, forKey key: String) throws {
        let index = try attributeIndex(key)
        try setAttributeValue(value?.attributeValue ?? .null, at: index)
    }

    func setAttributeValue(_ newValue: AttributeValue, at index: Int) throws {
        if !entity.derivedAttributes.isEmpty, let derivation = entity.attributes[index].derivation {
            throw ObjectGraphError.wrongPropertyKind(
                entity: entity.name, key: entity.attributeNames[index], reason: "it is derived ('\(derivation)'): the store computes it at save")
        }
        let type = entity.attributeTypes[index]
        let value = type.coerce(newValue)
        guard type.accepts(value) else {
            throw ObjectGraphError.typeMismatch(
                entity: entity.name, key: entity.attributeNames[index], expected: type.name, got: "\(value.kindName) \(value)")
        }
        // An inserted object is written whole: no comparison, no change tracking (and, checked this way, no retain
        // of the state).
        if isInserted, !isDeleted, isLoadedAndAccessible(onThread: QueueExecutor.currentThread) {
            // The common case first, with no call: nobody tracks a new object's reads, nothing observes its context.
            if observationRegistrar == nil { values[index] = value } else { observedMutation(index) { values[index] = value } }
            noteInsertChanged()
            return
        }
        if isNewAndDetached {
            values[index] = value
            return
        }
        let state = try fulfilledState()
        guard !isDeleted || state.isApplyingDeleteRules else {
            throw ObjectGraphError.objectInaccessible(entity: entity.name, objectID: objectID, reason: "it is deleted")
        }
        if isInserted {
            observedMutation(index) { values[index] = value }
            state.noteInsertChanged(self)
            return
        }
        if values[index] == value { return }
        observedMutation(index) { values[index] = value }
        state.markUpdated(self)
    }

    /// Tells the context a pending insert's value changed (``ContextState/noteInsertChanged(_:)``), on its
    /// executor, with the state borrowed rather than retained: this object holds its state for the call, and a
    /// retain and a release per value set were a tenth of a large insert.
    @inline(__always)
    func noteInsertChanged() {
        Unmanaged.passUnretained(state.unsafelyUnwrapped)._withUnsafeGuaranteedRef { $0.noteInsertChanged(self) }
    }

    // MARK: Change tracking

    /// Whether the object's only changes are to its to-many lists: what linking another object to it (or away)
    /// does through the inverse. Its values are still those below, and so is whether it exists. An attribute or a
    /// to-one changed and set back is a change still: the object keeps its values until its save or rollback.
    var changesOnlyLists: Bool {
        isMarkedUpdated && isMarkedForListsOnly && !isInserted && !isDeleted
    }

    /// The names of attributes and relationships whose current values differ from the committed ones.
    func changedKeys() -> [String] {
        guard !isFaultStorage else { return [] }
        var keys: [String] = []
        if hasCommitted {
            for index in values.indices where values[index] != committedAttributes[index] {
                keys.append(entity.attributes[index].name)
            }
        } else {
            keys += entity.attributes.map(\.name)
        }
        for (index, relationship) in entity.relationships.enumerated() {
            if let slot = entity.toOneSlot[index] {
                let committed = hasCommitted ? committedDestinations[slot] : nil
                if toOne[slot] != committed, !(state?.isSameLink(toOne[slot], committed) ?? false) { keys.append(relationship.name) }
            } else if let current = toMany[index] {
                let before = committedToMany[index] ?? RelatedIDs()
                if !current.isSame(as: before, ordered: relationship.isOrdered) { keys.append(relationship.name) }
            }
        }
        return keys
    }

    /// The attributes whose values changed since the object was fetched or saved, with their new values.
    public func changedValues() throws -> [String: AttributeValue] {
        _ = try checkedState()
        guard !isFaultStorage else { return [:] }
        var result: [String: AttributeValue] = [:]
        for (index, attribute) in entity.attributes.enumerated() where !hasCommitted || committedAttributes[index] != values[index] {
            result[attribute.name] = values[index]
        }
        return result
    }

    /// The names of relationships whose destinations changed since the object was fetched or saved.
    public func changedRelationshipNames() throws -> Set<String> {
        _ = try checkedState()
        let attributeNames = Set(entity.attributes.map(\.name))
        return Set(changedKeys().filter { !attributeNames.contains($0) })
    }

    /// The attributes changed in the current event (since the context last processed its changes: the end of the
    /// last `perform` block, ``ObjectContext/processPendingChanges()``, a save), with the values they had then
    /// (Core Data's `changedValuesForCurrentEvent()`). An object first changed in this event compares with its
    /// committed values; an object inserted in this event has none.
    ///
    /// ```swift
    /// override func willSave() {
    ///     if let old = try? changedValuesForCurrentEvent()["title"] { print("title was \(old)") }
    /// }
    /// ```
    ///
    /// A context keeps each event's values once it sees events end: once anything observes it (an observer, a
    /// results controller, an undo manager) or this method was first called on one of its objects.
    public func changedValuesForCurrentEvent() throws -> [String: AttributeValue] {
        let state = try checkedState()
        guard !isFaultStorage else { return [:] }
        guard let start = state.trackEvents().eventStates.start(of: self)?.values else { return [:] }
        var result: [String: AttributeValue] = [:]
        for (index, attribute) in entity.attributes.enumerated() where start[index] != values[index] {
            result[attribute.name] = start[index]
        }
        return result
    }

    /// The values last saved or fetched for `keys` (every attribute when nil); empty for an unsaved insert.
    public func committedValues(forKeys keys: [String]? = nil) throws -> [String: AttributeValue] {
        let state = try checkedState()
        if isFaultStorage && !isInserted { try state.fulfill(self) }
        guard let committed else { return [:] }
        var result: [String: AttributeValue] = [:]
        for key in keys ?? entity.attributes.map(\.name) {
            result[key] = committed.values[try attributeIndex(key)]
        }
        return result
    }
}

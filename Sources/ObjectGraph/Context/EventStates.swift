/// An object as an event left it: its values and links, what an undo puts back and what
/// `changedValuesForCurrentEvent()` compares with.
struct ObjectEventState: Equatable {
    /// The attribute values; nil for an object in the context as its row below has it (a fault, or an object a
    /// rule reached without reading it): it exists, and nothing of it differs from below.
    var values: AttributeValues?
    var toOne: [ObjectID?] = []
    /// Loaded to-many lists by relationship index; unordered ones sorted, so that equal sets compare equal.
    var toMany: [Int: [ObjectID]] = [:]

    static let asStored = ObjectEventState(values: nil)

    /// `object` as it is now; nil when it is not in its context (deleted, discarded).
    init?(of object: ManagedObject, in state: ContextState) {
        guard object.state === state, !object.isDeleted else { return nil }
        guard !object.isFaultStorage else {
            self = .asStored
            return
        }
        self.init(values: object.values, toOne: object.toOne, lists: object.toMany, entity: object.entity)
    }

    /// `object` as it was last stored or read (its committed row); nil for an insert.
    init?(committedOf object: ManagedObject) {
        guard !object.isInserted else { return nil }
        guard object.hasCommitted else {
            self = .asStored
            return
        }
        self.init(values: object.committedAttributes, toOne: object.committedDestinations, lists: object.committedToMany, entity: object.entity)
    }

    private init(values: AttributeValues?) { self.values = values }

    private init(values: AttributeValues, toOne: [ObjectID?], lists: ToManyTable, entity: ModelEntity) {
        self.values = values
        self.toOne = toOne
        for (index, list) in lists { toMany[index] = entity.relationships[index].isOrdered ? list.ids : list.ids.sorted() }
    }
}

/// The objects a context changed in earlier events and has not saved, each as the last event left it: an event's
/// changes are the difference from there (or from the committed row, for an object first changed now).
///
/// Kept by the observation center, which sees every event's end; objects with nothing pending have no entry, and a
/// save or a rollback empties it (every object's start is then its committed row).
struct EventStates {
    private var states: [ObjectIdentifier: (object: ManagedObject, state: ObjectEventState?)] = [:]

    /// What `object` was when the current event began: nil for an object not in the context then.
    func start(of object: ManagedObject) -> ObjectEventState? {
        if let entry = states[ObjectIdentifier(object)] { return entry.state }
        return ObjectEventState(committedOf: object)
    }

    /// Whether `object` has changes pending, so that its next event starts from where this one leaves it.
    static func isPending(_ object: ManagedObject) -> Bool { object.isInserted || object.isDeleted || object.isMarkedUpdated }

    /// Ends the current event for `object`: its start becomes `state`; returns what the event began with.
    mutating func end(for object: ManagedObject, at state: ObjectEventState?) -> ObjectEventState? {
        let start = start(of: object)
        states[ObjectIdentifier(object)] = Self.isPending(object) ? (object, state) : nil
        return start
    }

    /// Ends the current event for an object with nothing pending: its next event starts from its committed row.
    mutating func forget(_ object: ManagedObject) {
        if !states.isEmpty { states[ObjectIdentifier(object)] = nil }
    }

    /// Whether the last event left `object` out of the context (so a pending deletion of it is not news).
    func isGone(_ object: ManagedObject) -> Bool {
        if let entry = states[ObjectIdentifier(object)] { return entry.state == nil }
        return false
    }

    mutating func removeAll() { states = [:] }
}

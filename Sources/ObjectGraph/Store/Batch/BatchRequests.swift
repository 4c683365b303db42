import PredicateFormat

/// What a batch request reports.
public enum BatchResultType: Sendable, Hashable {
    /// The number of objects the request inserted, updated or deleted.
    case count
    /// The count and the objects' IDs, with every other object it changed (cascaded deletions, nullified
    /// relationships), ready to merge into contexts.
    case objectIDs
}

/// One row of a ``BatchInsertRequest`` being filled: its values by position in the request's keys, or by name.
public struct BatchInsertRow: Sendable {
    /// The row's number, from 0.
    public internal(set) var index: Int
    var values: [AttributeValue]
    let positions: [String: Int]

    /// The value for the request's key at `position`.
    public subscript(position: Int) -> AttributeValue {
        get { values[position] }
        set { values[position] = newValue }
    }

    /// The value for `key`, one of the request's keys (setting another key is ignored and reported when the row
    /// is written).
    public subscript(key: String) -> AttributeValue {
        get { positions[key].map { values[$0] } ?? .null }
        set {
            if let position = positions[key] { values[position] = newValue } else { unknownKey = key }
        }
    }

    var unknownKey: String?
}

/// Inserts rows straight into the store, without objects or contexts (Core Data's `NSBatchInsertRequest`): for
/// imports of many rows. Attributes the rows leave out take their defaults. Where the entity has uniqueness
/// constraints, a row that matches a stored one updates it (an upsert) unless ``upserts`` is off.
///
/// ```swift
/// let request = BatchInsertRequest(entityName: "Book", keys: ["title", "pages"]) { row in
///     guard row.index < 1_000_000 else { return false }
///     row[0] = .string("Book \(row.index)")
///     row[1] = .int(Int64(row.index % 500))
///     return true
/// }
/// let result = try coordinator.execute(request)
/// ```
///
/// As in Core Data, the rows skip validation rules (lengths, ranges, patterns); their types and non-optional
/// attributes are checked, and a wrong one fails the whole request with nothing written.
public struct BatchInsertRequest: Sendable {
    /// The entity whose rows are inserted (rows of it exactly, not of a sub-entity).
    public var entityName: String
    /// The attributes each row sets, in the order ``BatchInsertRow`` positions them.
    public var keys: [String]
    /// What the request reports.
    public var resultType: BatchResultType = .count
    /// Whether a row matching a stored row on a uniqueness constraint updates it (true, Core Data's behaviour) or
    /// fails the request.
    public var upserts = true
    let source: Source

    enum Source: Sendable {
        /// Rows by key position; nil where a dictionary left the key out (the default).
        case values([[AttributeValue?]])
        case fill(@Sendable (inout BatchInsertRow) -> Bool)
    }

    /// Inserts one row per dictionary, by attribute name.
    public init(entityName: String, objects: [[String: AttributeValue]]) {
        let keys = Set(objects.flatMap(\.keys)).sorted()
        self.entityName = entityName
        self.keys = keys
        source = .values(objects.map { object in keys.map { object[$0] } })
    }

    /// Inserts the rows `fill` writes, one call per row, until it returns false: no array of all the rows is ever
    /// built. Each call starts from the attributes' defaults.
    public init(entityName: String, keys: [String], fill: @escaping @Sendable (inout BatchInsertRow) -> Bool) {
        self.entityName = entityName
        self.keys = keys
        source = .fill(fill)
    }
}

/// Changes attributes of every object a predicate selects, straight in the store (Core Data's
/// `NSBatchUpdateRequest`). New values are expressions of the object's own values: constants, `pages + 1`,
/// `uppercase:(title)`, `TERNARY(pages > 100, 'long', 'short')`. Each changed row's version moves on, so a context
/// holding an older copy meets a conflict at its next save, as with any other writer.
///
/// ```swift
/// let request = try BatchUpdateRequest(entityName: "Book", format: "pages < %d", 100, set: ["pages": "pages + 1"])
/// let result = try coordinator.execute(request)
/// ```
public struct BatchUpdateRequest: Sendable {
    /// The entity whose objects change.
    public var entityName: String
    /// Whether objects of sub-entities change too.
    public var includesSubentities = true
    /// Which objects; nil for all.
    public var predicate: FormatPredicate?
    /// The new value of each attribute, by name.
    public var propertiesToUpdate: [String: FormatExpression]
    /// What the request reports.
    public var resultType: BatchResultType = .count

    /// Changes `propertiesToUpdate` of the objects `predicate` selects.
    public init(entityName: String, predicate: FormatPredicate? = nil, propertiesToUpdate: [String: FormatExpression]) {
        self.entityName = entityName
        self.predicate = predicate
        self.propertiesToUpdate = propertiesToUpdate
    }

    /// Changes the attributes named in `set` to the expressions given as text (`"pages + 1"`), for the objects the
    /// predicate `format` selects.
    ///
    /// - Throws: `FormatPredicateError` for a predicate or an expression that does not parse.
    public init(entityName: String, format: String, _ arguments: Any?..., set: [String: String]) throws {
        try self.init(entityName: entityName, format: format, argumentArray: arguments, set: set)
    }

    /// ``init(entityName:format:_:set:)`` with an array of arguments.
    public init(entityName: String, format: String, argumentArray: [Any?], set: [String: String]) throws {
        var expressions: [String: FormatExpression] = [:]
        for (key, text) in set { expressions[key] = try FormatExpression(format: text, argumentArray: []) }
        self.init(entityName: entityName, predicate: try FormatPredicate(format: format, argumentArray: argumentArray), propertiesToUpdate: expressions)
    }

    /// Sets constant values (a value of `.null` clears an optional attribute).
    public init(entityName: String, predicate: FormatPredicate? = nil, values: [String: AttributeValue]) {
        self.init(entityName: entityName, predicate: predicate, propertiesToUpdate: values.mapValues { .constant($0.predicateValue) })
    }
}

/// Deletes every object a predicate selects (or the objects named), straight in the store (Core Data's
/// `NSBatchDeleteRequest`), with the model's delete rules: cascade deletes the destinations too, nullify clears the
/// destinations' references, and deny refuses the whole request while a destination remains.
///
/// ```swift
/// let result = try coordinator.execute(BatchDeleteRequest(entityName: "Book", predicate: FormatPredicate("pages == 0")))
/// ```
public struct BatchDeleteRequest: Sendable {
    /// The entity whose objects are deleted.
    public var entityName: String
    /// Whether objects of sub-entities go too.
    public var includesSubentities = true
    /// Which objects; nil for all (ignored when ``objectIDs`` is set).
    public var predicate: FormatPredicate?
    /// The objects to delete, when named one by one.
    public var objectIDs: [ObjectID]?
    /// What the request reports.
    public var resultType: BatchResultType = .count

    /// Deletes the objects `predicate` selects (all of the entity's for nil).
    public init(entityName: String, predicate: FormatPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }

    /// Deletes the objects named (of one entity tree).
    public init(objectIDs: [ObjectID]) {
        self.entityName = objectIDs.first?.entityName ?? ""
        self.objectIDs = objectIDs
    }
}

extension BatchDeleteRequest {
    /// `ids`, each a saved object of the request entity's tree, or a typed error naming the first that is not.
    func checkedObjectIDs(_ ids: [ObjectID], model: Model) throws -> [ObjectID] {
        let entity = try model.entity(named: entityName)
        for id in ids {
            guard let kind = model.entityIfPresent(id.entityName), kind.rootName == entity.rootName, !id.isTemporaryID else {
                throw ObjectGraphError.invalidBatchRequest(
                    entity: entity.name, reason: "\(id) is not a saved object of \(entity.rootName) or its sub-entities; one request deletes objects of one tree")
            }
        }
        return ids
    }
}

/// One of the three batch requests, as a store receives it.
public enum BatchRequest: Sendable {
    /// Rows to insert.
    case insert(BatchInsertRequest)
    /// Rows to change.
    case update(BatchUpdateRequest)
    /// Rows to delete, with the delete rules.
    case delete(BatchDeleteRequest)

    var entityName: String {
        switch self {
        case .insert(let request): request.entityName
        case .update(let request): request.entityName
        case .delete(let request): request.entityName
        }
    }

    var resultType: BatchResultType {
        switch self {
        case .insert(let request): request.resultType
        case .update(let request): request.resultType
        case .delete(let request): request.resultType
        }
    }
}

/// The IDs a write changed, by kind: what contexts merge from a batch request or from another process.
public struct StoreChanges: Sendable, Hashable {
    /// Objects inserted.
    public var insertedObjectIDs: [ObjectID] = []
    /// Objects whose stored values changed.
    public var updatedObjectIDs: [ObjectID] = []
    /// Objects deleted.
    public var deletedObjectIDs: [ObjectID] = []

    /// Changes listing the IDs given.
    public init(inserted: [ObjectID] = [], updated: [ObjectID] = [], deleted: [ObjectID] = []) {
        insertedObjectIDs = inserted
        updatedObjectIDs = updated
        deletedObjectIDs = deleted
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { insertedObjectIDs.isEmpty && updatedObjectIDs.isEmpty && deletedObjectIDs.isEmpty }

    /// The changes of history `transactions`, in order, each object's last change winning: an object inserted
    /// then updated is inserted, one updated then deleted is deleted.
    public init(_ transactions: [PersistentHistoryTransaction]) {
        var last: [ObjectID: PersistentHistoryChange.ChangeType] = [:]
        var order: [ObjectID] = []
        for change in transactions.lazy.flatMap(\.changes) {
            let id = change.changedObjectID
            switch (last[id], change.changeType) {
            case (nil, let kind): order.append(id); last[id] = kind
            case (.insert?, .update): break
            case (_, let kind): last[id] = kind
            }
        }
        for id in order {
            switch last[id]! {
            case .insert: insertedObjectIDs.append(id)
            case .update: updatedObjectIDs.append(id)
            case .delete: deletedObjectIDs.append(id)
            }
        }
    }
}

/// What a batch request did.
public struct BatchResult: Sendable {
    /// How many objects of the request's entity it inserted, updated or deleted (cascaded deletions of other
    /// objects not counted).
    public var count: Int
    /// With ``BatchResultType/objectIDs``, those objects' IDs.
    public var objectIDs: [ObjectID]?
    /// With ``BatchResultType/objectIDs``, every object it changed, cascades and nullified references included:
    /// merge it with ``PersistentStoreCoordinator/mergeChanges(_:into:)``.
    public var changes: StoreChanges?

    /// A result of `count` objects, with their IDs and changes where the request asked for them.
    package init(count: Int, objectIDs: [ObjectID]? = nil, changes: StoreChanges? = nil) {
        (self.count, self.objectIDs, self.changes) = (count, objectIDs, changes)
    }
}

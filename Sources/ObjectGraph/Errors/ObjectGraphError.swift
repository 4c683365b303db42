import Foundation

/// One rule an object broke at save time; a failed save lists every one of them together.
public struct ValidationFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The entity of the object that failed.
    public var entity: String
    /// The object's ID.
    public var objectID: ObjectID
    /// The attribute or relationship at fault, or nil for a rule about the whole object.
    public var key: String?
    /// What was wrong, in words.
    public var reason: String

    /// Creates a validation failure; custom validation hooks throw these.
    public init(entity: String, objectID: ObjectID, key: String?, reason: String) {
        self.entity = entity
        self.objectID = objectID
        self.key = key
        self.reason = reason
    }

    public var description: String {
        if let key { return "\(entity).\(key) of \(objectID): \(reason)" }
        return "\(entity) \(objectID): \(reason)"
    }
}

/// Errors of the object graph, each naming what a user needs to fix: the entity, key, object ID, file or hash.
public enum ObjectGraphError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The model's declarations are inconsistent.
    case invalidModel(entity: String, property: String?, reason: String)
    /// An Xcode model file could not be read.
    case invalidModelFile(path: String, element: String, reason: String)
    /// No entity of this name exists in the model.
    case unknownEntity(String)
    /// The entity has no property of this name.
    case unknownKey(entity: String, key: String)
    /// A value of the wrong type was given for a key.
    case typeMismatch(entity: String, key: String, expected: String, got: String)
    /// A to-one or to-many relationship was used as the other kind, or a relationship as an attribute.
    case wrongPropertyKind(entity: String, key: String, reason: String)
    /// An object was given to a relationship of the wrong destination entity.
    case wrongDestination(entity: String, key: String, expected: String, got: String)
    /// One or more objects broke validation rules; every failure is listed.
    case validation([ValidationFailure])
    /// A delete was refused by a deny rule.
    case deleteDenied(entity: String, objectID: ObjectID, relationship: String, count: Int)
    /// No row exists for this object ID (it was deleted, or never saved).
    case objectNotFound(ObjectID)
    /// An object from one context was used in another.
    case crossContext(entity: String, objectID: ObjectID, reason: String)
    /// An object was used after its deletion was saved, or after its context forgot it.
    case objectInaccessible(entity: String, objectID: ObjectID, reason: String)
    /// A fetch request cannot run as given (an unknown key, a relationship compared with a string, a bad limit).
    case invalidFetch(entity: String, reason: String)
    /// A fetch's predicate, sort key or expression cannot run against `entity`; `error` says why, by kind:
    /// `FormatPredicateError/unknownKey(entity:key:)`, `FormatPredicateError/typeMismatch(expression:expected:found:)`
    /// (a date compared with a number, a string in arithmetic), `FormatPredicateError/unsupported(_:)` (a part SQL
    /// cannot express), `FormatPredicateError/unboundVariable(_:)`.
    ///
    /// ```swift
    /// do { _ = try Book.items(where: "pages > 'many'") }
    /// catch ObjectGraphError.invalidPredicate(_, .typeMismatch(let expression, _, _)) { print(expression) }
    /// ```
    case invalidPredicate(entity: String, error: FormatPredicateError)
    /// An object URI could not be resolved.
    case invalidURI(String, reason: String)
    /// The store was built for another model.
    case modelMismatch(path: String, storeHash: String, modelHash: String)
    /// The store could not be opened, or its file stopped being one SQLite can read.
    case storeUnavailable(path: String, reason: String)
    /// A read of the store failed: SQLite refused a statement (a table changed under the store, a busy or locked
    /// file, a statement given the wrong number of values). The reason carries SQLite's message and the statement.
    case storeReadFailed(path: String, reason: String)
    /// Stored rows changed or vanished since the context read them (optimistic locking); nothing was written.
    case conflict([SaveConflict])
    /// A uniqueness constraint refused the save; nothing was written.
    case uniquenessViolation(entity: String, keys: [String], detail: String)
    /// The store refused a write; nothing of the save was written.
    case storeWriteFailed(path: String, reason: String)
    /// A save's COMMIT was sent to a server, and its answer was lost (the connection closed, or the server did not
    /// answer in time), and the store could not learn in time whether it committed: the save may be in the store
    /// or not. `transaction` names it on the server: ask the store for its outcome before saving again (a PostgreSQL
    /// store's `outcome(ofTransaction:)`), or the retry may write it twice. The context keeps its changes, as after
    /// any failed save.
    ///
    /// ```swift
    /// do { try ctx.save() } catch ObjectGraphError.saveOutcomeUnknown(_, let transaction, _) {
    ///     if try store.outcome(ofTransaction: transaction) == .committed { ctx.reset() } // it is there; read it again
    /// }
    /// ```
    case saveOutcomeUnknown(path: String, transaction: String, reason: String)
    /// A save across several stores (one per configuration) wrote everything, and then a commit failed after other
    /// stores had committed: the stores in `committed` hold their part of the save, those in `notCommitted` do not.
    /// Every failure before the commits (a conflict, a constraint, a failed write) leaves all stores untouched; this
    /// one is an I/O error or a lost server at the moment of COMMIT. The context keeps its changes as after any failed
    /// save, so reset it and read the stores again rather than saving the same changes twice.
    case partialSave(committed: [String], notCommitted: [String], reason: String)
    /// A context cannot be pinned to a query generation: it is a child (it reads its parent), the token is of
    /// another store, or the store keeps no generations.
    case queryGenerationUnavailable(context: String, reason: String)
    /// A store could not be migrated from one model version to the next (a change no rule infers, or data the new
    /// model refuses); the store was left as it was.
    case migrationRefused(path: String, entity: String, property: String?, reason: String)
    /// The store does not record persistent history (open it with ``StoreOptions/recordsHistory``), or a custom store
    /// does not keep it.
    case historyNotRecorded(path: String)
    /// A history token cannot be read from: it names another store, or history after it was deleted (its changes
    /// are lost to whoever kept it, who must refetch rather than merge).
    case historyTokenExpired(path: String, token: String, reason: String)
    /// A history token names a transaction the store has not reached: it was taken from another copy of the store
    /// (a newer one, before an older backup was restored). Reading after it would miss every transaction until the
    /// store caught up, and deleting before it would delete history nobody has read: take a new token.
    case historyTokenAhead(path: String, token: String, lastTransaction: Int64)
    /// A batch request cannot run as given (an unknown key, a value of the wrong type, a missing value a non-optional
    /// attribute needs); nothing was written.
    case invalidBatchRequest(entity: String, reason: String)

    public var description: String {
        switch self {
        case let .invalidModel(entity, property, reason):
            if let property { return "invalid model: \(entity).\(property): \(reason)" }
            return "invalid model: entity \(entity): \(reason)"
        case let .invalidModelFile(path, element, reason):
            return "invalid model file \(path), \(element): \(reason)"
        case let .unknownEntity(name):
            return "unknown entity '\(name)'"
        case let .unknownKey(entity, key):
            return "entity \(entity) has no property '\(key)'"
        case let .typeMismatch(entity, key, expected, got):
            return "\(entity).\(key) takes a value of type \(expected), not \(got)"
        case let .wrongPropertyKind(entity, key, reason):
            return "\(entity).\(key): \(reason)"
        case let .wrongDestination(entity, key, expected, got):
            return "\(entity).\(key) holds \(expected) objects, not \(got)"
        case let .validation(failures):
            let lines = failures.map { "  - \($0)" }.joined(separator: "\n")
            return "validation failed with \(failures.count) error(s):\n\(lines)"
        case let .deleteDenied(entity, objectID, relationship, count):
            return "cannot delete \(entity) \(objectID): its relationship '\(relationship)' has delete rule deny "
                + "and still holds \(count) object(s)"
        case let .objectNotFound(id):
            return "no stored object for \(id) (deleted, or never saved)"
        case let .crossContext(entity, id, reason):
            return "\(entity) \(id): \(reason)"
        case let .objectInaccessible(entity, id, reason):
            return "\(entity) \(id) is inaccessible: \(reason)"
        case let .invalidFetch(entity, reason):
            return "fetch of \(entity): \(reason)"
        case let .invalidPredicate(entity, error):
            return "fetch of \(entity): \(error)"
        case let .invalidURI(uri, reason):
            return "cannot resolve object URI \(uri): \(reason)"
        case let .modelMismatch(path, storeHash, modelHash):
            return "the store at \(path) was made with model version \(storeHash), "
                + "but this model's version is \(modelHash), and no earlier version given to the store has that hash "
                + "(open it with SchemaVersions listing the version that wrote it, to migrate it); it was left as it was"
        case let .storeUnavailable(path, reason):
            return "cannot open the store at \(path): \(reason)"
        case let .storeReadFailed(path, reason):
            return "reading the store at \(path) failed: \(reason)"
        case let .conflict(conflicts):
            return "save conflict (optimistic locking): " + conflicts.map(\.description).joined(separator: "; ")
        case let .uniquenessViolation(entity, keys, detail):
            return "uniqueness constraint of \(entity) on (\(keys.joined(separator: ", "))) refused the save: \(detail)"
        case let .storeWriteFailed(path, reason):
            return "the save to \(path) failed and wrote nothing: \(reason)"
        case let .saveOutcomeUnknown(path, transaction, reason):
            return "the save to \(path) may or may not have been written: \(reason); ask the store for the outcome of "
                + "transaction \(transaction) before saving again, or the save may be written twice"
        case let .partialSave(committed, notCommitted, reason):
            return "the save was committed to \(committed.joined(separator: ", ")) but not to \(notCommitted.joined(separator: ", ")): \(reason); "
                + "reset the context and read the stores again before saving the same changes"
        case let .queryGenerationUnavailable(context, reason):
            return "context \(context) cannot be pinned to a query generation: \(reason)"
        case let .migrationRefused(path, entity, property, reason):
            let change = "\(entity)\(property.map { ".\($0)" } ?? ""): \(reason)"
            // A plan worked out apart from any store (`MigrationPlan`, `SchemaVersions.plans`) has no path to name.
            guard !path.isEmpty else { return "no migration between these model versions is inferred: \(change)" }
            return "cannot migrate the store at \(path): \(change); the store was left as it was"
        case let .historyNotRecorded(path):
            return "the store at \(path) does not record persistent history; open it with StoreOptions(recordsHistory: true)"
        case let .historyTokenExpired(path, token, reason):
            return "cannot read the history of the store at \(path) after token \(token): \(reason)"
        case let .historyTokenAhead(path, token, last):
            return "history token \(token) is ahead of the store at \(path), which has recorded transactions through \(last): "
                + "it was taken from another copy of the store (a restored backup is older); take a new token with lastHistoryToken()"
        case let .invalidBatchRequest(entity, reason):
            return "batch request on \(entity): \(reason); nothing was written"
        }
    }

    public var errorDescription: String? { description }
}

/// One object whose stored row changed (or vanished) since its context last read it.
public struct SaveConflict: Sendable, Hashable, CustomStringConvertible {
    /// The conflicting object.
    public var objectID: ObjectID
    /// The version the context read.
    public var expectedVersion: Int64
    /// The version now stored, or nil when the row was deleted.
    public var storedVersion: Int64?
    /// The keys in conflict: those the object changed, and those changed in the store since it read them.
    public var keys: [String] = []
    /// The stored values of those keys.
    public var storedValues: [String: AttributeValue] = [:]
    /// The object's values of those keys.
    public var objectValues: [String: AttributeValue] = [:]
    /// The stored row, for merge policies.
    var stored: Snapshot?

    public var description: String {
        guard let storedVersion else {
            return "\(objectID): read at version \(expectedVersion), the stored row was deleted"
        }
        let details = keys.map { "\($0): stored \(storedValues[$0] ?? .null), in memory \(objectValues[$0] ?? .null)" }
        return "\(objectID): read at version \(expectedVersion), stored version is now \(storedVersion)"
            + (details.isEmpty ? "" : " (" + details.joined(separator: "; ") + ")")
    }

    /// Describes a conflict of an update row against the row now stored.
    package static func make(_ row: ChangeSet.Row?, id: ObjectID, expected: Int64, stored: Snapshot?, entity: ModelEntity?) -> SaveConflict {
        var conflict = SaveConflict(objectID: id, expectedVersion: expected, storedVersion: stored?.version, stored: stored)
        guard let row, let stored, let entity else { return conflict }
        var indexes = Set(row.changedAttributes)
        if !row.committedValues.isEmpty {
            for index in stored.values.indices where index < row.committedValues.count && stored.values[index] != row.committedValues[index] {
                indexes.insert(index)
            }
        }
        for index in indexes.sorted() where index < entity.attributes.count {
            let key = entity.attributes[index].name
            conflict.keys.append(key)
            conflict.storedValues[key] = stored.values[index]
            conflict.objectValues[key] = row.values[index]
        }
        return conflict
    }
}


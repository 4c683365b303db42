import ObjectGraph
import PostgresNIO
import PredicateFormat

/// Batch requests on PostgreSQL: a batch update is SQL of its own where its new values allow it
/// (``PostgresBatchUpdate``); every other request becomes its `BatchPlan` (the change set a context would save),
/// read and saved in one transaction, with the rows it read locked until it ends. Either records the request in
/// history with its source and announces it, as any save.
extension PostgresStore {
    public func execute(_ request: BatchRequest, source: TransactionSource) throws -> BatchResult {
        try PostgresErrors.writing(location) {
            try pool.withSession { session in
                try session.transaction(learningOutcome: true) {
                    if case .update(let update) = request,
                       let result = try PostgresBatchUpdate(store: self, session: session).run(update, source: source) {
                        return result
                    }
                    var plan = try BatchPlan.make(request, model: model, reading: PostgresBatchReading(store: self, session: session))
                    plan.changes.source = source
                    var transaction = PostgresSaveTransaction(store: self, session: session)
                    return plan.result(of: request, saved: try transaction.run(plan.changes))
                }
            }
        }
    }
}

/// The rows a batch plan reads, inside the request's transaction, each locked for it.
struct PostgresBatchReading: BatchPlanReading {
    let store: PostgresStore
    let session: PostgresSession

    func rows(_ ids: [ObjectID]) throws -> [Snapshot?] {
        let found = try store.snapshots(of: ids, in: session, locking: true)
        return ids.map { found[$0] }
    }

    func select(_ request: StoreFetchRequest) throws -> [Snapshot] {
        let (_, table) = try store.layout(for: request.entityName)
        let (sql, binds, _, _) = try store.selectSQL(
            request, columns: { $0.selectList.joined(separator: ", ") }, ordered: false, sliced: false, locking: true)
        return try session.query(sql, binds).map { try PostgresRowReader.snapshot($0, table: table) }
    }

    func related(_ ids: [ObjectID], _ relationship: ModelRelationship) throws -> [[ObjectID]] {
        guard case .foreignKey = relationship.storage else {
            return try store.relatedIDs(of: ids, relationship: relationship, in: session)
        }
        return try rows(ids).map { stored in
            guard let stored, let entity = store.model.entityIfPresent(stored.objectID.entityName),
                  let index = entity.relationships.firstIndex(where: { $0.name == relationship.name }),
                  let slot = entity.toOneSlot[index] else { return [] }
            return stored.toOne[slot].map { [$0] } ?? []
        }
    }

    func rows(ofTree root: String) throws -> [Snapshot] {
        guard let table = store.tables[root] else { throw ObjectGraphError.unknownEntity(root) }
        return try session.query(table.selectClause)
            .map { try PostgresRowReader.snapshot($0, table: table) }
    }

    func source(for row: Snapshot) -> any KeyValueSource { SnapshotSource(model: store.model, row: row) }
}

/// A row's own attributes as the evaluator reads them (a batch update computes new values from them only).
struct SnapshotSource: KeyValueSource {
    let model: Model
    let row: Snapshot

    func predicateValue(forKey key: String) throws(FormatPredicateError) -> EvaluatedValue {
        guard let entity = model.entityIfPresent(row.objectID.entityName) else { return .value(.null) }
        guard let index = entity.attributeIndex[key] else { throw .unknownKey(entity: entity.name, key: key) }
        return .value(row.values[index].predicateValue)
    }
}

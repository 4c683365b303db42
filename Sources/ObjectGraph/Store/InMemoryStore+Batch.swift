import PredicateFormat

/// Batch requests in memory: each becomes its ``BatchPlan`` (the change set a context would save), applied under
/// the store's lock as one save is.
extension InMemoryStore {
    public func execute(_ request: BatchRequest, source: TransactionSource) throws -> BatchResult {
        try contents.withLock { state in
            var plan = try BatchPlan.make(request, model: model, reading: MemoryBatchReading(store: self, contents: state))
            plan.changes.source = source
            var next = state
            let result = try apply(plan.changes, to: &next)
            if recordsHistory {
                let tombstones = tombstones(of: plan.changes.deleted.map(\.objectID), in: state)
                record(HistoryRecord.of(plan.changes, result: result, model: model, source: source, tombstones: tombstones), in: &next)
            }
            try persist?(next)
            state = next
            return plan.result(of: request, saved: result)
        }
    }
}

/// The in-memory store's rows, as a batch plan reads them.
struct MemoryBatchReading: BatchPlanReading {
    let store: InMemoryStore
    let contents: InMemoryStore.Contents

    func rows(_ ids: [ObjectID]) throws -> [Snapshot?] {
        ids.map { id in
            guard let root = store.model.entityIfPresent(id.entityName)?.rootName, let row = contents.rows[root]?[id.rawKey] else { return nil }
            return store.snapshot(id.rawKey, row)
        }
    }

    func select(_ request: StoreFetchRequest) throws -> [Snapshot] { try store.selected(request, sliced: false, in: contents) }

    func related(_ ids: [ObjectID], _ relationship: ModelRelationship) throws -> [[ObjectID]] {
        try InMemoryStore.related(ids, relationship, in: contents, model: store.model)
    }

    func rows(ofTree root: String) throws -> [Snapshot] { (contents.rows[root] ?? [:]).map { store.snapshot($0.key, $0.value) } }

    func source(for row: Snapshot) -> any KeyValueSource { MemoryRowSource(store: store, contents: contents, id: row.objectID) }
}

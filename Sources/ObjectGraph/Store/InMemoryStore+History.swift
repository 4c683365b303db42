import Foundation

/// Persistent history in memory: the transactions themselves, numbered as an SQLite store numbers them.
extension InMemoryStore {
    /// Appends `record` as the next transaction.
    func record(_ record: HistoryRecord, in state: inout Contents) {
        guard recordsHistory, !record.isEmpty else { return }
        state.lastTransaction += 1
        state.history.append(PersistentHistoryTransaction(
            token: PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: state.lastTransaction),
            timestamp: Date(), author: record.source.author, contextName: record.source.contextName,
            changes: record.runs.flatMap { $0.changes() }, origin: historyOrigin))
    }

    /// The preserved values of the stored rows `ids`, by ID, before they are deleted.
    func tombstones(of ids: [ObjectID], in state: Contents) -> [ObjectID: [String: AttributeValue]] {
        var result: [ObjectID: [String: AttributeValue]] = [:]
        for id in ids {
            guard let entity = model.entityIfPresent(id.entityName), case let preserved = entity.preservedAttributes, !preserved.isEmpty,
                  let row = state.rows[entity.rootName]?[id.rawKey] else { continue }
            result[id] = Dictionary(uniqueKeysWithValues: preserved.map { (entity.attributes[$0].name, row.values[$0]) })
        }
        return result
    }

    public func history(after token: PersistentHistoryToken?) throws -> [PersistentHistoryTransaction] {
        guard recordsHistory else { throw ObjectGraphError.historyNotRecorded(path: location) }
        return try contents.withLock { state in
            guard let token else { return state.history }
            try check(token)
            try checkNotAhead(token, state)
            guard token.transactionNumber >= state.historyDeletedThrough else {
                throw ObjectGraphError.historyTokenExpired(
                    path: location, token: token.description,
                    reason: "history through transaction \(state.historyDeletedThrough) was deleted, so the changes after the token are no longer all kept; refetch instead")
            }
            return state.history.filter { $0.token.transactionNumber > token.transactionNumber }
        }
    }

    public func lastHistoryToken() throws -> PersistentHistoryToken {
        guard recordsHistory else { throw ObjectGraphError.historyNotRecorded(path: location) }
        return PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: contents.withLock { $0.lastTransaction })
    }

    public func deleteHistory(before token: PersistentHistoryToken) throws -> Int {
        guard recordsHistory else { throw ObjectGraphError.historyNotRecorded(path: location) }
        try check(token)
        return try contents.withLock { state in
            try checkNotAhead(token, state)
            let before = state.history.count
            state.history.removeAll { $0.token.transactionNumber < token.transactionNumber }
            state.historyDeletedThrough = max(state.historyDeletedThrough, token.transactionNumber - 1)
            return before - state.history.count
        }
    }

    /// Deletes the transactions through the newest one recorded before `date`.
    public func deleteHistory(before date: Date) throws -> Int {
        guard recordsHistory else { throw ObjectGraphError.historyNotRecorded(path: location) }
        return contents.withLock { state in
            guard let through = state.history.last(where: { $0.timestamp < date })?.token.transactionNumber else { return 0 }
            let before = state.history.count
            state.history.removeAll { $0.token.transactionNumber <= through }
            state.historyDeletedThrough = max(state.historyDeletedThrough, through)
            return before - state.history.count
        }
    }

    private func checkNotAhead(_ token: PersistentHistoryToken, _ state: Contents) throws {
        guard token.transactionNumber <= state.lastTransaction else {
            throw ObjectGraphError.historyTokenAhead(path: location, token: token.description, lastTransaction: state.lastTransaction)
        }
    }

    private func check(_ token: PersistentHistoryToken) throws {
        guard token.storeIdentifier == identifier else {
            throw ObjectGraphError.historyTokenExpired(
                path: location, token: token.description, reason: "it is a token of store \(token.storeIdentifier), and this store is \(identifier)")
        }
    }
}

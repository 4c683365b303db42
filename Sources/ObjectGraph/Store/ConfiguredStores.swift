import Foundation

/// Several stores, one per configuration of a model, as one store: what a coordinator with several stores hands its
/// contexts (Core Data's coordinator "presents a facade of a single unified store"). Each entity lives in exactly one
/// store, so every read goes to one store, and a save is split by entity.
///
/// A save writes every store's part inside the previous store's transaction and commits them innermost first (see
/// ``PersistentStore/save(_:beforeCommit:)``): a conflict, a refused constraint or a failed write in any store leaves
/// all of them untouched. Only a commit failing after another store's commit (an I/O error at COMMIT, a server gone
/// at that moment) leaves part of a save written; that is reported, naming the stores on each side.
final class ConfiguredStores: PersistentStore, QueryGenerationStore {
    /// The stores by configuration, in the order saves nest them (by configuration name).
    let members: [(configuration: String, store: any PersistentStore, model: Model)]
    /// Entity name → index in `members`.
    private let storeIndex: [String: Int]

    /// Joins `stores`, each opened with `model.model(forConfiguration:)` of its configuration.
    ///
    /// - Throws: ``ObjectGraphError/invalidModel(entity:property:reason:)`` for an unknown configuration, one that
    ///   splits an inheritance tree or a relationship, or an entity in two of the configurations given.
    init(model: Model, stores: [String: any PersistentStore]) throws {
        var members: [(configuration: String, store: any PersistentStore, model: Model)] = []
        var storeIndex: [String: Int] = [:]
        for (configuration, store) in stores.sorted(by: { $0.key < $1.key }) {
            let part = try model.model(forConfiguration: configuration)
            for entity in part.entities {
                if let other = storeIndex[entity.name] {
                    throw ObjectGraphError.invalidModel(
                        entity: entity.name, property: nil,
                        reason: "configurations '\(members[other].configuration)' and '\(configuration)' both include it, and both have a store: "
                            + "an entity lives in one store here (Core Data's assign(_:to:) has no counterpart), so keep it in one of them")
                }
                storeIndex[entity.name] = members.count
            }
            members.append((configuration, store, part))
        }
        self.members = members
        self.storeIndex = storeIndex
    }

    var identifier: String { members.map(\.store.identifier).joined(separator: "+") }
    var location: String { members.map { "\($0.store.location) (\($0.configuration))" }.joined(separator: ", ") }

    /// The member holding `entityName`'s rows, or nil when no configuration given includes it.
    func member(for entityName: String) -> (configuration: String, store: any PersistentStore, model: Model)? {
        storeIndex[entityName].map { members[$0] }
    }

    /// The member holding `entityName`'s rows, or the error a write of it throws.
    private func writableMember(for entityName: String) throws -> (configuration: String, store: any PersistentStore, model: Model) {
        guard let found = member(for: entityName) else {
            throw ObjectGraphError.storeWriteFailed(
                path: location,
                reason: "no store of the coordinator keeps \(entityName): add a store for a configuration that includes it "
                    + "(configurations given: \(members.map(\.configuration).joined(separator: ", ")))")
        }
        return found
    }

    /// `relationship` as `store`'s own model names it (its tables are named within that model).
    private func own(_ relationship: ModelRelationship, of owner: String, in part: Model) throws -> ModelRelationship {
        guard let found = try part.entity(named: owner).relationship(named: relationship.name) else {
            throw ObjectGraphError.unknownKey(entity: owner, key: relationship.name)
        }
        return found
    }

    // MARK: Reading

    // An entity no given configuration includes has no rows (Core Data's fetch of it finds none); writing one throws.

    func snapshots(for ids: [ObjectID]) throws -> [Snapshot] {
        var rows: [Snapshot] = []
        for (index, group) in Dictionary(grouping: ids, by: { storeIndex[$0.entityName] ?? -1 }) where index >= 0 {
            let store = members[index].store
            rows += try reading(store) { try store.snapshots(for: group) }
        }
        return rows
    }

    func fetch(_ request: StoreFetchRequest) throws -> [Snapshot] {
        guard let store = member(for: request.entityName)?.store else { return [] }
        return try reading(store) { try store.fetch(request) }
    }

    func fetch(_ request: StoreFetchRequest, each body: (Snapshot) throws -> Void) throws {
        guard let store = member(for: request.entityName)?.store else { return }
        try reading(store) { try store.fetch(request, each: body) }
    }

    func fetchIDs(_ request: StoreFetchRequest) throws -> [ObjectID] {
        guard let store = member(for: request.entityName)?.store else { return [] }
        return try reading(store) { try store.fetchIDs(request) }
    }

    func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: AttributeValue]] {
        guard let store = member(for: request.fetch.entityName)?.store else { return [] }
        return try reading(store) { try store.fetchDictionaries(request) }
    }

    func count(_ request: StoreFetchRequest) throws -> Int {
        guard let store = member(for: request.entityName)?.store else { return 0 }
        return try reading(store) { try store.count(request) }
    }

    func relatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]] {
        guard let owner = ids.first?.entityName, let found = member(for: owner) else { return ids.map { _ in [] } }
        let own = try own(relationship, of: owner, in: found.model)
        return try reading(found.store) { try found.store.relatedIDs(of: ids, relationship: own) }
    }

    func relatedIDs(of id: ObjectID, relationship: ModelRelationship) throws -> [ObjectID] {
        guard let found = member(for: id.entityName) else { return [] }
        let own = try own(relationship, of: id.entityName, in: found.model)
        return try reading(found.store) { try found.store.relatedIDs(of: id, relationship: own) }
    }

    // MARK: Query generations

    /// One generation of each store that keeps them, opened together.
    final class Generations: StoreSnapshot {
        let byStore: [ObjectIdentifier: StoreGeneration]
        init(_ byStore: [ObjectIdentifier: StoreGeneration]) { self.byStore = byStore }
        func close() {}
    }

    func openSnapshot() throws -> any StoreSnapshot {
        var byStore: [ObjectIdentifier: StoreGeneration] = [:]
        for member in members {
            guard let store = member.store as? any QueryGenerationStore else { continue }
            byStore[ObjectIdentifier(store)] = try StoreGeneration(store: store)
        }
        return Generations(byStore)
    }

    /// Runs a read of `store` at the generation a pinned context reads, if one is bound for these stores.
    private func reading<T>(_ store: any PersistentStore, _ body: () throws -> T) rethrows -> T {
        guard let generation = StoreGeneration.snapshot(of: self, as: Generations.self)?.byStore[ObjectIdentifier(store)] else { return try body() }
        return try generation.reading(body)
    }

    // MARK: Writing

    func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] {
        try writableMember(for: rootEntity).store.allocatePrimaryKeys(rootEntity: rootEntity, count: count)
    }

    func reservePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] {
        try writableMember(for: rootEntity).store.reservePrimaryKeys(rootEntity: rootEntity, count: count)
    }

    func save(_ changes: ChangeSet) throws -> SaveResult { try save(changes, beforeCommit: {}) }

    func save(_ changes: ChangeSet, beforeCommit: () throws -> Void) throws -> SaveResult {
        let parts = try split(changes)
        var results: [SaveResult] = []
        try saveNested(parts[...], results: &results, beforeCommit: beforeCommit)
        var merged = SaveResult()
        merged.permanentIDs = PermanentIDMap(merging: results.map(\.permanentIDs))
        for result in results {
            merged.updatedRows += result.updatedRows
            merged.refreshed.merge(result.refreshed) { _, last in last }
            merged.discarded.formUnion(result.discarded)
        }
        return merged
    }

    /// Saves `parts[0]`, writing the rest inside its transaction: innermost commits first. A commit that fails after
    /// the inner stores committed is a partial save, and said so.
    private func saveNested(
        _ parts: ArraySlice<(store: any PersistentStore, changes: ChangeSet)>, results: inout [SaveResult], beforeCommit: () throws -> Void
    ) throws {
        guard let first = parts.first else { return try beforeCommit() }
        var inner: [SaveResult] = []
        var innerCommitted = false
        let result: SaveResult
        do {
            result = try first.store.save(first.changes) {
                try saveNested(parts.dropFirst(), results: &inner, beforeCommit: beforeCommit)
                innerCommitted = true
            }
        } catch let error where innerCommitted {
            throw ObjectGraphError.partialSave(
                committed: parts.dropFirst().map(\.store.location), notCommitted: [first.store.location], reason: "\(error)")
        } catch let ObjectGraphError.partialSave(committed, notCommitted, reason) {
            throw ObjectGraphError.partialSave(committed: committed, notCommitted: notCommitted + [first.store.location], reason: reason)
        }
        results.append(result)
        results += inner
    }

    /// The change set's rows by the store that keeps them, in `members`' order, leaving out stores with nothing to
    /// write (a save to one store stays one transaction).
    private func split(_ changes: ChangeSet) throws -> [(store: any PersistentStore, changes: ChangeSet)] {
        var parts = members.map { _ in
            var part = ChangeSet()
            part.mergePolicy = changes.mergePolicy
            part.source = changes.source
            return part
        }
        func index(_ id: ObjectID) throws -> Int {
            _ = try writableMember(for: id.entityName)
            return storeIndex[id.entityName]!
        }
        for row in changes.inserted { parts[try index(row.objectID)].inserted.append(row) }
        for row in changes.updated { parts[try index(row.objectID)].updated.append(row) }
        for row in changes.deleted { parts[try index(row.objectID)].deleted.append(row) }
        for contents in changes.toMany { parts[try index(contents.objectID)].toMany.append(contents) }
        for row in changes.checked { parts[try index(row.objectID)].checked.append(row) }
        for (temporary, permanent) in changes.presetIDs { parts[try index(temporary)].presetIDs[temporary] = permanent }
        return parts.indices.compactMap { index in
            parts[index].isEmpty && parts[index].checked.isEmpty ? nil : (members[index].store, parts[index])
        }
    }

    // MARK: Batches and history

    func execute(_ request: BatchRequest, source: TransactionSource) throws -> BatchResult {
        guard let found = member(for: request.entityName) else {
            throw ObjectGraphError.invalidBatchRequest(
                entity: request.entityName, reason: "no store of the coordinator keeps it (configurations given: \(members.map(\.configuration).joined(separator: ", ")))")
        }
        return try found.store.execute(request, source: source)
    }

    /// The one store recording history: a token names one store's transactions, so with several recording,
    /// the app asks each store (``PersistentStoreCoordinator/persistentStore(forConfiguration:)``).
    private func historyStore(for token: PersistentHistoryToken?) throws -> any PersistentStore {
        if let token, let found = members.first(where: { $0.store.identifier == token.storeIdentifier }) { return found.store }
        let recording = members.filter { (try? $0.store.lastHistoryToken()) != nil }
        guard recording.count == 1 else {
            if recording.isEmpty { throw ObjectGraphError.historyNotRecorded(path: location) }
            throw ObjectGraphError.historyTokenExpired(
                path: location, token: token?.description ?? "nil",
                reason: "the stores of configurations \(recording.map(\.configuration).joined(separator: " and ")) both record history, "
                    + "and a token names one store's transactions: read each store's history from it (persistentStore(forConfiguration:))")
        }
        return recording[0].store
    }

    func history(after token: PersistentHistoryToken?) throws -> [PersistentHistoryTransaction] {
        try historyStore(for: token).history(after: token)
    }

    func lastHistoryToken() throws -> PersistentHistoryToken { try historyStore(for: nil).lastHistoryToken() }

    func deleteHistory(before token: PersistentHistoryToken) throws -> Int { try historyStore(for: token).deleteHistory(before: token) }

    func history(_ request: HistoryRequest) throws -> [PersistentHistoryTransaction] { try historyStore(for: request.after).history(request) }

    func deleteHistory(before date: Date) throws -> Int { try historyStore(for: nil).deleteHistory(before: date) }

    // Metadata is each store's: the coordinator's one-store calls name the stores to ask instead.
    func metadata() throws -> [String: String] {
        throw ObjectGraphError.storeReadFailed(path: location, reason: "each store keeps its own metadata: read it from persistentStore(forConfiguration:)")
    }

    func setMetadata(_ metadata: [String: String]) throws {
        throw ObjectGraphError.storeWriteFailed(path: location, reason: "each store keeps its own metadata: set it on persistentStore(forConfiguration:)")
    }
}

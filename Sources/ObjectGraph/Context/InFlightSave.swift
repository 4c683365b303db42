import Foundation
import PredicateFormat

/// A root context's pending state, published so that the root's children can read without waiting for its queue
/// (which a save holds for as long as the disk takes): "the store plus these change sets".
///
/// Two kinds are published. Between a child's save arriving and the root's save writing, the view is the root's
/// layers, inserts under temporary IDs: the store cannot hold them yet, since only the root writes them and it
/// replaces this view before it does. While the root writes, the view is the change set being written, inserts
/// under the permanent keys the root reserved before writing, so a reader tells a stored row from its pending
/// version whether or not the write has committed when the reader reads the store. Either way it hands rows back
/// under the IDs the root's children know (temporary until the coordinator has recorded the permanent ones).
///
/// Publishing costs nothing (the change sets are shared, not copied); the first reader of a view merges them into
/// one table. A reader serves a fetch only when everything the request asks is attributes of the fetched rows
/// (relationship key paths need the root's object graph), and only if the view is still the published one after it
/// has read the store (else a later save could have committed meanwhile, and the reader takes the new view).
final class InFlightSave: Sendable {
    private let layers: [ChangeSet]
    private let presetIDs: [ObjectID: ObjectID]
    let coordinator: PersistentStoreCoordinator
    var model: Model { coordinator.model }
    private let merged = Protected<Contents?>(nil)
    /// Equality indexes built on first use: entity names and attribute → value → IDs.
    private let indexes = Protected<[String: [IndexKey: [ObjectID]]]>([:])

    /// The layers merged, later ones winning.
    struct Contents {
        /// Pending rows (inserted and updated) by the ID the store will hold them under.
        var rows: [ObjectID: Snapshot] = [:]
        /// The IDs of ``rows`` by entity name.
        var rowsByEntity: [String: [ObjectID]] = [:]
        /// Rows being deleted.
        var deleted: Set<ObjectID> = []
        /// The temporary ID each inserted row with a reserved key had.
        var temporaryIDs: [ObjectID: ObjectID] = [:]
    }

    /// A view of `layers` (oldest first) over the store; `presetIDs` names the key each insert will be written with,
    /// when the root has reserved them.
    init(layers: [ChangeSet], presetIDs: [ObjectID: ObjectID] = [:], coordinator: PersistentStoreCoordinator) {
        self.layers = layers
        self.presetIDs = presetIDs
        self.coordinator = coordinator
    }

    /// The merged layers, built by the first reader.
    var contents: Contents {
        merged.withLock { merged in
            if let merged { return merged }
            var contents = Contents()
            let permanent = { (id: ObjectID) in self.presetIDs[id] ?? id }
            for layer in layers {
                for row in layer.inserted + layer.updated {
                    let id = permanent(row.objectID)
                    // A later layer cannot bring back what an earlier one deleted (as in the root's flatten).
                    if contents.deleted.contains(id) { continue }
                    if id != row.objectID { contents.temporaryIDs[id] = row.objectID }
                    if contents.rows[id] == nil { contents.rowsByEntity[id.entityName, default: []].append(id) }
                    contents.rows[id] = Snapshot(objectID: id, version: row.version, values: row.values, toOne: row.toOne.map { $0.map(permanent) })
                }
                for (raw, _) in layer.deleted {
                    let id = permanent(raw)
                    contents.deleted.insert(id)
                    if contents.rows.removeValue(forKey: id) != nil {
                        contents.rowsByEntity[id.entityName]?.removeAll { $0 == id }
                    }
                }
            }
            merged = contents
            return contents
        }
    }

    /// What a reader gets from a view.
    enum Answer {
        /// The results.
        case rows([Snapshot])
        /// The request needs the root's object graph (a relationship key path); ask the root.
        case unanswerable
        /// The root replaced or withdrew the view while the store was read; take the current one.
        case stale
    }

    /// The request's results over the store plus this view.
    func serve(_ request: StoreFetchRequest, store: any PersistentStore, board: InFlightBoard) throws -> Answer {
        guard let entity = model.entityIfPresent(request.entityName) else { return .unanswerable }
        let names = request.includesSubentities ? entity.selfAndDescendantNames : [entity.name]
        let contents = contents
        let rows = contents.rows
        let deleted = contents.deleted
        var pending: [Snapshot] = []
        do {
            for id in candidates(names, request.predicate, contents) {
                guard let row = rows[id], let source = source(for: row, contents) else { continue }
                if try request.predicate?.evaluate(with: source) ?? true { pending.append(row) }
            }
        } catch {
            return .unanswerable
        }
        let hiddenCount = names.reduce(0) { $0 + (contents.rowsByEntity[$1]?.count ?? 0) } + deleted.count
        var storeRequest = request
        storeRequest.limit = request.limit.map { $0 + request.offset + hiddenCount }
        storeRequest.offset = 0
        let stored = try store.fetch(storeRequest).filter { rows[$0.objectID] == nil && !deleted.contains($0.objectID) }
        // A save that began after this one could have committed before the store read: then this view is stale.
        guard board.current === self else { return .stale }
        var results = stored + pending
        do {
            try InMemoryOrdering.sort(&results, by: request.sortKeys, value: { snapshot, path in
                guard path.count == 1, let source = source(for: snapshot, contents) else { throw InFlightSave.Unanswerable() }
                return try AttributeValue.read(path, from: source, entity: entity.name)
            }, tieBreak: { ContextState.storeOrder(self.childID($0.objectID, contents), self.childID($1.objectID, contents)) })
        } catch {
            return .unanswerable
        }
        let start = min(request.offset, results.count)
        let end = request.limit.map { min(start + $0, results.count) } ?? results.count
        return .rows(results[start..<end].map { snapshot in
            let childID = { (id: ObjectID) in self.childID(id, contents) }
            let id = childID(snapshot.objectID)
            guard id != snapshot.objectID || snapshot.toOne.contains(where: { $0.map(childID) != $0 }) else { return snapshot }
            return Snapshot(objectID: id, version: snapshot.version, values: snapshot.values, toOne: snapshot.toOne.map { $0.map(childID) })
        })
    }

    /// A fetch through the root's published view, trying again while the root replaces views faster than one
    /// read takes; nil when the root must answer (no view, or the request needs its object graph).
    static func fetch(_ request: StoreFetchRequest, from board: InFlightBoard, store: any PersistentStore) throws -> [Snapshot]? {
        for _ in 0..<8 {
            guard let view = board.current else { return nil }
            switch try view.serve(request, store: store, board: board) {
            case .rows(let rows): return rows
            case .unanswerable: return nil
            case .stale: continue
            }
        }
        return nil
    }

    struct Unanswerable: Error {}

    /// The ID children know a row by: its temporary ID until the coordinator has recorded the permanent one (the
    /// moment the write commits), so a child never holds one object under two IDs.
    private func childID(_ id: ObjectID, _ contents: Contents) -> ObjectID {
        guard let temporary = contents.temporaryIDs[id] else { return id }
        return coordinator.resolve(temporary) == temporary ? temporary : id
    }

    private func source(for snapshot: Snapshot, _ contents: Contents) -> ViewRowSource? {
        model.entityIfPresent(snapshot.objectID.entityName).map {
            ViewRowSource(snapshot: snapshot, entity: $0, temporaryKey: contents.temporaryIDs[snapshot.objectID]?.rawKey)
        }
    }

    // MARK: Equality indexes

    /// What an equality can be looked up by: numbers by value (so 10, 10.0 and true/1 meet), strings exactly.
    enum IndexKey: Hashable {
        case number(Double)
        case string(String)

        init?(_ value: PredicateValue) {
            switch value {
            case .int(let int): self = .number(Double(int))
            case .double(let double): self = .number(double)
            case .bool(let bool): self = .number(bool ? 1 : 0)
            case .string(let string): self = .string(string)
            default: return nil
            }
        }
    }

    /// The rows a predicate can match: those an `attribute == constant` conjunct allows, looked up in an index,
    /// or every row of the entities.
    func candidates(_ names: [String], _ predicate: FormatPredicate?, _ contents: Contents) -> [ObjectID] {
        let conjuncts: [FormatPredicate]
        switch predicate {
        case .and(let parts)?: conjuncts = parts
        case let single?: conjuncts = [single]
        case nil: conjuncts = []
        }
        for case .comparison(let comparison) in conjuncts where comparison.op == .equal && comparison.modifier == .direct && comparison.options.isEmpty {
            switch (comparison.left, comparison.right) {
            case (.keyPath(let path), .constant(let value)), (.constant(let value), .keyPath(let path)):
                guard path.count == 1, let key = IndexKey(value), let index = index(names, path[0], contents) else { continue }
                return index[key] ?? []
            default:
                continue
            }
        }
        return names.flatMap { contents.rowsByEntity[$0] ?? [] }
    }

    private func index(_ names: [String], _ attribute: String, _ contents: Contents) -> [IndexKey: [ObjectID]]? {
        let name = names.sorted().joined(separator: ",") + "." + attribute
        if let built = indexes.withLock({ $0[name] }) { return built }
        var index: [IndexKey: [ObjectID]] = [:]
        for entityName in names {
            guard let entity = model.entityIfPresent(entityName), let position = entity.attributeIndex[attribute] else { return nil }
            switch entity.attributes[position].type {
            case .string, .bool, .int16, .int32, .int64, .double, .float: break
            default: return nil
            }
            for id in contents.rowsByEntity[entityName] ?? [] {
                if let key = contents.rows[id].flatMap({ IndexKey($0.values[position].predicateValue) }) { index[key, default: []].append(id) }
            }
        }
        indexes.withLock { $0[name] = index }
        return index
    }
}

/// Where a root context publishes its in-flight save, for its children to read from any thread.
final class InFlightBoard: Sendable {
    private let save = Protected<InFlightSave?>(nil)
    /// Whether the context has children; a root without any publishes nothing (it would cost a pass per save).
    let hasReaders = AtomicFlag(false)

    /// The save being written, if any.
    var current: InFlightSave? { save.withLock { $0 } }

    func publish(_ view: InFlightSave) { save.withLock { $0 = view } }

    func clear() { save.withLock { $0 = nil } }
}

/// A pending or stored row's attributes, for judging it without the context that owns it; a relationship key
/// cannot be answered here and throws, which sends the read back to the owning context.
struct ViewRowSource: IdentifiableSource {
    let snapshot: Snapshot
    let entity: ModelEntity
    /// For an inserted row: the key of the temporary ID its children know it by.
    var temporaryKey: Int64?

    var sourceIdentity: PredicateValue { .int(snapshot.objectID.rawKey) }

    func matchesIdentity(_ value: PredicateValue) throws(FormatPredicateError) -> Bool {
        value == .int(snapshot.objectID.rawKey) || temporaryKey.map { value == .int($0) } == true
    }

    func predicateValue(forKey key: String) throws(FormatPredicateError) -> EvaluatedValue {
        guard let index = entity.attributeIndex[key] else {
            throw .evaluation("\(entity.name).\(key) is not an attribute; the owning context answers this read")
        }
        return .value(snapshot.values[index].predicateValue)
    }
}

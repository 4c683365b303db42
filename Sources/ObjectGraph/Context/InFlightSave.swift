import Foundation
import PredicateFormat

/// A root context's save while the store writes it, published so that the root's children can keep reading
/// without waiting for the root's queue (which the write holds for as long as the disk takes).
///
/// It is exactly the root's pending state: a root saves every change it holds, so while it writes, "the root's
/// current state" is "the store plus this change set". Inserted rows carry the permanent keys the root reserved
/// before writing, so a reader can tell a stored row from its pending version whether or not the write has
/// committed when the reader reads the store; it hands the rows back under the IDs its children know (temporary
/// until the coordinator has recorded the permanent ones).
///
/// A reader serves a fetch only when everything the request asks is attributes of the fetched rows (relationship
/// key paths need the root's object graph); otherwise, or when the root cleared or replaced the view while the
/// reader read the store (a later save could have committed after this one), the reader falls back to asking the
/// root on its queue.
final class InFlightSave: Sendable {
    /// Pending rows (inserted and updated) by permanent ID.
    let rows: [ObjectID: Snapshot]
    /// The IDs of ``rows`` by entity name.
    let rowsByEntity: [String: [ObjectID]]
    /// Rows being deleted.
    let deleted: Set<ObjectID>
    /// The temporary ID each inserted row had.
    let temporaryIDs: [ObjectID: ObjectID]
    let coordinator: PersistentStoreCoordinator
    var model: Model { coordinator.model }
    /// Equality indexes built on first use: entity names and attribute → value → IDs.
    private let indexes = Protected<[String: [IndexKey: [ObjectID]]]>([:])

    /// The view of `changes`, which must name a permanent ID for every insert in `presetIDs`.
    init(_ changes: ChangeSet, coordinator: PersistentStoreCoordinator) {
        var rows: [ObjectID: Snapshot] = [:]
        var rowsByEntity: [String: [ObjectID]] = [:]
        var temporaryIDs: [ObjectID: ObjectID] = [:]
        let permanent = { (id: ObjectID) in changes.presetIDs[id] ?? id }
        for row in changes.inserted + changes.updated {
            let id = permanent(row.objectID)
            if id != row.objectID { temporaryIDs[id] = row.objectID }
            rows[id] = Snapshot(objectID: id, version: row.version, values: row.values, toOne: row.toOne.map { $0.map(permanent) })
            rowsByEntity[id.entityName, default: []].append(id)
        }
        self.rows = rows
        self.rowsByEntity = rowsByEntity
        self.deleted = Set(changes.deleted.map { permanent($0.objectID) })
        self.temporaryIDs = temporaryIDs
        self.coordinator = coordinator
    }

    /// The request's results over the store plus this view, or nil when the request needs more than this view
    /// answers or the view stopped being current while the store was read.
    func serve(_ request: StoreFetchRequest, store: any PersistentStore, board: InFlightBoard) throws -> [Snapshot]? {
        guard let entity = model.entityIfPresent(request.entityName) else { return nil }
        let names = request.includesSubentities ? entity.selfAndDescendantNames : [entity.name]
        var pending: [Snapshot] = []
        do {
            for id in candidates(names, request.predicate) {
                guard let row = rows[id], let source = source(for: row) else { continue }
                if try request.predicate?.evaluate(with: source) ?? true { pending.append(row) }
            }
        } catch {
            return nil
        }
        let hiddenCount = names.reduce(0) { $0 + (rowsByEntity[$1]?.count ?? 0) } + deleted.count
        var storeRequest = request
        storeRequest.limit = request.limit.map { $0 + request.offset + hiddenCount }
        storeRequest.offset = 0
        let stored = try store.fetch(storeRequest).filter { rows[$0.objectID] == nil && !deleted.contains($0.objectID) }
        // A save that began after this one could have committed before the store read: then this view is stale.
        guard board.current === self else { return nil }
        var results = stored + pending
        do {
            try InMemoryOrdering.sort(&results, by: request.sortKeys, value: { snapshot, path in
                guard path.count == 1, let source = source(for: snapshot) else { throw InFlightSave.Unanswerable() }
                return try AttributeValue.read(path, from: source, entity: entity.name)
            }, tieBreak: { ContextState.storeOrder(self.childID($0.objectID), self.childID($1.objectID)) })
        } catch {
            return nil
        }
        let start = min(request.offset, results.count)
        let end = request.limit.map { min(start + $0, results.count) } ?? results.count
        return results[start..<end].map { snapshot in
            let id = childID(snapshot.objectID)
            guard id != snapshot.objectID || snapshot.toOne.contains(where: { $0.map(childID) != $0 }) else { return snapshot }
            return Snapshot(objectID: id, version: snapshot.version, values: snapshot.values, toOne: snapshot.toOne.map { $0.map(childID) })
        }
    }

    struct Unanswerable: Error {}

    /// The ID children know a row by: its temporary ID until the coordinator has recorded the permanent one (the
    /// moment the write commits), so a child never holds one object under two IDs.
    private func childID(_ id: ObjectID) -> ObjectID {
        guard let temporary = temporaryIDs[id] else { return id }
        return coordinator.resolve(temporary) == temporary ? temporary : id
    }

    private func source(for snapshot: Snapshot) -> ViewRowSource? {
        model.entityIfPresent(snapshot.objectID.entityName).map {
            ViewRowSource(snapshot: snapshot, entity: $0, temporaryKey: temporaryIDs[snapshot.objectID]?.rawKey)
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
    private func candidates(_ names: [String], _ predicate: FormatPredicate?) -> [ObjectID] {
        let conjuncts: [FormatPredicate]
        switch predicate {
        case .and(let parts)?: conjuncts = parts
        case let single?: conjuncts = [single]
        case nil: conjuncts = []
        }
        for case .comparison(let comparison) in conjuncts where comparison.op == .equal && comparison.modifier == .direct && comparison.options.isEmpty {
            switch (comparison.left, comparison.right) {
            case (.keyPath(let path), .constant(let value)), (.constant(let value), .keyPath(let path)):
                guard path.count == 1, let key = IndexKey(value), let index = index(names, path[0]) else { continue }
                return index[key] ?? []
            default:
                continue
            }
        }
        return names.flatMap { rowsByEntity[$0] ?? [] }
    }

    private func index(_ names: [String], _ attribute: String) -> [IndexKey: [ObjectID]]? {
        let name = names.joined(separator: ",") + "." + attribute
        if let built = indexes.withLock({ $0[name] }) { return built }
        var index: [IndexKey: [ObjectID]] = [:]
        for entityName in names {
            guard let entity = model.entityIfPresent(entityName), let position = entity.attributeIndex[attribute] else { return nil }
            switch entity.attributes[position].type {
            case .string, .bool, .int16, .int32, .int64, .double, .float: break
            default: return nil
            }
            for id in rowsByEntity[entityName] ?? [] {
                if let key = rows[id].flatMap({ IndexKey($0.values[position].predicateValue) }) { index[key, default: []].append(id) }
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

import Foundation
import PredicateFormat

/// A root context's pending state, published so that the root's children can read without waiting for its queue
/// (which a save holds for as long as the disk takes): "the store plus these change sets".
///
/// Two kinds are published. Between a child's save arriving and the root's save writing, the view is the root's
/// layers, inserts under temporary IDs: the store cannot hold them yet, since only the root writes them and it
/// replaces this view before it does. While the root writes, the view is the change set being written, with the
/// permanent keys the root reserved for its inserts before writing, so a reader tells a stored row from its pending
/// version whether or not the write has committed when the reader reads the store. Either way pending rows come
/// back under the IDs the layers name them by (temporary for inserts); a child that has since adopted the
/// permanent IDs maps them when it registers the rows.
///
/// Publishing costs nothing (the change sets are shared, not copied); a single layer is read as it is (its child
/// indexed it, equality indexes included), several are merged by the first reader. A reader serves a fetch only
/// when everything the request asks is attributes of the fetched rows (relationship key paths need the root's object
/// graph), and only if the view is still the published one after it has read the store (else a later save could
/// have committed meanwhile, and the reader takes the new view).
final class InFlightSave: Sendable {
    private let layers: [ChangeSet]
    let coordinator: PersistentStoreCoordinator
    var model: Model { coordinator.model }
    /// The permanent key of each insert, when the root has reserved them (the view of a write).
    private let presetIDs: [ObjectID: ObjectID]
    /// The temporary ID of each insert with a reserved key, by that key.
    private let temporaryIDs: [ObjectID: ObjectID]
    private let merged = Protected<Contents?>(nil)

    /// The pending rows as one indexed change set, IDs as the layers name them (temporary for inserts).
    ///
    /// A class: every read through the view takes the contents, and copying a change set's tables out of the lock
    /// retained and released each of them.
    final class Contents: Sendable {
        let changes: ChangeSet
        let temporaryIDs: [ObjectID: ObjectID]

        init(changes: ChangeSet, temporaryIDs: [ObjectID: ObjectID]) {
            (self.changes, self.temporaryIDs) = (changes, temporaryIDs)
        }

        /// The IDs of pending rows of `entityName`.
        func rowIDs(of entityName: String) -> [ObjectID] { changes.index.rowsByEntity[entityName] ?? [] }

        /// The pending row named `id` (as the layers name it).
        func row(_ id: ObjectID) -> Snapshot? { changes.snapshot(for: id) }

        /// Whether the stored row `id` is replaced or deleted by a pending change (inserts match by reserved key,
        /// in case the write has committed).
        func replaces(_ id: ObjectID) -> Bool {
            changes.index.rows[id] != nil || changes.index.deleted[id] != nil || temporaryIDs[id] != nil
        }

        /// How many stored rows of `names` the pending changes may replace or delete.
        func hiddenCount(_ names: some Collection<String>) -> Int {
            names.reduce(0) { $0 + rowIDs(of: $1).count } + changes.index.deleted.keys.count { names.contains($0.entityName) }
        }
    }

    /// A view of `layers` (oldest first) over the store; `presetIDs` names the key each insert will be written with,
    /// when the root has reserved them. Call it on the root's queue: it reverses `presetIDs` there, so readers
    /// never do.
    init(layers: [ChangeSet], presetIDs: [ObjectID: ObjectID] = [:], coordinator: PersistentStoreCoordinator) {
        self.layers = layers.filter { !$0.isEmpty }
        self.presetIDs = presetIDs
        var temporaryIDs: [ObjectID: ObjectID] = [:]
        temporaryIDs.reserveCapacity(presetIDs.count)
        for (temporary, permanent) in presetIDs where temporary.isTemporaryID { temporaryIDs[permanent] = temporary }
        self.temporaryIDs = temporaryIDs
        self.coordinator = coordinator
    }

    /// The pending rows: a single layer indexed by the child that saved it is used as it is; several are merged
    /// (and indexed) by the first reader.
    var contents: Contents {
        merged.withLock { merged in
            if let merged { return merged }
            let changes: ChangeSet
            if layers.count == 1, layers[0].index.equality != nil {
                changes = layers[0]
            } else {
                changes = ChangeSet.merging(layers, model: model)
            }
            let contents = Contents(changes: changes, temporaryIDs: temporaryIDs)
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
        // A predicate that reads relationships may judge a stored row differently once pending rows of other
        // entities are counted (a chapter moved to the book): the owning context judges every row then.
        if !contents.changes.isEmpty, entity.isJudgedThroughRelationships(by: request.predicate) {
            return .unanswerable
        }
        let hiddenCount = contents.hiddenCount(names)
        if hiddenCount == 0 {
            // Nothing pending touches these entities (the usual case between saves, when the board keeps the last
            // view): the store's answer, sliced and ordered by its SQL, is the answer.
            let rows = try store.fetch(request)
            guard board.current === self else { return .stale }
            return .rows(rows)
        }
        var pending: [Snapshot] = []
        do {
            for id in contents.candidates(names, request.predicate) {
                guard let row = contents.row(id), let source = source(for: row) else { continue }
                if try request.predicate?.evaluate(with: source) ?? true { pending.append(row) }
            }
        } catch {
            return .unanswerable
        }
        var storeRequest = request
        storeRequest.limit = request.limit.map { $0 + request.offset + hiddenCount }
        storeRequest.offset = 0
        let stored = try store.fetch(storeRequest).filter { !contents.replaces($0.objectID) }
        // A save that began after this one could have committed before the store read: then this view is stale.
        guard board.current === self else { return .stale }
        var results = stored + pending
        // One row needs no order (a lookup by key, the usual read beside an import), and sorting builds arrays.
        if results.count > 1 {
            do {
                try InMemoryOrdering.sort(&results, by: request.sortKeys, value: { snapshot, path in
                    guard path.count == 1, let source = source(for: snapshot) else { throw InFlightSave.Unanswerable() }
                    return try AttributeValue.read(path, from: source, entity: entity.name)
                }, tieBreak: { ContextState.storeOrder($0.objectID, $1.objectID) })
            } catch {
                return .unanswerable
            }
        }
        let start = min(request.offset, results.count)
        let end = request.limit.map { min(start + $0, results.count) } ?? results.count
        return .rows(Array(results[start..<end]))
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

    private func source(for snapshot: Snapshot) -> ViewRowSource? {
        model.entityIfPresent(snapshot.objectID.entityName).map {
            ViewRowSource(snapshot: snapshot, entity: $0, permanentKey: presetIDs[snapshot.objectID]?.rawKey)
        }
    }
}

extension InFlightSave.Contents {
    /// The pending rows a predicate can match: those an `attribute == constant` conjunct allows, looked up in the
    /// equality index, or every pending row of the entities.
    func candidates(_ names: [String], _ predicate: FormatPredicate?) -> [ObjectID] {
        let conjuncts: [FormatPredicate]
        switch predicate {
        case .and(let parts)?: conjuncts = parts
        case let single?: conjuncts = [single]
        case nil: conjuncts = []
        }
        if changes.index.equality != nil {
            for case .comparison(let comparison) in conjuncts where comparison.op == .equal && comparison.modifier == .direct && comparison.options.isEmpty {
                switch (comparison.left, comparison.right) {
                case (.keyPath(let path), .constant(let value)), (.constant(let value), .keyPath(let path)):
                    guard path.count == 1, let key = EqualityKey(AttributeValue(value)), indexed(names, path[0]) else { continue }
                    return names.flatMap { changes.equalityMatches($0 + "." + path[0], key) ?? [] }
                default:
                    continue
                }
            }
        }
        return names.flatMap { rowIDs(of: $0) }
    }

    /// Whether the index answers for every entity of `names` with pending rows: it has entries for an entity only
    /// where the entity has the attribute, of an indexed type, with values; otherwise every row is judged.
    private func indexed(_ names: [String], _ attribute: String) -> Bool {
        names.allSatisfy { name in rowIDs(of: name).isEmpty || changes.index.equality?[name + "." + attribute] != nil }
    }
}

/// Where a root context publishes its in-flight save, for its children to read from any thread.
final class InFlightBoard: Sendable {
    /// The published view, and the one before it. Keeping the previous one means a reader that took it just before
    /// the root replaced it is not the one to free its rows (tens of milliseconds for a large import, and the reader
    /// may be the main thread).
    private let save = Protected<(current: InFlightSave?, previous: InFlightSave?)>((nil, nil))
    /// Whether the context has children; a root without any publishes nothing (it would cost a pass per save).
    let hasReaders = AtomicFlag(false)
    /// Counts the changes of what the context shows (an own edit, a child's save, a merge, a save, a rollback):
    /// children compare it, down their chain, with what their loaded lists were read under
    /// (``ContextState/dropListsIfBelowChanged()``).
    let viewGeneration = ConfinedCounter()
    /// Which objects the context shows other values of, for its children to read again (see ``ViewChangeLog``).
    let viewChanges = ViewChangeLog()
    /// Where a retired view is freed: not on the root's queue, which publishes while a child may wait for it. A
    /// child's save pushes its changes with the root's queue held (the main context's, in the stack's nested
    /// layout), and the root, receiving them, retires the view of the import it wrote before: freeing that view's
    /// 50,000 rows and their indexes there held the main thread for 0.1–0.2 s at every import after the first.
    private let releaseQueue: DispatchQueue

    /// A board whose retired views are freed on `releaseQueue` (a utility-priority global queue by default).
    init(releasingOn releaseQueue: DispatchQueue = .global(qos: .utility)) {
        self.releaseQueue = releaseQueue
    }

    /// The save being written, if any.
    var current: InFlightSave? { save.withLock { $0.current } }

    func publish(_ view: InFlightSave) { replace(with: view) }

    func clear() { replace(with: nil) }

    private func replace(with view: InFlightSave?) {
        let retired = save.withLock { state in
            defer { state = (view, state.current) }
            return state.previous
        }
        guard let retired else { return }
        releaseQueue.async { withExtendedLifetime(retired) {} }
    }
}

/// A pending or stored row's attributes, for judging it without the context that owns it; a relationship key
/// cannot be answered here and throws, which sends the read back to the owning context.
struct ViewRowSource: IdentifiableSource {
    let snapshot: Snapshot
    let entity: ModelEntity
    /// For an insert with a reserved key: that key (the row may be compared with its stored self).
    var permanentKey: Int64?

    var sourceIdentity: PredicateValue { .int(snapshot.objectID.rawKey) }

    func matchesIdentity(_ value: PredicateValue) throws(FormatPredicateError) -> Bool {
        value == .int(snapshot.objectID.rawKey) || permanentKey.map { value == .int($0) } == true
    }

    func predicateValue(forKey key: String) throws(FormatPredicateError) -> EvaluatedValue {
        guard let index = entity.attributeIndex[key] else {
            throw .evaluation("\(entity.name).\(key) is not an attribute; the owning context answers this read")
        }
        return .value(snapshot.values[index].predicateValue)
    }
}

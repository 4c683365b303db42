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

        /// Whether the stored row `id` is replaced or deleted by a pending change.
        func replaces(_ id: ObjectID) -> Bool {
            changes.index.rows[id] != nil || changes.index.deleted[id] != nil
        }

        /// Whether the stored row `id` is a pending insert's, by its reserved key: the write has committed.
        func isCopyOfPendingInsert(_ id: ObjectID) -> Bool { temporaryIDs[id] != nil }

        /// How many pending rows of `names` there are, deletes included.
        func hiddenCount(_ names: some Collection<String>) -> Int {
            names.reduce(0) { $0 + rowIDs(of: $1).count } + deletedCount(names)
        }

        /// How many stored rows of `names` pending updates and deletes may replace: pending inserts replace none
        /// until they are written.
        func replacedCount(_ names: some Collection<String>) -> Int {
            names.reduce(0) { $0 + (changes.index.updateCountByEntity[$1] ?? 0) } + deletedCount(names)
        }

        private func deletedCount(_ names: some Collection<String>) -> Int {
            changes.index.deleted.keys.count { names.contains($0.entityName) }
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
        let prefix = request.limit.map { $0 + request.offset }
        // Equal in the sort, rows go by key: pending inserts by the keys reserved for them when the root has (the
        // order the store will have once they are written), else after every stored row.
        func tieBreak(_ lhs: ObjectID, _ rhs: ObjectID) -> Bool { ContextState.storeOrder(presetIDs[lhs] ?? lhs, presetIDs[rhs] ?? rhs) }
        func sortValue(_ snapshot: Snapshot, _ key: Int) throws -> AttributeValue {
            guard request.sortKeys[key].keyPath.count == 1, let source = source(for: snapshot) else { throw InFlightSave.Unanswerable() }
            return try AttributeValue.read(request.sortKeys[key].keyPath, from: source, entity: entity.name)
        }
        var storeRequest = request
        storeRequest.offset = 0
        let stored = try StoredRowsUnderPending.rows(
            slice: prefix, replacing: contents.replacedCount(names),
            read: { limit in
                storeRequest.limit = limit
                return try store.fetch(storeRequest)
            },
            isReplaced: { contents.replaces($0.objectID) }, isPendingCopy: { contents.isCopyOfPendingInsert($0.objectID) })
        // A save that began after this one could have committed before the store read: then this view is stale.
        // Checked before the pending rows are ordered, the costly part, which a stale view would waste.
        guard board.current === self else { return .stale }
        let sortValues = AttributeSortValues(model: model, keys: request.sortKeys, entityNames: names)
        let pending: [Snapshot]
        let judge = request.predicate.map { RowPredicate($0, entities: names, model: model) }
        do {
            pending = try contents.firstRows(
                of: names, where: request.predicate, admits: { _ in true },
                judge: { row in try judge?.evaluate(row, through: { source(for: $0) }) ?? true },
                by: request.sortKeys, reading: sortValues, prefix: prefix, sortValue: sortValue, tieBreak: tieBreak)
        } catch {
            return .unanswerable
        }
        var results = stored + pending
        // One row needs no order (a lookup by key, the usual read beside an import), and sorting builds arrays.
        if results.count > 1 {
            do {
                try InMemoryOrdering.sort(&results, by: request.sortKeys, prefix: prefix, value: { snapshot, key in
                    try sortValues.value(of: snapshot, key: key) { try sortValue(snapshot, key) }
                }, tieBreak: { tieBreak($0.objectID, $1.objectID) })
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
    /// The pending rows of `names` that `admits` lets through and `judge` accepts, in `keys`' order with ties broken
    /// by `tieBreak`, only the first `prefix` of them when given.
    ///
    /// Candidates are those an `attribute == constant` conjunct of `predicate` allows, looked up in the equality
    /// index; for a limited fetch whose first sort key is an indexed integer attribute, the rows in that attribute's
    /// order up to the slice, from the ordered index; otherwise every pending row of the entities, judged and
    /// ordered where the change set keeps them. Only the rows kept become snapshots: making a snapshot of each of
    /// 100,000 pending rows, to order them and keep 1,000, was most of a limited fetch beside an import. `sortValues`
    /// reads `keys` of `names`' rows by attribute position (the caller orders its merged results with it too);
    /// `sortValue` reads a key that is not an attribute.
    func firstRows(
        of names: [String], where predicate: FormatPredicate?,
        admits: (ObjectID) -> Bool, judge: (Snapshot) throws -> Bool,
        by keys: [SortKey], reading sortValues: AttributeSortValues, prefix: Int?,
        sortValue: (Snapshot, Int) throws -> AttributeValue, tieBreak: (ObjectID, ObjectID) -> Bool
    ) throws -> [Snapshot] {
        if let ids = equalityCandidates(names, predicate) {
            var rows = try ids.filter(admits).compactMap(row).filter(judge)
            try InMemoryOrdering.sort(&rows, by: keys, prefix: prefix, value: { row, key in
                try sortValues.value(of: row, key: key) { try sortValue(row, key) }
            }, tieBreak: { tieBreak($0.objectID, $1.objectID) })
            return rows
        }
        // A row's place: inserts first, then updates, as one range of positions. Each row is read in place: copying
        // one out of its list retained five arrays.
        let inserted = changes.inserted, updated = changes.updated
        @inline(__always) func read<T>(_ place: Int, _ body: (ChangeSet.Row) throws -> T) rethrows -> T {
            place < inserted.count ? try body(inserted[place]) : try body(updated[place - inserted.count])
        }
        func snapshot(at place: Int) -> Snapshot {
            read(place) { Snapshot(objectID: $0.objectID, version: $0.version, values: $0.values, toOne: $0.toOne) }
        }
        func objectID(at place: Int) -> ObjectID { read(place) { $0.objectID } }
        var places: [Int] = []
        if let prefix, let (order, attribute) = orderedIndex(names, keys, sortValues) {
            // Rows in the first key's order until `prefix` are kept, then those tied with the last one on it: the
            // first `prefix` by every key are among them, and the full ordering below picks them.
            func word(_ place: Int) -> Int64? { read(place) { $0.values.int64(at: attribute) } }
            var boundary: Int64?
            for step in 0..<order.count {
                let place = Int(order[keys[0].ascending ? step : order.count - 1 - step])
                if let boundary, word(place) != boundary { break }
                guard admits(objectID(at: place)) else { continue }
                if predicate != nil, try !judge(snapshot(at: place)) { continue }
                places.append(place)
                if places.count == prefix { boundary = word(place) }
            }
        } else {
            places.reserveCapacity(names.reduce(0) { $0 + rowIDs(of: $1).count })
            for place in 0..<(inserted.count + updated.count) {
                let id = objectID(at: place)
                guard names.contains(id.entityName), admits(id) else { continue }
                if predicate != nil, try !judge(snapshot(at: place)) { continue }
                places.append(place)
            }
        }
        if let prefix, places.count > 4 * prefix + 64, let first = keys.first, let positions = sortValues.positions(ofKey: 0) {
            places = cut(places, keeping: prefix, ascending: first.ascending) { place in
                read(place) { row in
                    positions.first { $0.entityName == row.objectID.entityName }.flatMap { row.values.int64(at: $0.position) }
                }
            }
        }
        try InMemoryOrdering.sort(&places, by: keys, prefix: prefix, value: { place, key in
            try read(place) { row in
                try sortValues.value(entityName: row.objectID.entityName, values: row.values, key: key) { try sortValue(snapshot(at: place), key) }
            }
        }, tieBreak: { tieBreak(objectID(at: $0), objectID(at: $1)) })
        return places.map(snapshot)
    }

    /// The ordered index of the first sort key, and the attribute's position, when only one entity of `names` has
    /// pending rows and the key is an indexed integer attribute of it (see ``ChangeSetIndex/ordered``).
    private func orderedIndex(_ names: [String], _ keys: [SortKey], _ sortValues: AttributeSortValues) -> ([Int32], Int)? {
        guard !keys.isEmpty, !changes.index.ordered.isEmpty, let positions = sortValues.positions(ofKey: 0) else { return nil }
        let withRows = names.filter { !rowIDs(of: $0).isEmpty }
        guard withRows.count == 1, let entry = positions.first(where: { $0.entityName == withRows[0] }),
              let order = changes.index.ordered[OrderedIndexKey(entityName: entry.entityName, position: entry.position)]
        else { return nil }
        return (order, entry.position)
    }

    /// The places that can be among the first `prefix` in the order of a first sort key that reads an integer of
    /// every row (`word`), ascending or not: those whose integer is at least as far forward as the `prefix`-th row's.
    /// Every row behind that one has `prefix` rows before it. Reading a word per row and partitioning the words cost a
    /// tenth of ordering 100,000 rows by their values; `places` comes back whole when some row holds no integer there.
    private func cut(_ places: [Int], keeping prefix: Int, ascending: Bool, word: (Int) -> Int64?) -> [Int] {
        guard prefix > 0 else { return places }
        var words: [Int64] = []
        words.reserveCapacity(places.count)
        for place in places {
            guard let word = word(place) else { return places }
            words.append(word)
        }
        let threshold = InMemoryOrdering.value(ranked: ascending ? prefix - 1 : words.count - prefix, in: words)
        return zip(places, words).compactMap { place, word in
            (ascending ? word <= threshold : word >= threshold) ? place : nil
        }
    }

    private func equalityCandidates(_ names: [String], _ predicate: FormatPredicate?) -> [ObjectID]? {
        guard changes.index.equality != nil else { return nil }
        let conjuncts: [FormatPredicate]
        switch predicate {
        case .and(let parts)?: conjuncts = parts
        case let single?: conjuncts = [single]
        case nil: return nil
        }
        for case .comparison(let comparison) in conjuncts where comparison.op == .equal && comparison.modifier == .direct && comparison.options.isEmpty {
            switch (comparison.left, comparison.right) {
            case (.keyPath(let path), .constant(let value)), (.constant(let value), .keyPath(let path)):
                guard path.count == 1, let key = EqualityKey(AttributeValue(value)), indexed(names, path[0]) else { continue }
                return names.flatMap { changes.equalityMatches($0 + "." + path[0], key) ?? [] }
            default:
                continue
            }
        }
        return nil
    }

    /// Whether the index answers for every entity of `names` with pending rows: it has entries for an entity only
    /// where the entity has the attribute, of an indexed type, with values; otherwise every row is judged.
    private func indexed(_ names: [String], _ attribute: String) -> Bool {
        names.allSatisfy { name in rowIDs(of: name).isEmpty || changes.index.equality?[name + "." + attribute] != nil }
    }
}

/// Where a root context publishes its in-flight save, for its children to read from any thread.
final class InFlightBoard: Sendable {
    /// The published view, the one before it, and those retired and not yet freed. Keeping the previous one means a
    /// reader that took it just before the root replaced it is not the one to free its rows (tens of milliseconds
    /// for a large import, and the reader may be the main thread).
    private let save = Protected<Views>(Views())
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

    /// The retired view moves from one slot to another inside the lock, and the release queue takes it out inside
    /// the lock: the publisher never holds a reference to it outside, so it never frees it. (Handing the view to the
    /// block as a captured value raced: when the block ran before the publisher dropped its own reference, the
    /// publisher freed the rows, 30–60 ms on the main thread in the nested stack's W14.)
    private func replace(with view: InFlightSave?) {
        let retiring = save.withLock { views in
            if let retired = views.previous.take() { views.retired.append(retired) }
            views.previous = views.current.take()
            views.current = view
            return !views.retired.isEmpty
        }
        guard retiring else { return }
        releaseQueue.async { [save] in
            let freed = save.withLock { views in
                var taken: [InFlightSave] = []
                swap(&taken, &views.retired)
                return taken
            }
            withExtendedLifetime(freed) {}
        }
    }

    private struct Views {
        var current: InFlightSave?
        var previous: InFlightSave?
        var retired: [InFlightSave] = []
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

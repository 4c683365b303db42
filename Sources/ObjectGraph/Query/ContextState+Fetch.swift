import PredicateFormat

/// One result of a fetch before it becomes an object: an object with unsaved changes, or a row.
enum FetchCandidate {
    case object(ManagedObject)
    case snapshot(Snapshot)

    var objectID: ObjectID {
        switch self {
        case .object(let object): object.objectID
        case .snapshot(let snapshot): snapshot.objectID
        }
    }
}

/// A fetch's results before they become objects: the rows below as they came, when nothing pending here changes
/// the answer (the common case, kept apart so that a large fetch makes no intermediate array), or candidates judged,
/// ordered and sliced here, or nothing when the store's rows went straight to the caller as they were read.
enum FetchCandidates {
    case rows([Snapshot])
    case mixed([FetchCandidate])
    /// The rows were handed to the caller's sink (see ``ContextState/fetchCandidates(_:loadValues:streamingRowsTo:)``).
    case streamed

    var count: Int {
        switch self {
        case .rows(let rows): rows.count
        case .mixed(let candidates): candidates.count
        case .streamed: 0
        }
    }

    /// The results in order, transformed.
    func map<T>(_ transform: (FetchCandidate) throws -> T) rethrows -> [T] {
        switch self {
        case .rows(let rows): try rows.map { try transform(.snapshot($0)) }
        case .mixed(let candidates): try candidates.map(transform)
        case .streamed: []
        }
    }
}

/// The objects a fetch makes from rows as the store reads them.
///
/// A box rather than a captured local array: the sink that appends to it is an optional closure, so escaping, and
/// a local it modifies is boxed with a run-time exclusivity check per row (4% of making 200,000 objects). Unchecked
/// here, soundly: one fetch's sink appends on the context's executor, and nothing else reaches the box until the
/// fetch has returned.
private final class StreamedObjects {
    @exclusivity(unchecked) var objects: [ManagedObject] = []
}

/// The fetch machinery of a context: store reads, the pending-changes overlay, prefetching.
extension ContextState {
    /// The objects of `names` with unsaved changes here: what a fetch must judge in memory.
    ///
    /// Unless `readingLists`, an object whose only changes are its lists (``ManagedObject/changesOnlyLists``) is
    /// left to below, which judges its values as it shows them, and shows it only while it exists there.
    func pendingObjects(of names: Set<String>, readingLists: Bool = true) -> (changed: [ManagedObject], hidden: Set<ObjectID>) {
        var changed: [ManagedObject] = []
        var hidden: Set<ObjectID> = []
        // A pending insert a child's save deleted is hidden, not a candidate.
        for object in pendingInserts where names.contains(object.entity.name) && !object.isDeleted { changed.append(object) }
        for object in updated.objects where names.contains(object.entity.name) && (readingLists || !isLeftToBelow(object)) {
            hidden.insert(object.objectID)
            if !object.isDeleted { changed.append(object) }
        }
        for object in deleted.values where names.contains(object.entity.name) { hidden.insert(object.objectID) }
        return (changed, hidden)
    }

    /// Whether a fetch that does not read lists takes `object` from below: its only changes are lists, and no
    /// layer here holds a row of it (an object a child's save inserted exists here alone).
    private func isLeftToBelow(_ object: ManagedObject) -> Bool {
        object.changesOnlyLists && !layers.contains { $0.index.rows[object.objectID] != nil }
    }

    /// Whether `request` filters or sorts `entity`'s objects by what their relationships hold.
    static func readsRelationships(_ request: FetchRequest, of entity: ModelEntity) -> Bool {
        entity.isJudgedThroughRelationships(by: request.predicate)
            || request.sortKeys.contains { $0.keyPath.count > 1 || entity.relationshipIndex[$0.keyPath[0]] != nil }
    }

    /// Checks a request before it runs: its own limits, then that it tests no transient attribute and goes through no
    /// transient relationship, which no store keeps (the pending objects here hold values the store's rows do not, and
    /// the two must not disagree).
    func validate(_ request: FetchRequest) throws {
        try request.validate()
        guard model.hasTransientProperties else { return }
        let entity = try entity(named: request.entityName)
        var paths = request.sortKeys.map(\.keyPath) + request.propertiesToFetch.map(\.keyPath)
        _ = request.predicate?.mappingKeyPaths { path in
            paths.append(path)
            return path
        }
        for path in paths {
            if let transient = model.transientProperty(at: path, from: entity) {
                throw ObjectGraphError.invalidFetch(
                    entity: request.entityName,
                    reason: "\(transient) is transient: no store keeps it, so a fetch cannot test or sort by it (filter the fetched objects instead)")
            }
        }
    }

    /// Objects, with the request's relationships prefetched.
    func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        let objects = try fetchObjects(request, loadValues: !request.returnsObjectsAsFaults)
        if !request.relationshipKeyPathsForPrefetching.isEmpty {
            try prefetch(request.relationshipKeyPathsForPrefetching, for: objects)
        }
        return objects
    }

    /// Objects of a macro entity class (objects of other classes, from sub-entities, are left out).
    func fetch<T: ManagedEntity>(_ request: FetchRequest, as type: T.Type) throws -> [T] {
        let objects = try fetch(request)
        // The usual fetch returns objects of exactly `T`: the array is then handed over as `[T]`, without a second
        // array and a retain and release of every object. Sound because an array of class references is one
        // reference to its storage whatever the class, elements are stored as references either way, and every
        // element was just checked to be a `T` (this is what the standard library's own `as!` does on Apple
        // platforms, where it reuses such an array's storage). (Building the typed array while rows are read was
        // tried: unspecialized across the module boundary, that generic path looked up type metadata for every row.)
        // Every object is made as its entity's class: a fetch of an entity made as exactly `T`, with no sub-entities
        // to return, holds only `T`s, known without reading 200,000 objects' classes (2% of fetching them).
        let entity = try model.entity(named: request.entityName)
        let onlyT = entity.objectType == T.self && (!request.includesSubentities || entity.selfAndDescendantNames.count == 1)
        if onlyT || objects.allSatisfy({ Swift.type(of: $0) == T.self }) { return unsafeBitCast(objects, to: [T].self) }
        var typed: [T] = []
        typed.reserveCapacity(objects.count)
        // Comparing the class first spares the general dynamic cast for the usual object of exactly `T`.
        for object in objects {
            if Swift.type(of: object) == T.self {
                typed.append(unsafeDowncast(object, to: T.self))
            } else if let object = object as? T {
                typed.append(object)
            }
        }
        return typed
    }

    /// Dictionary results: what is saved below, grouped and filtered.
    func fetchDictionaries(_ request: FetchRequest) throws -> [[String: AttributeValue]] {
        try validate(request)
        guard !request.propertiesToFetch.isEmpty else {
            throw ObjectGraphError.invalidFetch(entity: request.entityName, reason: "dictionary results need propertiesToFetch")
        }
        var storeRequest = request.storeRequest()
        storeRequest.limit = request.fetchLimit
        storeRequest.offset = request.fetchOffset
        var dictionaryRequest = StoreDictionaryRequest(fetch: storeRequest, properties: request.propertiesToFetch)
        dictionaryRequest.groupBy = request.propertiesToGroupBy
        dictionaryRequest.having = try request.havingPredicate.map { try Self.havingOnResultKeys($0, request: request) }
        dictionaryRequest.distinct = request.returnsDistinctResults
        return try below.fetchDictionaries(dictionaryRequest)
    }

    /// A having condition reads the grouped result, whose keys are the fetched properties' names (a key path's
    /// whole text, `author.name`, for a plain value): each key path must name one of them, on every store alike.
    static func havingOnResultKeys(_ having: FormatPredicate, request: FetchRequest) throws -> FormatPredicate {
        let names = request.propertiesToFetch.map(\.name)
        return try having.mappingKeyPaths { path in
            let key = path.joined(separator: ".")
            guard names.contains(key) else {
                throw ObjectGraphError.invalidFetch(
                    entity: request.entityName,
                    reason: "the having predicate reads '\(key)', which is not a key of the results; it can read \(names.joined(separator: ", "))")
            }
            return [key]
        }
    }

    /// The request's results as IDs, in order, sliced: no object is made (a million IDs for batched results must
    /// not become a million faults on the way).
    func fetchIDs(_ request: FetchRequest) throws -> [ObjectID] {
        try fetchCandidates(request, loadValues: false).map { coordinator.resolve($0.objectID) }
    }

    /// The request's results as objects, in order, sliced.
    func fetchObjects(_ request: FetchRequest, loadValues: Bool) throws -> [ManagedObject] {
        let streamed = StreamedObjects()
        // Rows straight from the store become objects as they are read: a large fetch keeps no array of rows, and
        // each row's values are still in cache when its object takes them.
        let candidates = try fetchCandidates(request, loadValues: loadValues, streamingRowsTo: loadValues ? { row in
            streamed.objects.append(try self.register(row))
        } : nil)
        if case .streamed = candidates { return streamed.objects }
        registered.reserveCapacity(registered.count + candidates.count)
        if case .rows(let rows) = candidates {
            var objects: [ManagedObject] = []
            objects.reserveCapacity(rows.count)
            for row in rows { objects.append(loadValues ? try register(row) : try object(with: row.objectID)) }
            return objects
        }
        return try candidates.map { candidate in
            switch candidate {
            case .object(let object): return object
            case .snapshot(let snapshot): return loadValues ? try register(snapshot) : try object(with: snapshot.objectID)
            }
        }
    }

    /// The request's results: rows from below (the store does the work when nothing is pending here), and objects
    /// and layer rows with unsaved changes, judged and ordered in memory exactly as the store would.
    ///
    /// With `sink`, rows read straight from the store (nothing pending here changes them) go to it as they are read,
    /// and the result is ``FetchCandidates/streamed``.
    func fetchCandidates(_ request: FetchRequest, loadValues: Bool = true, streamingRowsTo sink: ((Snapshot) throws -> Void)? = nil) throws -> FetchCandidates {
        try validate(request)
        if !isRoot { try followChangesBelow() }
        let entity = try entity(named: request.entityName)
        let names = entity.names(includingSubentities: request.includesSubentities)
        let own = request.includesPendingChanges
            ? pendingObjects(of: names, readingLists: Self.readsRelationships(request, of: entity))
            : (changed: [], hidden: [])
        let hidden = own.hidden
        func matches(_ source: any KeyValueSource) throws -> Bool {
            guard let predicate = request.predicate else { return true }
            do {
                return try predicate.evaluate(with: source)
            } catch {
                throw ObjectGraphError.invalidPredicate(entity: entity.name, error: error)
            }
        }
        // Made when a row is first judged: most fetches judge none, and a lookup should not resolve its predicate.
        lazy var rowJudge = request.predicate.map { RowPredicate($0, entities: names, model: model) }
        func matches(_ row: Snapshot) throws -> Bool {
            guard let rowJudge else { return true }
            do {
                return try rowJudge.evaluate(row, through: { SnapshotSource(snapshot: $0, state: self) })
            } catch {
                throw ObjectGraphError.invalidPredicate(entity: entity.name, error: error)
            }
        }
        // Children's layers: the rows the predicate can match (an equality on an attribute is looked up in an
        // index rather than judged row by row), and how many rows the layers hide or replace.
        var layerContents: InFlightSave.Contents?
        var layerCandidates: [Snapshot] = []
        // Objects loaded here from a layer's row since the layer arrived: not pending here, yet only they hold it.
        var layerObjects: [ManagedObject] = []
        var layerHiddenCount = 0
        var layerReplacedCount = 0
        if request.includesPendingChanges && !layers.isEmpty {
            let contents = layerView().contents
            layerHiddenCount = contents.hiddenCount(names)
            if layerHiddenCount > 0 {
                layerReplacedCount = contents.replacedCount(names)
                layerContents = contents
                // The layers' rows the fetch can return, the first of them only when it is limited (the others cannot
                // reach its slice, whatever comes from below).
                layerCandidates = try contents.firstRows(
                    of: names.sorted(), where: request.predicate,
                    admits: { id in
                        // Where this context holds the object itself, the object (already updated by the layer) stands
                        // for it: among the pending objects when the layer arrived after it, or judged here when it was
                        // loaded from the layer (the layer's row would be dropped with nothing in its place).
                        guard let object = registered[id], !object.isFaultStorage else { return true }
                        if !object.isMarkedUpdated, !object.isInserted, !object.isDeleted { layerObjects.append(object) }
                        return false
                    },
                    judge: { try matches($0) },
                    by: request.sortKeys, reading: AttributeSortValues(model: model, keys: request.sortKeys, entityNames: names),
                    prefix: request.fetchLimit.map { $0 + request.fetchOffset },
                    sortValue: { snapshot, key in
                        try AttributeValue.read(request.sortKeys[key].keyPath, from: SnapshotSource(snapshot: snapshot, state: self), entity: entity.name)
                    },
                    tieBreak: Self.storeOrder)
            }
        }
        // A predicate that reads relationships judges a stored row by rows the layers may have changed (a chapter
        // moved to the book, a tag linked), which the row itself does not show: every stored row is judged here,
        // as the layers have it.
        let judgesStoredRows = request.includesPendingChanges && !layers.isEmpty && entity.isJudgedThroughRelationships(by: request.predicate)
        var storeRequest = request.storeRequest()
        if judgesStoredRows { storeRequest.predicate = nil }
        if own.changed.isEmpty && hidden.isEmpty && layerContents == nil && !judgesStoredRows {
            storeRequest.limit = request.fetchLimit
            storeRequest.offset = request.fetchOffset
            if !loadValues, isRoot {
                return .rows(try generationPin.reading { try coordinator.store.fetchIDs(storeRequest) }.map { Snapshot(objectID: $0, version: 0, values: [], toOne: []) })
            }
            if let sink, isRoot {
                try generationPin.reading { try coordinator.store.fetch(storeRequest, each: sink) }
                return .streamed
            }
            return .rows(try below.fetch(storeRequest))
        }
        let slice = request.fetchLimit.map { $0 + request.fetchOffset }
        var candidates: [FetchCandidate] = try StoredRowsUnderPending.rows(
            slice: judgesStoredRows ? nil : slice, replacing: hidden.count + layerReplacedCount,
            read: { limit in
                storeRequest.limit = limit
                return try below.fetch(storeRequest)
            },
            isReplaced: { row in hidden.contains(row.objectID) || layerContents?.replaces(row.objectID) == true }
        ).map { .snapshot($0) }
        if judgesStoredRows {
            candidates = try candidates.filter { candidate in
                guard case .snapshot(let row) = candidate else { return true }
                return try matches(row)
            }
        }
        for object in own.changed where try matches(object) { candidates.append(.object(object)) }
        for object in layerObjects where try matches(object) { candidates.append(.object(object)) }
        candidates.reserveCapacity(candidates.count + layerCandidates.count)
        for snapshot in layerCandidates { candidates.append(.snapshot(snapshot)) }
        let sortValues = AttributeSortValues(model: model, keys: request.sortKeys, entityNames: names)
        try InMemoryOrdering.sort(&candidates, by: request.sortKeys, prefix: slice, value: { candidate, key in
            let path = request.sortKeys[key].keyPath
            switch candidate {
            case .object(let object): return try AttributeValue.read(path, from: object, entity: entity.name)
            case .snapshot(let snapshot):
                return try sortValues.value(of: snapshot, key: key) {
                    try AttributeValue.read(path, from: SnapshotSource(snapshot: snapshot, state: self), entity: entity.name)
                }
            }
        }, tieBreak: { Self.storeOrder($0.objectID, $1.objectID) })
        let start = min(request.fetchOffset, candidates.count)
        let end = request.fetchLimit.map { min(start + $0, candidates.count) } ?? candidates.count
        return .mixed(Array(candidates[start..<end]))
    }

    /// The number of results: counted below without reading rows when nothing is pending here.
    func count(_ request: FetchRequest) throws -> Int {
        try validate(request)
        let entity = try entity(named: request.entityName)
        let names = entity.names(includingSubentities: request.includesSubentities)
        let own = pendingObjects(of: names, readingLists: Self.readsRelationships(request, of: entity))
        // Layers count when they touch the entity's rows, or, for a predicate that reads relationships, any rows.
        let layered = (!layers.isEmpty && entity.isJudgedThroughRelationships(by: request.predicate)) || layers.contains { layer in
            names.contains { layer.index.rowsByEntity[$0] != nil } || layer.index.deleted.keys.contains { names.contains($0.entityName) }
        }
        if !request.includesPendingChanges || (own.changed.isEmpty && own.hidden.isEmpty && !layered) {
            var storeRequest = request.storeRequest()
            storeRequest.limit = request.fetchLimit
            storeRequest.offset = request.fetchOffset
            return try below.count(storeRequest)
        }
        return try fetchCandidates(request).count
    }

    /// Stored rows by key; unsaved inserts after them in insertion order, as their keys will be once saved.
    static func storeOrder(_ lhs: ObjectID, _ rhs: ObjectID) -> Bool {
        let (l, r) = (lhs.rawKey, rhs.rawKey)
        if (l < 0) != (r < 0) { return l > 0 }
        return l < 0 ? l > r : l < r
    }

    /// The objects for `ids`, loading the values of those not yet loaded in one store read.
    func materialize(_ ids: [ObjectID]) throws -> [ManagedObject] {
        let objects = try ids.map { try object(with: $0) }
        try load(objects)
        return objects.filter { !$0.isFaultStorage }
    }

    /// Loads the values of those of `objects` (this context's) that are faults, with one read of the layers and the
    /// store; an object whose row is gone stays a fault.
    func load(_ objects: [ManagedObject]) throws {
        let missing = objects.filter(\.isFaultStorage).map(\.objectID)
        guard !missing.isEmpty else { return }
        // Each row goes straight to its object, found where the registry keeps it.
        for snapshot in try layeredSnapshots(for: missing) {
            if let object = registered[snapshot.objectID], object.isFaultStorage { fill(object, from: snapshot) }
        }
    }

    /// Loads the objects of relationship key paths for `objects` with one store read per relationship and level.
    ///
    /// Each source then holds what it reached, as reading the relationship would (and as Core Data's prefetched
    /// relationships do): the destinations live as long as their sources, loaded once, and a later read of the
    /// relationship hands out what is held. No row waits for an object nobody holds: batched results that
    /// prefetched each batch's members used to keep every batch's rows until the context was reset.
    func prefetch(_ paths: [String], for objects: [ManagedObject]) throws {
        for path in paths {
            var level = objects
            for key in path.split(separator: ".").map(String.init) {
                // The destinations, each once: gathered by the pass that makes each source hold its own, marked on
                // the object rather than looked up in a set (200,000 books name their 100 tags 400,000 times).
                var gathered: [ManagedObject] = []
                // Cleared whatever happens: a mark left behind would keep the object out of every later prefetch.
                defer { for destination in gathered { destination.isGatheredForPrefetch = false } }
                func gather(_ id: ObjectID) throws -> ManagedObject {
                    let destination = try object(with: id)
                    if !destination.isGatheredForPrefetch {
                        destination.isGatheredForPrefetch = true
                        gathered.append(destination)
                    }
                    return destination
                }
                // Mostly objects of one entity: grouping them by name hashed a string per object.
                let groups = level.first.map { first in level.allSatisfy { $0.entity === first.entity } } ?? true
                    ? [level.first?.entity.name ?? "": level] : Dictionary(grouping: level, by: { $0.entity.name })
                for (entityName, group) in groups where !group.isEmpty {
                    let entity = try model.entity(named: entityName)
                    guard let index = entity.relationshipIndex[key] else {
                        throw ObjectGraphError.invalidFetch(entity: entityName, reason: "cannot prefetch '\(path)': \(entityName) has no relationship '\(key)'")
                    }
                    // Sources fetched as faults are loaded first: their rows name their destinations.
                    var sources = group
                    if group.contains(where: \.isFaultStorage) {
                        try load(group)
                        sources = group.filter { !$0.isFaultStorage }
                    }
                    if let slot = entity.toOneSlot[index] {
                        for source in sources {
                            guard let id = source.toOne[slot] else { continue }
                            source.hold(.object(try gather(id)), forRelationship: index)
                        }
                        continue
                    }
                    try loadToMany(index, of: sources)
                    for source in sources {
                        guard let ids = source.extras?.toMany[index]?.ids, !ids.isEmpty else { continue }
                        source.hold(.objects(try ids.map(gather)), forRelationship: index)
                    }
                }
                try load(gathered)
                level = gathered.filter { !$0.isFaultStorage }
            }
        }
    }
}

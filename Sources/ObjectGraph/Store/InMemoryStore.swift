import Foundation

/// A store that keeps rows in memory only: for tests, previews and scratch work. Same semantics as
/// ``SQLiteStore`` (versions, keys, uniqueness, all-or-nothing saves), nothing on disk.
public final class InMemoryStore: PersistentStore, QueryGenerationStore {
    struct StoredRow {
        var entityName: String
        var version: Int64
        var values: AttributeValues
        var toOne: [ObjectID?]
    }

    struct Contents {
        var rows: [String: [Int64: StoredRow]] = [:]
        /// Each join table's links: `position` orders the source's list, `inversePosition` the target's (when the
        /// relationship is ordered on both sides).
        var joins: [String: [(source: Int64, target: Int64, position: Int?, inversePosition: Int?)]] = [:]
        var positions: [String: [Int64: Int]] = [:]
        var sequence: [String: Int64] = [:]
        /// Persistent history, oldest first, when the store records it.
        var history: [PersistentHistoryTransaction] = []
        var lastTransaction: Int64 = 0
        var historyDeletedThrough: Int64 = 0
        /// The app's own metadata.
        var metadata: [String: String] = [:]
    }

    public let identifier: String
    public var location: String { fileLocation ?? "memory:\(identifier)" }
    let model: Model
    let contents: Protected<Contents>
    /// Where an ``AtomicStore`` keeps these rows, named in errors in place of memory.
    let fileLocation: String?
    /// Writes the rows as a change leaves them, before the change is kept (``AtomicStore``): if it throws, the
    /// change is not kept. Called under the store's lock, so writes are never interleaved.
    let persist: (@Sendable (Contents) throws -> Void)?

    /// Whether saves and batch requests record persistent history.
    public let recordsHistory: Bool
    /// Names this store in its history (one process holds it, so every transaction is its own).
    let historyOrigin = UUID().uuidString

    /// Creates an empty store for `model`; with `recordsHistory`, every save and batch request records a transaction.
    public convenience init(model: Model, recordsHistory: Bool = false) {
        self.init(model: model, identifier: UUID().uuidString, contents: Contents(), recordsHistory: recordsHistory, fileLocation: nil, persist: nil)
    }

    init(model: Model, identifier: String, contents: Contents, recordsHistory: Bool, fileLocation: String?,
         persist: (@Sendable (Contents) throws -> Void)?) {
        self.model = model
        self.identifier = identifier
        self.contents = Protected(contents)
        self.recordsHistory = recordsHistory
        self.fileLocation = fileLocation
        self.persist = persist
    }

    func snapshot(_ key: Int64, _ row: StoredRow) -> Snapshot {
        Snapshot(objectID: ObjectID(entityName: row.entityName, rawKey: key), version: row.version, values: row.values, toOne: row.toOne)
    }

    public func snapshots(for ids: [ObjectID]) throws -> [Snapshot] {
        let state = readable()
        return try ids.compactMap { id in
            let asked = try model.entity(named: id.entityName)
            guard let row = state.rows[asked.rootName]?[id.rawKey],
                  try model.entity(named: row.entityName).isKind(of: asked) else { return nil }
            return snapshot(id.rawKey, row)
        }
    }

    /// The rows as a read sees them: the store's now, or those of the query generation a pinned context reads.
    func readable() -> Contents {
        StoreGeneration.snapshot(of: self, as: MemorySnapshot.self)?.contents ?? contents.withLock { $0 }
    }

    /// The rows at a query generation: a copy, which shares its storage with the store's until either changes.
    final class MemorySnapshot: StoreSnapshot {
        let contents: Contents
        init(_ contents: Contents) { self.contents = contents }
        func close() {}
    }

    /// The rows a request selects, in order: the predicate runs through the evaluator over the stored graph.
    func selected(_ request: StoreFetchRequest, sliced: Bool, in given: Contents? = nil) throws -> [Snapshot] {
        let contents = given ?? readable()
        let entity = try model.entity(named: request.entityName)
        let names = entity.names(includingSubentities: request.includesSubentities)
        var rows = (contents.rows[entity.rootName] ?? [:]).filter { names.contains($0.value.entityName) }.map { snapshot($0.key, $0.value) }
        if let predicate = request.predicate {
            rows = try rows.filter { row in
                do throws(FormatPredicateError) {
                    return try predicate.evaluate(with: MemoryRowSource(store: self, contents: contents, id: row.objectID))
                } catch {
                    throw ObjectGraphError.invalidPredicate(entity: entity.name, error: error)
                }
            }
        }
        let prefix = sliced ? request.limit.map { $0 + request.offset } : nil
        try InMemoryOrdering.sort(&rows, by: request.sortKeys, prefix: prefix, value: { row, key in
            try MemoryRowSource(store: self, contents: contents, id: row.objectID).attributeValue(at: request.sortKeys[key].keyPath, entity: entity.name)
        }, tieBreak: { $0.objectID.rawKey < $1.objectID.rawKey })
        guard sliced else { return rows }
        let start = min(request.offset, rows.count)
        let end = request.limit.map { min(start + $0, rows.count) } ?? rows.count
        return Array(rows[start..<end])
    }

    public func fetch(_ request: StoreFetchRequest) throws -> [Snapshot] {
        try selected(request, sliced: true)
    }

    public func fetchIDs(_ request: StoreFetchRequest) throws -> [ObjectID] {
        try selected(request, sliced: true).map(\.objectID)
    }

    public func count(_ request: StoreFetchRequest) throws -> Int {
        try selected(request, sliced: true).count
    }

    public func relatedIDs(of id: ObjectID, relationship: ModelRelationship) throws -> [ObjectID] {
        let contents = readable()
        return try related(id, relationship, in: contents)
    }

    public func relatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]] {
        try Self.related(ids, relationship, in: readable(), model: model)
    }

    func related(_ id: ObjectID, _ relationship: ModelRelationship, in contents: Contents) throws -> [ObjectID] {
        try Self.related([id], relationship, in: contents, model: model)[0]
    }

    /// The destinations of each of `ids`' `relationship` in `contents`, in order, one list per ID: one pass over the
    /// destinations' rows or the join table for all of them (per owner, a store of 100,000 linked objects read its
    /// links 100,000 times).
    static func related(_ ids: [ObjectID], _ relationship: ModelRelationship, in contents: Contents, model: Model) throws -> [[ObjectID]] {
        let destination = try model.entity(named: relationship.destinationEntityName)
        let rows = contents.rows[destination.rootName] ?? [:]
        func object(_ key: Int64) -> ObjectID? { rows[key].map { ObjectID(entityName: $0.entityName, rawKey: key) } }
        switch relationship.storage {
        case .foreignKey:
            return try ids.map { id in
                let source = try model.entity(named: id.entityName)
                guard let row = contents.rows[source.rootName]?[id.rawKey], let index = source.relationshipIndex[relationship.name],
                      let slot = source.toOneSlot[index], let target = row.toOne[slot] else { return [] }
                return object(target.rawKey).map { [$0] } ?? []
            }
        case .inverseForeignKey(_, let orderColumn):
            let owners = Set(ids.map(\.rawKey))
            let positions = orderColumn.flatMap { contents.positions[$0] } ?? [:]
            // Members by owner key and the owner's tree: keys are unique within a tree only.
            var members: [Int64: [(key: Int64, position: Int, ownerRoot: String?)]] = [:]
            for (key, row) in rows {
                let entity = try model.entity(named: row.entityName)
                guard let inverseIndex = entity.relationshipIndex[relationship.inverseName], let slot = entity.toOneSlot[inverseIndex],
                      let target = row.toOne[slot], owners.contains(target.rawKey) else { continue }
                members[target.rawKey, default: []].append((key, positions[key] ?? 0, model.entityIfPresent(target.entityName)?.rootName))
            }
            return ids.map { id in
                let ownerRoot = model.entityIfPresent(id.entityName)?.rootName
                return (members[id.rawKey] ?? []).filter { $0.ownerRoot == ownerRoot }
                    .sorted { ($0.position, $0.key) < ($1.position, $1.key) }.compactMap { object($0.key) }
            }
        case .joinTable(let table, let isSourceSide):
            let owners = Set(ids.map(\.rawKey))
            var links: [Int64: [(order: Int, member: Int64)]] = [:]
            for link in contents.joins[table] ?? [] {
                let owner = isSourceSide ? link.source : link.target
                guard owners.contains(owner) else { continue }
                links[owner, default: []].append(isSourceSide ? (link.position ?? 0, link.target) : (link.inversePosition ?? 0, link.source))
            }
            return ids.map { id in (links[id.rawKey] ?? []).sorted { ($0.order, $0.member) < ($1.order, $1.member) }.compactMap { object($0.member) } }
        case .transient:
            return ids.map { _ in [] }
        }
    }

    public func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: AttributeValue]] {
        let contents = readable()
        let entity = try model.entity(named: request.fetch.entityName)
        var unsorted = request.fetch
        unsorted.sortKeys = []
        let rows = try selected(unsorted, sliced: false)
        return try DictionaryResults.compute(
            request, entity: entity, model: model, rows: rows.map(\.objectID),
            source: { MemoryRowSource(store: self, contents: contents, id: $0) }
        ) { id, path in
            try MemoryRowSource(store: self, contents: contents, id: id).attributeValue(at: path, entity: entity.name)
        }
    }

    public func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] {
        try contents.withLock { state in
            var next = state
            let keys = Self.allocate(&next, rootEntity, count)
            try persist?(next)
            state = next
            return keys
        }
    }

    /// Keys for a save about to be written: the sequence moves in memory and is written with the save.
    public func reservePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] {
        contents.withLock { state in Self.allocate(&state, rootEntity, count) }
    }

    static func allocate(_ state: inout Contents, _ root: String, _ count: Int) -> [Int64] {
        guard count > 0 else { return [] }
        let first = (state.sequence[root] ?? 0) + 1
        state.sequence[root] = first + Int64(count) - 1
        return Array(first..<(first + Int64(count)))
    }

    public func metadata() throws -> [String: String] { contents.withLock { $0.metadata } }

    public func setMetadata(_ metadata: [String: String]) throws {
        try contents.withLock { state in
            var next = state
            next.metadata = metadata
            try persist?(next)
            state = next
        }
    }

    /// Holds the rows as they are now for contexts pinned to a query generation.
    package func openSnapshot() throws -> any StoreSnapshot { MemorySnapshot(contents.withLock { $0 }) }

    public func save(_ changes: ChangeSet) throws -> SaveResult { try save(changes, beforeCommit: {}) }

    public func save(_ changes: ChangeSet, beforeCommit: () throws -> Void) throws -> SaveResult {
        try contents.withLock { state in
            // Work on a copy, so a failure anywhere leaves the store as it was.
            var next = state
            let result = try apply(changes, to: &next)
            if recordsHistory {
                record(HistoryRecord.of(changes, result: result, model: model, source: changes.source, tombstones: tombstones(of: changes.deleted.map(\.objectID), in: state)), in: &next)
            }
            try beforeCommit()
            try persist?(next)
            state = next
            return result
        }
    }

    func apply(_ changes: ChangeSet, to state: inout Contents) throws -> SaveResult {
        var result = SaveResult()
        var conflicts: [SaveConflict] = []
        let temporary = changes.inserted.map(\.objectID).filter { $0.isTemporaryID && changes.presetIDs[$0] == nil }
        var mapping = PermanentIDMap.Builder()
        mapping.add(changes.presetIDs)
        for (root, group) in Dictionary(grouping: temporary, by: { model.entityIfPresent($0.entityName)?.rootName ?? $0.entityName }) {
            for (id, key) in zip(group, Self.allocate(&state, root, group.count)) {
                mapping.add(id, ObjectID(entityName: id.entityName, rawKey: key))
            }
        }
        result.permanentIDs = mapping.build()
        func permanent(_ id: ObjectID?) -> ObjectID? { id.map { result.permanentIDs[$0] ?? $0 } }
        var touched: Set<String> = []
        for row in changes.inserted {
            let entity = try model.entity(named: row.objectID.entityName)
            let id = permanent(row.objectID)!
            // Transient attributes are in memory only: the store keeps their defaults, as a store file keeps nothing.
            var values = row.values
            for index in entity.transientAttributes { values[index] = entity.defaultValues[index] }
            // And so are transient to-ones, the last slots: nil here.
            let toOne = row.toOne.indices.map { $0 < entity.storedToOneCount ? permanent(row.toOne[$0]) : nil }
            state.rows[entity.rootName, default: [:]][id.rawKey] = StoredRow(entityName: entity.name, version: 1, values: values, toOne: toOne)
            touched.insert(entity.rootName)
        }
        for row in changes.updated {
            let entity = try model.entity(named: row.objectID.entityName)
            guard var stored = state.rows[entity.rootName]?[row.objectID.rawKey], stored.version == row.version else {
                let current = state.rows[entity.rootName]?[row.objectID.rawKey].map { snapshot(row.objectID.rawKey, $0) }
                conflicts.append(SaveConflict.make(row, id: row.objectID, expected: row.version, stored: current, entity: entity))
                continue
            }
            let (changed, changedToOne) = row.storedChanges(of: entity)
            guard !changed.isEmpty || !changedToOne.isEmpty else { continue }
            for index in changed { stored.values[index] = row.values[index] }
            for slot in changedToOne { stored.toOne[slot] = permanent(row.toOne[slot]) }
            stored.version += 1
            state.rows[entity.rootName]![row.objectID.rawKey] = stored
            result.updatedRows.append((row.objectID, stored.version))
            touched.insert(entity.rootName)
        }
        var deletedKeys: [String: Set<Int64>] = [:]
        for (id, version) in changes.deleted {
            let entity = try model.entity(named: id.entityName)
            guard let stored = state.rows[entity.rootName]?[id.rawKey], stored.version == version else {
                let current = state.rows[entity.rootName]?[id.rawKey].map { snapshot(id.rawKey, $0) }
                conflicts.append(SaveConflict.make(nil, id: id, expected: version, stored: current, entity: entity))
                continue
            }
            _ = stored
            state.rows[entity.rootName]![id.rawKey] = nil
            deletedKeys[entity.rootName, default: []].insert(id.rawKey)
            for table in Array(state.joins.keys) {
                state.joins[table]!.removeAll { link in
                    (joinRoots(table).source == entity.rootName && link.source == id.rawKey)
                        || (joinRoots(table).target == entity.rootName && link.target == id.rawKey)
                }
            }
        }
        for (id, version) in changes.checked {
            let entity = try model.entity(named: id.entityName)
            let stored = state.rows[entity.rootName]?[id.rawKey]
            guard stored?.version != version else { continue }
            conflicts.append(SaveConflict.make(nil, id: id, expected: version, stored: stored.map { snapshot(id.rawKey, $0) }, entity: entity))
        }
        guard conflicts.isEmpty else { throw ObjectGraphError.conflict(conflicts) }
        if !deletedKeys.isEmpty && model.hasRelationships { clearReferences(to: deletedKeys, in: &state) }
        try Self.applyToMany(changes.toMany, permanent: permanent, to: &state, model: model)
        try checkDestinationsExist(changes, in: state, permanent: permanent)
        if model.hasDerivedAttributes {
            let saved = Set((changes.inserted + changes.updated).compactMap { permanent($0.objectID) })
            try computeDerivedAttributes(in: &state, saved: saved, result: &result)
        }
        try checkUniqueness(state, roots: touched)
        return result
    }

    /// Writes the new contents of to-many relationships kept apart from the destinations' rows: join tables and the
    /// positions of ordered one-to-manys.
    static func applyToMany(_ toMany: [ChangeSet.ToManyContents], permanent: (ObjectID?) -> ObjectID?, to state: inout Contents, model: Model) throws {
        typealias List = (owner: Int64, relationship: ModelRelationship, members: [Int64])
        // Each join table's rewritten lists, from the side that names the table, and from the other side where both
        // keep an order: each table is then rewritten in one pass, however many lists the change set holds.
        var sourceLists: [String: [List]] = [:]
        var targetLists: [String: [List]] = [:]
        for contents in toMany {
            let owner = permanent(contents.objectID)!
            guard let relationship = try model.entity(named: owner.entityName).relationship(named: contents.relationship) else { continue }
            let members = contents.destinations.map { permanent($0)!.rawKey }
            switch relationship.storage {
            case .joinTable(let table, true): sourceLists[table, default: []].append((owner.rawKey, relationship, members))
            case .joinTable(let table, false) where relationship.isOrderedBothWays: targetLists[table, default: []].append((owner.rawKey, relationship, members))
            case .inverseForeignKey(_, let orderColumn?):
                for (position, member) in members.enumerated() { state.positions[orderColumn, default: [:]][member] = position }
            default:
                break
            }
        }
        for (table, lists) in sourceLists {
            var links = state.joins[table] ?? []
            let owners = Set(lists.map(\.owner))
            let orderedBothWays = lists[0].relationship.isOrderedBothWays
            // The positions the targets' lists give their members stay with the links that stay; a new link goes at
            // the end of its target's list (its target's list, when this save changed it, sets them below).
            var kept: [Int64: [Int64: Int]] = [:]
            var lastPosition: [Int64: Int] = [:]
            if orderedBothWays {
                for link in links {
                    guard let position = link.inversePosition else { continue }
                    if owners.contains(link.source) { kept[link.source, default: [:]][link.target] = position }
                    lastPosition[link.target] = max(lastPosition[link.target] ?? position, position)
                }
            }
            links.removeAll { owners.contains($0.source) }
            for list in lists {
                for (position, target) in list.members.enumerated() {
                    var inversePosition: Int?
                    if orderedBothWays {
                        let placed = kept[list.owner]?[target] ?? lastPosition[target].map { $0 + 1 } ?? 0
                        lastPosition[target] = max(lastPosition[target] ?? placed, placed)
                        inversePosition = placed
                    }
                    links.append((list.owner, target, list.relationship.isOrdered ? position : nil, inversePosition))
                }
            }
            state.joins[table] = links
        }
        for (table, lists) in targetLists {
            var positions: [Int64: [Int64: Int]] = [:]
            for list in lists {
                for (offset, source) in list.members.enumerated() where positions[list.owner]?[source] == nil {
                    positions[list.owner, default: [:]][source] = offset
                }
            }
            guard var links = state.joins[table] else { continue }
            for index in links.indices {
                if let position = positions[links[index].target]?[links[index].source] { links[index].inversePosition = position }
            }
            state.joins[table] = links
        }
    }

    /// Refuses a save that leaves a written to-one naming a row the store does not hold, as an SQLite store's foreign
    /// key does at commit: a link to an object deleted since (by this save or an earlier one), or never saved.
    private func checkDestinationsExist(_ changes: ChangeSet, in state: Contents, permanent: (ObjectID?) -> ObjectID?) throws {
        for (row, slots) in changes.inserted.map({ ($0, Array($0.toOne.indices)) }) + changes.updated.map({ ($0, $0.changedToOne) }) {
            let storedToOnes = try model.entity(named: row.objectID.entityName).storedToOneCount
            for slot in slots where slot < storedToOnes {
                guard let destination = permanent(row.toOne[slot]) else { continue }
                let root = model.entityIfPresent(destination.entityName)?.rootName ?? destination.entityName
                guard state.rows[root]?[destination.rawKey] == nil else { continue }
                let entity = try model.entity(named: row.objectID.entityName)
                let name = entity.relationships.indices.first { entity.toOneSlot[$0] == slot }.map { entity.relationships[$0].name } ?? "a to-one"
                throw ObjectGraphError.storeWriteFailed(
                    path: location,
                    reason: "\(permanent(row.objectID)!)'s '\(name)' names \(destination), which the store does not hold (deleted, or never saved)")
            }
        }
    }

    /// Computes every derived attribute as an SQLite store's triggers do (see ``DerivationTriggers``): from the
    /// rows as this save leaves them, `now()` for the rows it wrote; the saved rows go back to the saving context.
    private func computeDerivedAttributes(in state: inout Contents, saved: Set<ObjectID>, result: inout SaveResult) throws {
        let now = Date()
        for entity in model.entities where !entity.derivedAttributes.isEmpty {
            for (key, row) in state.rows[entity.rootName] ?? [:] where row.entityName == entity.name {
                let id = ObjectID(entityName: entity.name, rawKey: key)
                var values = row.values
                for (index, derivation) in entity.derivedAttributes {
                    func own(_ name: String) -> AttributeValue { entity.attributeIndex[name].map { row.values[$0] } ?? .null }
                    func text(_ name: String, _ transform: (String) -> String) -> AttributeValue {
                        if case .string(let string) = own(name) { return .string(transform(string)) }
                        return .null
                    }
                    switch derivation {
                    case .now:
                        if saved.contains(id) { values[index] = .date(now) }
                    case .lowercase(let name): values[index] = text(name) { $0.lowercased() }
                    case .uppercase(let name): values[index] = text(name) { $0.uppercased() }
                    case .canonical(let name): values[index] = text(name) { StringMatching.fold($0, [.caseInsensitive, .diacriticInsensitive]) }
                    case .count(let name):
                        guard let relationship = entity.relationship(named: name) else { continue }
                        values[index] = .int(Int64(try related(id, relationship, in: state).count))
                    case .toOne(let name, let attribute):
                        guard let relationship = entity.relationship(named: name),
                              let target = try related(id, relationship, in: state).first,
                              let destination = model.entityIfPresent(target.entityName), let position = destination.attributeIndex[attribute],
                              let targetRow = state.rows[destination.rootName]?[target.rawKey] else {
                            values[index] = .null
                            continue
                        }
                        values[index] = targetRow.values[position]
                    }
                }
                state.rows[entity.rootName]![key]!.values = values
                if saved.contains(id) { result.refreshed[id] = snapshot(key, state.rows[entity.rootName]![key]!) }
            }
        }
    }

    /// Clears every stored to-one that names a deleted row (`deleted`: keys by root entity), as an SQLite store's
    /// foreign key does (`ON DELETE SET NULL`): the saving context unlinked what it showed pointing there, but a row
    /// it did not show (another context's link, saved since it read) must not name a row that is gone. One pass over
    /// the rows of each entity with a to-one into a root that lost rows, however many rows the save deleted.
    private func clearReferences(to deleted: [String: Set<Int64>], in state: inout Contents) {
        for entity in model.entities {
            for (index, relationship) in entity.relationships.enumerated() {
                guard let slot = entity.toOneSlot[index],
                      let gone = model.entityIfPresent(relationship.destinationEntityName).flatMap({ deleted[$0.rootName] }),
                      let rows = state.rows[entity.rootName] else { continue }
                for (key, row) in rows where row.entityName == entity.name {
                    if let destination = row.toOne[slot], gone.contains(destination.rawKey) {
                        state.rows[entity.rootName]![key]!.toOne[slot] = nil
                    }
                }
            }
        }
    }

    private func joinRoots(_ table: String) -> (source: String, target: String) {
        for entity in model.entities {
            for relationship in entity.relationships {
                if case .joinTable(table, true) = relationship.storage {
                    return (entity.rootName, model.entityIfPresent(relationship.destinationEntityName)?.rootName ?? "")
                }
            }
        }
        return ("", "")
    }

    private func checkUniqueness(_ state: Contents, roots: Set<String>) throws {
        for root in roots {
            guard let tree = model.entityIfPresent(root)?.selfAndDescendantNames.compactMap(model.entityIfPresent) else { continue }
            for entity in tree {
                for keys in entity.description.uniquenessConstraints {
                    var seen: Set<[AttributeValue]> = []
                    for row in (state.rows[root] ?? [:]).values {
                        guard let rowEntity = model.entityIfPresent(row.entityName), rowEntity.isKind(of: entity) else { continue }
                        let tuple = keys.map { row.values[rowEntity.attributeIndex[$0]!] }
                        if tuple.contains(.null) { continue }
                        if !seen.insert(tuple).inserted {
                            throw ObjectGraphError.uniquenessViolation(
                                entity: entity.name, keys: keys, detail: "two objects have the values \(tuple.map(\.description).joined(separator: ", "))")
                        }
                    }
                }
            }
        }
    }
}

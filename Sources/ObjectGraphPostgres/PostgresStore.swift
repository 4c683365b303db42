import Foundation
import Logging
import ObjectGraph
import PostgresNIO
import PredicateFormat

/// A store in a PostgreSQL database, shared by every host that opens it: the object graph of the SQLite store,
/// its tables and names (a table per inheritance tree, `row.id`, `row.entity`, `row.version`, `objectgraph.metadata`
/// holding the model), its predicates (compiled in PostgreSQL's dialect, values always bound), its optimistic
/// locking and merge policies, and its persistent history, which every save records and announces with
/// `NOTIFY`, so that coordinators on other hosts merge it (`PersistentStoreCoordinator.init(model:store:watchesRemoteChanges:)`).
///
/// ```swift
/// let store = try PostgresStore(configuration: PostgresStoreConfiguration(url: "postgres://app@db.local/books"), model: model)
/// let coordinator = try PersistentStoreCoordinator(model: model, store: store, watchesRemoteChanges: true)
/// ```
///
/// Calls are synchronous, like the SQLite store's: each waits for the server on the caller's thread, never longer
/// than ``PostgresStoreConfiguration/queryTimeout``.
public final class PostgresStore: PersistentStore, RemoteChangeSource, QueryGenerationStore {
    public let identifier: String
    public let location: String
    let model: Model
    let pool: PostgresConnectionPool
    let tables: [String: TableLayout]
    let schema: ModelSQLSchema
    /// Names this open store in the history it records, so that its coordinator skips its own transactions.
    let historyOrigin = UUID().uuidString
    /// The channel saves announce their transactions on.
    static let channel = "objectgraph_history"
    /// postgres-nio's own messages, errors only: the store traces its statements itself (``ObjectGraphLogging``).
    static let sqlLogger: Logger = {
        var logger = Logger(label: "ObjectGraph.PostgresStore.SQL")
        logger.logLevel = .error
        return logger
    }()

    /// Opens the store in the database `configuration` names, creating its tables when the database is empty.
    ///
    /// - Throws: `ObjectGraphError.storeUnavailable(path:reason:)` when the server cannot be reached or refuses
    ///   the connection, or the database holds other tables; `ObjectGraphError.modelMismatch(path:storeHash:modelHash:)`
    ///   when it holds a store of another model. The path names the user, host, port and database.
    public convenience init(configuration: PostgresStoreConfiguration, model: Model) throws {
        try self.init(configuration: configuration, versions: try SchemaVersions([model]))
    }

    /// Opens (or creates) the store for the current of `versions`: a store an earlier version wrote is migrated
    /// first, one version at a time by the plan inferred between them, with each step's custom stage (see
    /// `MigrationStage`) around it, all in one transaction (a failure anywhere, a stage's error included, leaves it
    /// as it was); a store a later version wrote is refused untouched. `progress` hears, on the calling thread, each
    /// step's entities and rows as they are copied.
    ///
    /// ```swift
    /// let versions = try SchemaVersions([v1, v2], stages: [MigrationStage(from: 0, didMigrate: { ctx in
    ///     for book in try ctx.fetch(FetchRequest(entityName: "Book")) { try book.setValue(1, forKey: "edition") }
    /// })])
    /// let store = try PostgresStore(configuration: configuration, versions: versions) { progress in
    ///     print("step \(progress.step) of \(progress.steps): \(progress.rowsDone) of \(progress.rows) rows")
    /// }
    /// ```
    public init(configuration: PostgresStoreConfiguration, versions: SchemaVersions, progress: MigrationProgressHandler? = nil) throws {
        let model = versions.current
        self.model = model
        location = configuration.location
        pool = try PostgresConnectionPool(configuration: configuration)
        let layouts = PostgresSchema.tableLayouts(model)
        tables = Dictionary(uniqueKeysWithValues: layouts.map { ($0.rootEntity, $0) })
        schema = ModelSQLSchema(model: model)
        let location = location
        identifier = try pool.withSession { session in
            do {
                return try PostgresSchema.prepare(session, versions: versions, tables: layouts, location: location, progress: progress)
            } catch let failure as PostgresErrors.Failure {
                throw ObjectGraphError.storeUnavailable(path: location, reason: failure.reason)
            }
        }
    }

    /// The store a migration stage's context saves through: `model`'s tables as `session` sees them, inside the
    /// migration's transaction, with every call on that session (see ``PostgresConnectionPool/init(lending:)``).
    init(stageOf session: PostgresSession, model: Model, identifier: String) {
        self.model = model
        location = session.pool.location
        pool = PostgresConnectionPool(lending: session)
        let layouts = PostgresSchema.tableLayouts(model)
        tables = Dictionary(uniqueKeysWithValues: layouts.map { ($0.rootEntity, $0) })
        schema = ModelSQLSchema(model: model)
        self.identifier = identifier
    }

    /// ``init(configuration:model:)`` from a URL (`postgres://user:password@host:port/database`).
    public convenience init(url: String, model: Model) throws {
        try self.init(configuration: try PostgresStoreConfiguration(url: url), model: model)
    }

    func layout(for entityName: String) throws -> (ModelEntity, TableLayout) {
        let entity = try model.entity(named: entityName)
        guard let table = tables[entity.rootName] else { throw ObjectGraphError.unknownEntity(entityName) }
        return (entity, table)
    }

    func read<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        if let pinned = StoreGeneration.snapshot(of: self, as: PostgresSnapshot.self) {
            return try PostgresErrors.reading(location) { try pinned.reading(body) }
        }
        return try PostgresErrors.reading(location) { try pool.withSession(body) }
    }

    /// Holds the database as it is now for contexts pinned to a query generation: a connection of its own in a
    /// repeatable-read, read-only transaction (one connection per generation, beside the pool's).
    package func openSnapshot() throws -> any StoreSnapshot {
        try PostgresErrors.reading(location) { try PostgresSnapshot(pool: pool) }
    }

    // MARK: Reading

    public func snapshots(for ids: [ObjectID]) throws -> [Snapshot] {
        let found = try read { session in try snapshots(of: ids, in: session) }
        // Each row once, however many IDs asked for it.
        var seen = Set<ObjectID>()
        return ids.compactMap { found[$0] }.filter { seen.insert($0.objectID).inserted }
    }

    /// What a request selects, compiled: the rows of its entity (`t0`) with the tables its predicate and terms
    /// join, the condition on them, their bound values, and the compiled terms and expressions.
    struct Selection {
        var entity: ModelEntity
        var table: TableLayout
        var joins: String
        var condition: String
        var binds: StatementBindings
        var compiled: CompiledPredicate
    }

    /// The rows `request` selects, with `terms` and `expressions` compiled beside its predicate (aggregates over the
    /// rows when `aggregatingRows`, as a dictionary request reads them).
    func selection(
        _ request: StoreFetchRequest, terms: [[String]] = [], expressions: [FormatExpression] = [], aggregatingRows: Bool = true
    ) throws -> Selection {
        let (entity, table) = try layout(for: request.entityName)
        var conditions: [String] = []
        var arguments: [String] = []
        let names = request.includesSubentities ? entity.selfAndDescendantNames : [entity.name]
        if names.count < (model.entityIfPresent(entity.rootName)?.selfAndDescendantNames.count ?? 0) {
            conditions.append("t0.\(pgQuoted(StorageNames.rowEntity)) IN (\((1...names.count).map { "$\($0)" }.joined(separator: ", ")))")
            arguments = names
        }
        let compiled: CompiledPredicate
        do {
            compiled = try SQLCompiler(schema: schema, dialect: .postgres).compile(
                request.predicate, entity: entity.name, alias: "t0", terms: terms, expressions: expressions,
                aggregatingRows: aggregatingRows, firstArgumentIndex: arguments.count + 1)
        } catch {
            throw ObjectGraphError.invalidPredicate(entity: entity.name, error: error)
        }
        conditions.append(compiled.condition)
        var binds = PostgresSchema.binds(arguments)
        for value in compiled.arguments { PostgresValueCoding.append(value, to: &binds) }
        return Selection(
            entity: entity, table: table, joins: compiled.joins.joined(separator: " "), condition: conditions.joined(separator: " AND "), binds: binds,
            compiled: compiled)
    }

    /// The SELECT of a request with `columns`, in its order when `ordered`, sliced by its offset and limit.
    func selectSQL(
        _ request: StoreFetchRequest, columns: (TableLayout) -> String, ordered: Bool, sliced: Bool = true, extraTerms: [[String]] = [],
        expressions: [FormatExpression] = [], locking: Bool = false
    ) throws -> (sql: String, binds: StatementBindings, terms: [String], expressions: [(sql: String, family: PredicateValue.Family?)]) {
        let sortPaths = ordered ? request.sortKeys.map(\.keyPath) : []
        let selection = try selection(request, terms: sortPaths + extraTerms, expressions: expressions)
        let (entity, table, compiled) = (selection.entity, selection.table, selection.compiled)
        var binds = selection.binds
        var sql = "SELECT \(columns(table)) FROM \(pgQuoted(table.name)) AS t0 \(selection.joins) WHERE \(selection.condition)"
        if ordered {
            var order: [String] = []
            for (key, term) in zip(request.sortKeys, compiled.terms) {
                let isString = model.attribute(at: key.keyPath, from: entity)?.type == .string
                var value = key.foldOptions.isEmpty ? term : "og_fold(\(term), \(key.foldOptions.rawValue))"
                if isString { value += " COLLATE \"C\"" }
                // Nil sorts first ascending, as in SQLite and in memory.
                order.append("\(value) \(key.ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST")")
            }
            order.append("t0.\(pgQuoted(StorageNames.rowID))")
            sql += " ORDER BY " + order.joined(separator: ", ")
        }
        if sliced && (request.limit != nil || request.offset > 0) {
            sql += " LIMIT $\(binds.count + 1) OFFSET $\(binds.count + 2)"
            binds.append(request.limit.map(Int64.init))
            binds.append(Int64(request.offset))
        }
        // A batch request's plan locks the rows it read until its transaction ends, so no other save slips between.
        if locking { sql += " FOR UPDATE OF t0" }
        return (sql, binds, Array(compiled.terms.dropFirst(sortPaths.count)), Array(zip(compiled.expressions, compiled.expressionFamilies)))
    }

    public func fetch(_ request: StoreFetchRequest) throws -> [Snapshot] {
        let (_, table) = try layout(for: request.entityName)
        let (sql, binds, _, _) = try selectSQL(request, columns: { $0.selectList.joined(separator: ", ") }, ordered: true)
        return try read { session in try session.rows(sql, binds) { try PostgresRowReader.snapshot($0, table: table) } }
    }

    /// The rows, each handed to `body` while later ones are still arriving and being decoded.
    public func fetch(_ request: StoreFetchRequest, each body: (Snapshot) throws -> Void) throws {
        let (_, table) = try layout(for: request.entityName)
        let (sql, binds, _, _) = try selectSQL(request, columns: { $0.selectList.joined(separator: ", ") }, ordered: true)
        try read { session in try session.stream(sql, binds, decode: { try PostgresRowReader.snapshot($0, table: table) }, each: body) }
    }

    public func fetchIDs(_ request: StoreFetchRequest) throws -> [ObjectID] {
        let (sql, binds, _, _) = try selectSQL(
            request, columns: { _ in "t0.\(pgQuoted(StorageNames.rowID)), t0.\(pgQuoted(StorageNames.rowEntity))" }, ordered: true)
        let single = try layout(for: request.entityName).1.single?.name
        return try read { session in
            try session.query(sql, binds).map { row in
                let cells = row.makeRandomAccess()
                return ObjectID(entityName: try single ?? cells[1].decode(String.self), rawKey: try cells[0].decode(Int64.self))
            }
        }
    }

    public func count(_ request: StoreFetchRequest) throws -> Int {
        let (sql, binds, _, _) = try selectSQL(request, columns: { _ in "1" }, ordered: false)
        return try read { session in
            Int(try session.query("SELECT COUNT(*) FROM (\(sql)) AS selected", binds).first?.decode(Int64.self) ?? 0)
        }
    }

    public func relatedIDs(of id: ObjectID, relationship: ModelRelationship) throws -> [ObjectID] {
        try relatedIDs(of: [id], relationship: relationship)[0]
    }

    public func relatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]] {
        try relatedIDs(of: ids, relationship: relationship, in: nil)
    }

    /// The destinations of a to-many relationship for many owners, read on `session` when one is given (inside its
    /// transaction), else on a connection of the pool; one list per ID of `ids`, in the same order.
    func relatedIDs(of ids: [ObjectID], relationship: ModelRelationship, in session: PostgresSession?) throws -> [[ObjectID]] {
        // A temporary ID has no rows, and a transient relationship no links here: the list stays empty.
        let owners = relationship.isTransient ? [] : ids.filter { !$0.isTemporaryID }
        guard !owners.isEmpty else { return Array(repeating: [], count: ids.count) }
        let destination = try model.entity(named: relationship.destinationEntityName)
        let destinationTable = pgQuoted(destination.tableName)
        let id = pgQuoted(StorageNames.rowID), entityColumn = pgQuoted(StorageNames.rowEntity)
        let sql: String
        switch relationship.storage {
        case .inverseForeignKey(let column, let orderColumn):
            let order = orderColumn.map { "d.\(pgQuoted($0)), " } ?? ""
            sql = "SELECT d.\(pgQuoted(column)), d.\(id), d.\(entityColumn) FROM \(destinationTable) AS d WHERE d.\(pgQuoted(column)) = ANY($1) ORDER BY \(order)d.\(id)"
        case .joinTable(let table, let isSourceSide):
            let (owner, target) = isSourceSide ? ("source", "target") : ("target", "source")
            let order = relationship.isOrdered ? "j.\(isSourceSide ? "position" : "inverse_position"), " : ""
            sql = """
                SELECT j.\(owner), d.\(id), d.\(entityColumn) FROM \(pgQuoted(table)) AS j JOIN \(destinationTable) AS d ON d.\(id) = j.\(target)
                WHERE j.\(owner) = ANY($1) ORDER BY \(order)d.\(id)
                """
        case .foreignKey:
            throw ObjectGraphError.wrongPropertyKind(
                entity: owners[0].entityName, key: relationship.name, reason: "is a to-one relationship: its destination is read with its row")
        case .transient:
            return Array(repeating: [], count: ids.count)
        }
        var binds = StatementBindings()
        binds.append(owners.map(\.rawKey))
        // A destination tree of one entity names no entity per row. Cells are decoded one by one: decoding a row as
        // a tuple looked up the tuple's generic metadata for every row, half the time of reading 400,000 links.
        let single = tables[destination.rootName]?.single?.name
        let read = { (session: PostgresSession) throws -> [[ObjectID]] in
            var byOwner: [Int64: [ObjectID]] = [:]
            for row in try session.query(sql, binds) {
                let cells = row.makeRandomAccess()
                let name = try single ?? cells[2].decode(String.self)
                byOwner[try cells[0].decode(Int64.self), default: []].append(ObjectID(entityName: name, rawKey: try cells[1].decode(Int64.self)))
            }
            return ids.map { $0.isTemporaryID ? [] : byOwner[$0.rawKey] ?? [] }
        }
        if let session { return try read(session) }
        return try self.read(read)
    }

    public func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: AttributeValue]] {
        try PostgresDictionaryQuery(store: self, request: request).run()
    }

    // MARK: Keys

    public func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        return try PostgresErrors.writing(location) {
            try pool.withSession { session in try Self.allocate(session, root: rootEntity, count: count) }
        }
    }

    /// Moves the tree's sequence past `count` keys and returns them. The row lock the update takes orders hosts'
    /// allocations: no key is handed out twice.
    static func allocate(_ session: PostgresSession, root: String, count: Int) throws -> [Int64] {
        var binds = StatementBindings()
        binds.append(Int64(count))
        binds.append(root)
        guard let last = try session.query(
            "UPDATE \(pgQuoted(PostgresSchema.sequenceTable)) SET max_key = max_key + $1 WHERE entity = $2 RETURNING max_key", binds)
            .first?.decode(Int64.self) else {
            throw ObjectGraphError.unknownEntity(root)
        }
        return Array((last - Int64(count) + 1)...last)
    }

    // MARK: Saving

    public func save(_ changes: ChangeSet) throws -> SaveResult { try save(changes, beforeCommit: {}) }

    public func save(_ changes: ChangeSet, beforeCommit: () throws -> Void) throws -> SaveResult {
        guard !changes.isEmpty else {
            try beforeCommit()
            return SaveResult()
        }
        return try PostgresErrors.writing(location) {
            try pool.withSession { session in
                try session.transaction(learningOutcome: true) {
                    var transaction = PostgresSaveTransaction(store: self, session: session)
                    let result = try transaction.run(changes)
                    try beforeCommit()
                    return result
                }
            }
        }
    }
}

/// Rows of a table's `TableLayout.selectList` as snapshots.
enum PostgresRowReader {
    static func snapshot(_ row: PostgresRow, table: TableLayout) throws -> Snapshot {
        let cells = row.makeRandomAccess()
        let key = try cells[0].decode(Int64.self)
        let entityName: String
        let columns: TableLayout.EntityColumns
        if let single = table.single {
            (entityName, columns) = single
        } else {
            entityName = try cells[1].decode(String.self)
            guard let found = table.entities[entityName] else { throw ObjectGraphError.unknownEntity(entityName) }
            columns = found
        }
        var values: [AttributeValue] = []
        values.reserveCapacity(columns.attributeTypes.count)
        for index in columns.attributeTypes.indices {
            let position = columns.attributes[index]
            values.append(position < 0 ? columns.defaults[index] : try PostgresValueCoding.decode(cells[position], as: columns.attributeTypes[index]))
        }
        var toOne: [ObjectID?] = []
        for slot in columns.toOne.indices {
            let cell = cells[columns.toOne[slot]]
            guard cell.bytes != nil else {
                toOne.append(nil)
                continue
            }
            let destination = try columns.toOneEntity[slot].map { try cells[$0].decode(String.self) } ?? columns.toOneDestination[slot]
            toOne.append(ObjectID(entityName: destination, rawKey: try cell.decode(Int64.self)))
        }
        for _ in 0..<columns.transientToOneCount { toOne.append(nil) }
        return Snapshot(
            objectID: ObjectID(entityName: entityName, rawKey: key), version: try cells[2].decode(Int64.self),
            values: AttributeValues(values), toOne: toOne)
    }
}

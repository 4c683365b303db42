import Foundation
import GRDB
import GRDBSQLite
import PredicateFormat

/// Reading: snapshots by ID, fetches with predicates and sort keys compiled to SQL, IDs, counts, dictionaries.
extension SQLiteStore {
    /// The number of SQL statements the store has run to read, for tests that count round trips.
    public var queryCount: Int { statementCount.load(ordering: .relaxed) }

    func layout(for entityName: String) throws -> (ModelEntity, TableLayout) {
        let entity = try model.entity(named: entityName)
        guard let table = tables[entity.rootName] else { throw ObjectGraphError.unknownEntity(entityName) }
        return (entity, table)
    }

    func rows(_ db: Database, _ sql: String, _ arguments: [DatabaseValue]) throws -> RowCursor {
        statementCount.add(1, ordering: .relaxed)
        return try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
    }

    /// Runs `body` on a reader. Several statements share one read transaction (one snapshot of the store); a
    /// single statement needs none (SQLite reads each statement from one snapshot), which spares a small fetch
    /// the cost of opening and closing a transaction, and takes one of the store's ``StatementReaders``.
    /// Holds the store as it is now for contexts pinned to a query generation: a connection in a read transaction,
    /// which keeps the WAL from being checkpointed past it until the last such context moves on.
    package func openSnapshot() throws -> any StoreSnapshot {
        try reportingStoreErrors { try statementReaders.pin() }
    }

    func readStore<T>(singleStatement: Bool = false, _ body: (Database) throws -> T) throws -> T {
        try reportingStoreErrors { singleStatement ? try statementReaders.read(body) : try statementReaders.readInTransaction(body) }
    }

    /// Runs a read, reporting SQLite's errors as the store's: a file SQLite can no longer open or recognize as a
    /// database as ``ObjectGraphError/storeUnavailable(path:reason:)``, any other failure as
    /// ``ObjectGraphError/storeReadFailed(path:reason:)`` with the statement that failed.
    private func reportingStoreErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            let message = error.message ?? "SQLite error \(error.resultCode.rawValue)"
            switch error.resultCode.primaryResultCode {
            case .SQLITE_CANTOPEN, .SQLITE_NOTADB:
                throw ObjectGraphError.storeUnavailable(path: location, reason: message)
            default:
                let statement = error.sql.map { " (while running \($0))" } ?? ""
                throw ObjectGraphError.storeReadFailed(path: location, reason: "\(message), SQLite code \(error.resultCode.rawValue)\(statement)")
            }
        }
    }

    /// Runs `sql` and hands each result row to `body` as the raw statement, positioned on the row.
    ///
    /// The hot read path: GRDB prepares (and, when `cached`, keeps) the statement and binds the arguments, and the
    /// rows are read with SQLite's column functions, which costs no generic decoding per value. Statements whose
    /// text varies with the input (`IN (?, ?, …)` lists) are not cached, so the cache stays small.
    func step(_ db: Database, _ sql: String, _ arguments: [DatabaseValue], cached: Bool, _ body: (OpaquePointer) throws -> Void) throws {
        let statement = cached ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
        try statement.bind(arguments)
        try step(bound: statement) { row in
            try body(row)
            return true
        }
    }

    /// Runs a statement whose parameters are bound while `body` returns true for the row it was handed; the
    /// statement is reset when this returns, whatever `body` did with it. Only SQLite's C API touches the
    /// statement, so this also runs outside GRDB's queue (``StatementReaders/withStatement(for:sliced:_:)``).
    func step(bound statement: Statement, while body: (OpaquePointer) throws -> Bool) throws {
        statementCount.add(1, ordering: .relaxed)
        let raw = statement.sqliteStatement
        defer { sqlite3_reset(raw) }
        while true {
            let code = sqlite3_step(raw)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw Statement.lastError(of: raw) }
            guard try body(raw) else { return }
        }
    }

    public func snapshots(for ids: [ObjectID]) throws -> [Snapshot] {
        if ids.count == 1 { return try snapshot(for: ids[0]).map { [$0] } ?? [] }
        let saved = ids.filter { !$0.isTemporaryID }
        // Mostly IDs of one entity (a prefetch's destinations): grouping them hashed a name per ID.
        let groups: [String: [ObjectID]] = if let first = saved.first, saved.allSatisfy({ $0.entityName == first.entityName }) {
            [model.entityIfPresent(first.entityName)?.rootName ?? first.entityName: saved]
        } else {
            Dictionary(grouping: saved) { id in model.entityIfPresent(id.entityName)?.rootName ?? id.entityName }
        }
        // A few keys of one table read one statement: no read transaction, and a statement kept prepared.
        return try readStore(singleStatement: groups.count == 1 && ids.count <= 500) { db in
            var result: [Snapshot] = []
            result.reserveCapacity(ids.count)
            for (root, group) in groups {
                guard let table = tables[root] else { throw ObjectGraphError.unknownEntity(root) }
                let requested = table.single != nil ? [:] : Dictionary(group.map { ($0.rawKey, $0.entityName) }) { first, _ in first }
                var reader = RowReader(table: table, external: externalData)
                for start in stride(from: 0, to: group.count, by: 500) {
                    let chunk = group[start..<min(start + 500, group.count)]
                    let keys = KeyChunk(chunk.map(\.rawKey))
                    let sql = "\(table.selectClause) WHERE \(keys.condition(on: "t0.\(RowColumn.id)"))"
                    try step(db, sql, keys.arguments, cached: keys.isRange || chunk.count == 1) { row in
                        let snapshot = try reader.snapshot(row)
                        if isRow(snapshot, of: requested[snapshot.objectID.rawKey], in: table) { result.append(snapshot) }
                    }
                }
            }
            return result
        }
    }

    /// The row of one ID: a fault fired alone, the commonest read of all (a walk from 200,000 books to authors loaded
    /// one at a time reads 20,000), made with no grouping, no statement text built and no array of arguments.
    private func snapshot(for id: ObjectID) throws -> Snapshot? {
        guard !id.isTemporaryID else { return nil }
        let root = model.entityIfPresent(id.entityName)?.rootName ?? id.entityName
        guard let table = tables[root] else { throw ObjectGraphError.unknownEntity(root) }
        return try reportingStoreErrors {
            try statementReaders.withKeptStatement(table.selectByKey) { statement in
                sqlite3_bind_int64(statement.sqliteStatement, 1, id.rawKey)
                var reader = RowReader(table: table, external: externalData)
                var found: Snapshot?
                try step(bound: statement) { row in
                    let snapshot = try reader.snapshot(row)
                    if isRow(snapshot, of: id.entityName, in: table) { found = snapshot }
                    return false
                }
                return found
            }
        }
    }

    /// Whether `row`, read from `table` by a key asked for as an ID of the entity named `asked`, is a row of that
    /// entity: a table of one entity holds only its own rows, but a key of a tree's table may hold a row of another
    /// entity of the tree.
    private func isRow(_ row: Snapshot, of asked: String?, in table: TableLayout) -> Bool {
        guard table.single == nil else { return true }
        guard let asked = asked.flatMap(model.entityIfPresent) else { return false }
        return model.entityIfPresent(row.objectID.entityName)?.isKind(of: asked) == true
    }

    /// The condition on `t0.row.entity` that keeps `entity`'s rows (and its sub-entities' when asked) out of its
    /// tree's table, none when that is every row, with its arguments, numbered from 1: a computed column before
    /// WHERE may hold numbered placeholders, after which a bare `?` would take the next number rather than the first.
    func entityFilter(_ entity: ModelEntity, includesSubentities: Bool) -> (conditions: [String], arguments: [DatabaseValue]) {
        let names = includesSubentities ? entity.selfAndDescendantNames : [entity.name]
        guard names.count < (model.entityIfPresent(entity.rootName)?.selfAndDescendantNames.count ?? 0) else { return ([], []) }
        return (["t0.\(RowColumn.entity) IN (\((1...names.count).map { "?\($0)" }.joined(separator: ",")))"], names.map(\.databaseValue))
    }

    /// The SQL for a request: entity filter, compiled predicate and joins, order, slice.
    func selectSQL(
        _ request: StoreFetchRequest, columns: (TableLayout) -> String, ordered: Bool, sliced: Bool, extraTerms: [[String]] = [],
        expressions: [FormatExpression] = []
    ) throws -> (sql: String, arguments: [DatabaseValue], terms: [String], expressions: [(sql: String, family: PredicateValue.Family?)]) {
        let (entity, table) = try layout(for: request.entityName)
        var (conditions, arguments) = entityFilter(entity, includesSubentities: request.includesSubentities)
        let sortPaths = ordered ? request.sortKeys.map(\.keyPath) : []
        let compiled: CompiledPredicate
        do {
            compiled = try SQLCompiler(schema: self).compile(
                request.predicate, entity: entity.name, alias: "t0", terms: sortPaths + extraTerms, expressions: expressions,
                aggregatingRows: true, firstArgumentIndex: arguments.count + 1)
        } catch {
            throw ObjectGraphError.invalidPredicate(entity: entity.name, error: error)
        }
        arguments += compiled.arguments
        conditions.append(compiled.condition)
        var sql = "SELECT \(columns(table)) FROM \(sqlQuoted(table.name)) AS t0 \(compiled.joins.joined(separator: " ")) WHERE \(conditions.joined(separator: " AND "))"
        if ordered {
            var order: [String] = []
            for (key, term) in zip(request.sortKeys, compiled.terms) {
                let options = key.foldOptions
                let value = options.isEmpty ? term : "og_fold(\(term), \(options.rawValue))"
                order.append("\(value) \(key.ascending ? "ASC" : "DESC")")
            }
            order.append("t0.\(RowColumn.id)")
            sql += " ORDER BY " + order.joined(separator: ", ")
        }
        if sliced && (request.limit != nil || request.offset > 0) {
            sql += " LIMIT ? OFFSET ?"
            arguments += [(request.limit ?? -1).databaseValue, request.offset.databaseValue]
        }
        return (sql, arguments, Array(compiled.terms.dropFirst(sortPaths.count)), Array(zip(compiled.expressions, compiled.expressionFamilies)))
    }

    /// The SQL of an object fetch. An app repeats the same few fetches (a screen's query, a lookup on each
    /// keystroke), so the compiled SQL is kept by what decides it: everything but the slice, which is bound.
    ///
    /// A fetch that differs from a compiled one only in its constants (a lookup by another key) takes the kept SQL
    /// with its own constants bound where the compiled one's went (see ``ConstantSlots``).
    func fetchSQL(_ request: StoreFetchRequest) throws -> (compiled: FetchSQL, slice: FetchSlice?) {
        let key = FetchSQLKey(
            entityName: request.entityName, includesSubentities: request.includesSubentities, predicate: request.predicate,
            sortKeys: request.sortKeys)
        let slice = request.limit != nil || request.offset > 0 ? FetchSlice(limit: Int64(request.limit ?? -1), offset: Int64(request.offset)) : nil
        let hash = key.hash()
        if let kept = fetchSQLCache.entry(for: hash) as? FetchSQL, kept.key.isIdentical(to: key) { return (kept, slice) }
        // A fetch of a kept shape is not kept by its constants: a lookup by each of many keys would replace a kept
        // compilation at every lookup, freeing one it may need next (a screen's query), and the shape serves them.
        let constants = request.predicate?.constants ?? []
        if constants.contains(where: \.isSlottable), let filled = filledTemplate(for: key, constants: constants) { return (filled, slice) }
        let compiled = try compiledFetch(request, key: key, constants: constants)
        fetchSQLCache.keep(compiled, for: hash)
        return (compiled, slice)
    }

    /// The compilation of `key`'s shape with `constants` (the key's, in order) in their slots, when one is kept.
    private func filledTemplate(for key: FetchSQLKey, constants: [PredicateValue]) -> FetchSQL? {
        guard let template = fetchSQLTemplates.entry(for: key.hash(asShape: true)) as? FetchSQLTemplate,
              template.key.isShape(of: key), let slots = template.slots else { return nil }
        return template.filled(with: constants.map(PredicateSQLValues.databaseValue), slots: slots, key: key)
    }

    /// `request`'s SQL (`constants` are its predicate's), compiled, and its shape matched for the next fetch of that
    /// shape.
    private func compiledFetch(_ request: StoreFetchRequest, key: FetchSQLKey, constants: [PredicateValue]) throws -> FetchSQL {
        var unsliced = request
        (unsliced.limit, unsliced.offset) = (nil, 0)
        func compile(_ predicate: FormatPredicate?) throws -> (sql: String, arguments: [DatabaseValue]) {
            unsliced.predicate = predicate
            let (sql, arguments, _, _) = try selectSQL(unsliced, columns: { $0.selectList.joined(separator: ", ") }, ordered: true, sliced: false)
            return (sql, arguments)
        }
        guard let predicate = request.predicate, constants.contains(where: \.isSlottable) else {
            let (sql, arguments) = try compile(request.predicate)
            return FetchSQL(key: key, sql: sql, slicedSQL: sql + " LIMIT ? OFFSET ?", arguments: arguments)
        }
        let shapeKey = FetchSQLKey(
            entityName: request.entityName, includesSubentities: request.includesSubentities, predicate: predicate.shape,
            sortKeys: request.sortKeys)
        let bound = constants.map(PredicateSQLValues.databaseValue)
        let (sql, arguments) = try compile(predicate)
        let compiled = FetchSQL(key: key, sql: sql, slicedSQL: sql + " LIMIT ? OFFSET ?", arguments: arguments)
        // Compiled again with probes in place of the constants: where the probes went, any constants of these kinds go.
        let probes = constants.indices.map { constants[$0].isSlottable ? constants[$0].probe($0) : nil }
        var slots: ConstantSlots?
        if let probed = try? compile(predicate.replacingConstants { position, value in probes[position] ?? value }), probed.sql == sql {
            slots = ConstantSlots.match(
                actual: arguments, probed: probed.arguments, constants: bound, probes: probes.map { $0.map(PredicateSQLValues.databaseValue) },
                same: DatabaseValue.isIdentical)
        }
        // Kept where `filledTemplate` looks: the request's hash as its shape, which equals its built shape's hash.
        fetchSQLTemplates.keep(FetchSQLTemplate(key: shapeKey, compiled: compiled, slots: slots), for: key.hash(asShape: true))
        return compiled
    }

    public func fetch(_ request: StoreFetchRequest) throws -> [Snapshot] {
        var result: [Snapshot] = []
        try fetch(request) { result.append($0) }
        return result
    }

    public func fetch(_ request: StoreFetchRequest, each body: (Snapshot) throws -> Void) throws {
        let (_, table) = try layout(for: request.entityName)
        let (compiled, slice) = try fetchSQL(request)
        try reportingStoreErrors {
            try statementReaders.withStatement(for: compiled, sliced: slice != nil) { kept in
                try kept.bind(slice: slice)
                guard tracesSQL else { return try stepRows(kept.statement, table: table, body) }
                var rows = 0
                try stepRows(kept.statement, table: table) { row in
                    rows += 1
                    try body(row)
                }
                ObjectGraphLogging.fetched(rows, of: request.entityName)
            }
        }
    }

    /// Runs a fetch's statement and hands each row to `body` as a snapshot; past ``pipelineThreshold`` rows, the
    /// rest are read on a thread of their own while `body` handles the rows already read (see ``RowPipeline``).
    ///
    /// The rows just before the hand-over are timed, and so are the rows after it, for the store's
    /// ``ReadAheadPolicy``, which stops reading ahead for a while when it did not pay.
    private func stepRows(_ statement: Statement, table: TableLayout, _ body: (Snapshot) throws -> Void) throws {
        var reader = RowReader(table: table, external: externalData)
        let threshold = pipelineThreshold.load(ordering: .relaxed)
        var remaining = threshold
        // The rows timed on one thread: the second half of those before the hand-over (the first ones pay for
        // starting the statement).
        let timed = threshold / 2
        var timing: ContinuousClock.Instant?
        try step(bound: statement, while: { row in
            try body(try reader.snapshot(row))
            remaining -= 1
            if remaining == timed, timed >= ReadAheadPolicy.minimumRows { timing = .now }
            guard remaining == 0, !refusesReadingThreads.load(ordering: .relaxed), readAheadPolicy.allowsReadingAhead() else {
                return true
            }
            let pipeline = RowPipeline(statement: row, reader: reader)
            // Without a reading thread, this one reads on (its reader is the one the pipeline would have taken).
            guard pipeline.start() else { return true }
            let handOver = ContinuousClock.now
            var rowsAfter = 0
            try pipeline.run { snapshot in
                try body(snapshot)
                rowsAfter += 1
            }
            if let timing, rowsAfter >= ReadAheadPolicy.minimumRows {
                readAheadPolicy.record(oneThread: (handOver - timing) / timed, readAhead: (ContinuousClock.now - handOver) / rowsAfter)
            }
            return false
        })
    }

    public func fetchIDs(_ request: StoreFetchRequest) throws -> [ObjectID] {
        let (_, table) = try layout(for: request.entityName)
        let (sql, arguments, _, _) = try selectSQL(request, columns: { _ in "t0.\(RowColumn.id), t0.\(RowColumn.entity)" }, ordered: true, sliced: true)
        return try readStore(singleStatement: true) { db in
            var result: [ObjectID] = []
            try step(db, sql, arguments, cached: true) { row in
                let entityName = table.single?.name ?? sqlite3_column_text(row, 1).map { String(cString: $0) } ?? ""
                result.append(ObjectID(entityName: entityName, rawKey: sqlite3_column_int64(row, 0)))
            }
            ObjectGraphLogging.fetched(result.count, of: request.entityName)
            return result
        }
    }

    public func count(_ request: StoreFetchRequest) throws -> Int {
        let (sql, arguments, _, _) = try selectSQL(request, columns: { _ in "COUNT(*)" }, ordered: false, sliced: false)
        let total = try readStore(singleStatement: true) { db in try Int.fetchOne(db, sql: sql, arguments: StatementArguments(arguments)) ?? 0 }
        let afterOffset = max(0, total - request.offset)
        return request.limit.map { min($0, afterOffset) } ?? afterOffset
    }

    /// SQLite's plan for a fetch, one line per step (`EXPLAIN QUERY PLAN`): whether it searches an index.
    public func queryPlan(for request: StoreFetchRequest) throws -> [String] {
        let (sql, arguments, _, _) = try selectSQL(request, columns: { $0.selectList.joined(separator: ", ") }, ordered: true, sliced: true)
        return try readStore { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(arguments)).map { $0["detail"] as String }
        }
    }

    public func relatedIDs(of id: ObjectID, relationship: ModelRelationship) throws -> [ObjectID] {
        try relatedIDs(of: [id], relationship: relationship)[0]
    }

    public func relatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]] {
        // A temporary ID has no rows, and a transient relationship no links here: the list stays empty.
        let stored = relationship.isTransient ? [] : ids.indices.filter { !ids[$0].isTemporaryID }
        guard let firstStored = stored.first else { return Array(repeating: [], count: ids.count) }
        let (destination, table) = try layout(for: relationship.destinationEntityName)
        let root = sqlQuoted(destination.tableName)
        // One statement needs no read transaction (SQLite reads it from one snapshot): faulting in one object's
        // relationship, which deleting many objects does once per object, takes a statement reader.
        return try readStore(singleStatement: stored.count <= 500) { db in
            var result = [[ObjectID]](repeating: [], count: ids.count)
            for start in stride(from: 0, to: stored.count, by: 500) {
                // Rows come in owner order, so they meet the owners, sorted, in one pass, and each run of rows goes
                // straight to its owner's place: no table by key (one of 200,000 owners cost more than the read).
                let sorted = stored[start..<min(start + 500, stored.count)].sorted { ids[$0].rawKey < ids[$1].rawKey }
                var nextOwner = 0
                let keys = KeyChunk(sorted.map { ids[$0].rawKey })
                let owned = keys.condition(on:)
                let sql: String
                switch relationship.storage {
                case .foreignKey(let column):
                    let source = try model.entity(named: ids[firstStored].entityName)
                    sql = "SELECT s.\(RowColumn.id), d.\(RowColumn.id), d.\(RowColumn.entity) FROM \(sqlQuoted(source.tableName)) AS s JOIN \(root) AS d ON d.\(RowColumn.id) = s.\(sqlQuoted(column)) WHERE \(owned("s.\(RowColumn.id)")) ORDER BY s.\(RowColumn.id)"
                case .inverseForeignKey(let column, let orderColumn):
                    sql = "SELECT \(sqlQuoted(column)), \(RowColumn.id), \(RowColumn.entity) FROM \(root) WHERE \(owned(sqlQuoted(column))) ORDER BY \(sqlQuoted(column)), \(orderColumn.map(sqlQuoted) ?? RowColumn.id), \(RowColumn.id)"
                case .joinTable(let table, let isSourceSide):
                    let (mine, theirs) = isSourceSide ? ("source", "target") : ("target", "source")
                    // In owner order alone, as the join table's indexes hold it: sorting by destination too cost
                    // SQLite a sort per statement (two fifths of reading 400,000 links); an unordered owner's run
                    // of rows is sorted below instead.
                    let order = relationship.isOrdered ? ", j.\(isSourceSide ? "position" : "inverse_position"), d.\(RowColumn.id)" : ""
                    sql = "SELECT j.\(mine), d.\(RowColumn.id), d.\(RowColumn.entity) FROM \(sqlQuoted(table)) AS j JOIN \(root) AS d ON d.\(RowColumn.id) = j.\(theirs) WHERE \(owned("j.\(mine)")) ORDER BY j.\(mine)\(order)"
                case .transient:
                    return result
                }
                let sortsRuns = !relationship.isOrdered
                // Each owner's run of rows is gathered, then stored once, and its destinations' IDs are read as
                // words (a prefetch of a to-many for 200,000 owners reads 400,000 rows here).
                var run: (owner: Int64, ids: [ObjectID])?
                func storeRun() {
                    // Taken out of `run`, so the sort below sorts the only reference in place.
                    guard case (let owner, var members)? = run.take() else { return }
                    // Already in key order from a join table's source side: then the sort only checks.
                    if sortsRuns && members.count > 1 { members.sort { $0.rawKey < $1.rawKey } }
                    // An owner asked for twice gets its list in both places.
                    while nextOwner < sorted.count, ids[sorted[nextOwner]].rawKey == owner {
                        result[sorted[nextOwner]] = members
                        nextOwner += 1
                    }
                }
                // A relationship's statement for one owner, a range, or a full chunk has the same text every time:
                // kept prepared, since preparing it cost more than running it.
                try step(db, sql, keys.arguments, cached: keys.isRange || sorted.count == 1 || sorted.count == 500) { row in
                    let key = sqlite3_column_int64(row, 0)
                    let entityName = table.single?.name ?? sqlite3_column_text(row, 2).map { String(cString: $0) } ?? ""
                    let id = ObjectID(entityName: entityName, rawKey: sqlite3_column_int64(row, 1))
                    if run?.owner == key {
                        run!.ids.append(id)
                        return
                    }
                    storeRun()
                    while nextOwner < sorted.count, ids[sorted[nextOwner]].rawKey < key { nextOwner += 1 }
                    guard nextOwner < sorted.count, ids[sorted[nextOwner]].rawKey == key else { return }
                    run = (key, [id])
                }
                storeRun()
            }
            return result
        }
    }

    // MARK: Dictionaries

    public func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: AttributeValue]] {
        let entity = try model.entity(named: request.fetch.entityName)
        let valuePaths = request.properties.filter { !$0.keyPath.isEmpty }.map(\.keyPath)
        let groupPaths = request.groupBy.map { $0.split(separator: ".").map(String.init) }
        var innerRequest = request.fetch
        innerRequest.sortKeys = []
        let computed = request.properties.compactMap(\.expression)
        let (baseSQL, baseArguments, terms, expressionTerms) = try selectSQL(
            innerRequest, columns: { _ in "__COLUMNS__" }, ordered: false, sliced: false, extraTerms: valuePaths + groupPaths, expressions: computed)
        let columns = DictionaryColumns(
            request, entity: entity, model: model, terms: terms, expressions: expressionTerms,
            sum: { term, _ in "SUM(\(term))" }, average: { "AVG(\($0))" })
        let (items, groupTerms, resultTypes, references) = (columns.items, columns.groupTerms, columns.resultTypes, columns.references)
        let external = externalData
        let kinds: [(name: String, decode: (DatabaseValue) throws -> AttributeValue)] = zip(request.properties, columns.types).map { property, type in
            (property.name, { value in
                // Text where a value is data: the name of the file keeping it (see ``ExternalBinaryData``).
                if let type, type.isData, case .string(let name) = value.storage { return .data(try external.read(name)) }
                return type.map { SQLiteValueCoding.decode(value, as: $0) } ?? SQLiteValueCoding.decodeUntyped(value)
            })
        }
        var sql = baseSQL.replacingOccurrences(of: "__COLUMNS__", with: (request.distinct ? "DISTINCT " : "") + items.joined(separator: ", "))
        if !groupTerms.isEmpty { sql += " GROUP BY " + groupTerms.joined(separator: ", ") }
        var arguments = baseArguments
        var outer: [String] = []
        if let having = request.having {
            let schema = ResultSchema(properties: request.properties, types: resultTypes)
            do throws(FormatPredicateError) {
                let compiled = try SQLCompiler(schema: schema).compile(having, entity: "result", alias: "t0", firstArgumentIndex: arguments.count + 1)
                arguments += compiled.arguments
                outer.append(compiled.condition)
            } catch {
                throw ObjectGraphError.invalidPredicate(entity: entity.name, error: error)
            }
        }
        sql = "SELECT * FROM (\(sql)) AS t0 WHERE \(outer.isEmpty ? "1" : outer.joined(separator: " AND "))"
        let names = Set(request.properties.map(\.name))
        let order = request.fetch.sortKeys.filter { names.contains($0.keyPathText) }
            .map { key in
                let column = "t0.\(sqlQuoted(key.keyPathText))"
                let value = key.foldOptions.isEmpty ? column : "og_fold(\(column), \(key.foldOptions.rawValue))"
                return "\(value) \(key.ascending ? "ASC" : "DESC")"
            }
        if let missing = request.fetch.sortKeys.first(where: { !names.contains($0.keyPathText) }) {
            throw ObjectGraphError.invalidFetch(entity: entity.name, reason: "dictionary results sort by their own keys; '\(missing.keyPathText)' is not one")
        }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        if request.fetch.limit != nil || request.fetch.offset > 0 {
            sql += " LIMIT ? OFFSET ?"
            arguments += [(request.fetch.limit ?? -1).databaseValue, request.fetch.offset.databaseValue]
        }
        return try readStore { db in
            var result: [[String: AttributeValue]] = []
            let cursor = try rows(db, sql, arguments)
            while let row = try cursor.next() {
                var dictionary: [String: AttributeValue] = [:]
                for (index, kind) in kinds.enumerated() { dictionary[kind.name] = try kind.decode(row[index]) }
                for reference in references {
                    let name = kinds[reference.property].name
                    guard case .int(let key) = dictionary[name] else { continue }
                    let entityName = reference.entityColumn.flatMap { String.fromDatabaseValue(row[$0]) } ?? reference.destination
                    dictionary[name] = .objectID(ObjectID(entityName: entityName, rawKey: key))
                }
                result.append(dictionary)
            }
            return result
        }
    }
}

/// A fetch's compiled SQL, unsliced and with its slice's placeholders (kept ready: a small query that appended them
/// every time spent about 4% of its time copying the SQL and arguments), kept in the store's ``SlotTable`` with the
/// key it was compiled for.
final class FetchSQL: Sendable {
    let key: FetchSQLKey
    let sql: String
    let slicedSQL: String
    let arguments: [DatabaseValue]

    init(key: FetchSQLKey, sql: String, slicedSQL: String, arguments: [DatabaseValue]) {
        (self.key, self.sql, self.slicedSQL, self.arguments) = (key, sql, slicedSQL, arguments)
    }
}

/// A compiled fetch kept for every fetch of its shape (see ``ConstantSlots``): where its constants went in its
/// arguments, or no slots when its SQL depends on their values.
final class FetchSQLTemplate: Sendable {
    /// The fetch with every slottable constant replaced by its kind's representative.
    let key: FetchSQLKey
    let compiled: FetchSQL
    let slots: ConstantSlots?
    /// The compilation last filled in: a screen repeats its query with the same constants, and handing it the
    /// same compilation again lets its reader's kept statement skip binding (see ``StatementMemo``).
    private let lastFilled = Protected<FetchSQL?>(nil)

    init(key: FetchSQLKey, compiled: FetchSQL, slots: ConstantSlots?) {
        (self.key, self.compiled, self.slots) = (key, compiled, slots)
    }

    /// The compilation with `constants` (bound values of `key`'s constants, in order) in `slots`, this template's.
    func filled(with constants: [DatabaseValue], slots: ConstantSlots, key: FetchSQLKey) -> FetchSQL {
        lastFilled.withLock { last in
            if let last, slots.slots.allSatisfy({ DatabaseValue.isIdentical(last.arguments[$0.target], constants[$0.source]) }) {
                return last
            }
            let filled = FetchSQL(
                key: key, sql: compiled.sql, slicedSQL: compiled.slicedSQL, arguments: slots.filling(compiled.arguments, from: constants))
            last = filled
            return filled
        }
    }
}

extension DatabaseValue {
    /// Whether the two values are the same bound value: strings by their bytes, reals by their bits.
    static func isIdentical(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
        switch (a.storage, b.storage) {
        case (.string(let x), .string(let y)): x.hasSameUTF8(as: y)
        case (.double(let x), .double(let y)): x.bitPattern == y.bitPattern
        default: a == b
        }
    }
}

/// A fetch's `LIMIT ? OFFSET ?`, bound after its other arguments (a limit of -1 is none).
struct FetchSlice: Equatable {
    let limit: Int64
    let offset: Int64
}

/// What decides the SQL of an object fetch (its slice is bound, not written).
struct FetchSQLKey: Sendable {
    let entityName: String
    let includesSubentities: Bool
    let predicate: FormatPredicate?
    let sortKeys: [SortKey]

    /// Whether the two keys decide the same SQL and arguments: string constants compare by their bytes, since the
    /// kept arguments are bound as they are ("é" precomposed must not stand for "é" decomposed, which Swift's `==`
    /// calls equal).
    func isIdentical(to other: FetchSQLKey) -> Bool {
        guard entityName == other.entityName, includesSubentities == other.includesSubentities, sortKeys == other.sortKeys else { return false }
        switch (predicate, other.predicate) {
        case (nil, nil): return true
        case (let a?, let b?): return a.isIdentical(to: b)
        default: return false
        }
    }

    /// Whether `other` differs from this key, a shape's (``FormatPredicate/shape``), only in slottable constants.
    func isShape(of other: FetchSQLKey) -> Bool {
        guard entityName == other.entityName, includesSubentities == other.includesSubentities, sortKeys == other.sortKeys else { return false }
        switch (predicate, other.predicate) {
        case (nil, nil): return true
        case (let shape?, let predicate?): return predicate.hasShape(shape)
        default: return false
        }
    }

    /// The key's slot in the store's ``SlotTable`` of compilations; with `asShape`, its shape's slot in the table of
    /// templates (the slot of the key with its predicate's ``FormatPredicate/shape``).
    func hash(asShape: Bool = false) -> FNV1a {
        var hash = FNV1a()
        hash.combine(bytesOf: entityName)
        hash.combine(byte: includesSubentities ? 1 : 0)
        if let predicate { hash.combine(predicate, asShape: asShape) }
        for key in sortKeys {
            for name in key.keyPath { hash.combine(bytesOf: name) }
            hash.combine(byte: key.ascending ? 1 : 0)
        }
        return hash
    }
}

/// The columns of a grouped result, for compiling a having condition over them.
package struct ResultSchema: SQLSchema {
    let properties: [FetchProperty]
    let types: [String: AttributeType?]

    package init(properties: [FetchProperty], types: [String: AttributeType?]) {
        self.properties = properties
        self.types = types
    }

    package func table(forEntity entity: String) throws(FormatPredicateError) -> SQLTable { SQLTable(name: "result") }

    package func property(_ key: String, ofEntity entity: String) throws(FormatPredicateError) -> SQLProperty {
        guard let type = types[key] else {
            throw .evaluation("the result has no key '\(key)'; having can use \(properties.map(\.name).joined(separator: ", "))")
        }
        return .attribute(column: key, kind: type.map(ModelSQLSchema.valueKind) ?? .real)
    }
}

extension Model {
    /// Whether a key path from `entity` crosses a to-many relationship.
    func crossesToMany(_ keyPath: [String], from entity: ModelEntity) -> Bool {
        var current = entity
        for key in keyPath {
            guard let relationship = current.relationship(named: key) else { return false }
            if relationship.isToMany { return true }
            guard let next = entityIfPresent(relationship.destinationEntityName) else { return false }
            current = next
        }
        return false
    }

    /// The destination of the to-one relationship a key path ends at, walking to-one relationships from `entity`.
    package func toOneDestination(at keyPath: [String], from entity: ModelEntity) -> ModelEntity? {
        var current = entity
        for key in keyPath {
            guard let relationship = current.relationship(named: key), !relationship.isToMany,
                  let next = entityIfPresent(relationship.destinationEntityName) else { return nil }
            current = next
        }
        return keyPath.isEmpty ? nil : current
    }

    /// The attribute a key path ends at, walking to-one relationships from `entity`.
    package func attribute(at keyPath: [String], from entity: ModelEntity) -> AttributeDescription? {
        var current = entity
        for (index, key) in keyPath.enumerated() {
            if index == keyPath.count - 1 { return current.attribute(named: key) }
            guard let relationship = current.relationship(named: key), !relationship.isToMany,
                  let next = entityIfPresent(relationship.destinationEntityName) else { return nil }
            current = next
        }
        return nil
    }
}

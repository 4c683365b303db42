import Foundation
import GRDB

/// A store in one SQLite file, through GRDB's `DatabasePool` (WAL: one writer, concurrent snapshot readers).
///
/// The schema is readable without this library: a table per root entity (see ``TableLayout``), a column per
/// attribute, `<relationship>_id` foreign keys for to-one relationships, join tables named `<Entity>_<relationship>`
/// for many-to-many ones, an `_version` column per row for optimistic locking, and `objectgraph_metadata` holding
/// the model, its hash and the store's identifier, so any store describes itself.
public final class SQLiteStore: PersistentStore {
    public let identifier: String
    public let location: String
    let model: Model
    let pool: DatabasePool
    let tables: [String: TableLayout]

    static let metadataTable = "objectgraph_metadata"
    static let sequenceTable = "objectgraph_sequence"

    /// Opens the store at `url`, creating it (and its schema) when the file does not exist or is empty.
    public init(url: URL, model: Model) throws {
        let path = url.path
        location = path
        self.model = model
        let folder = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "the folder \(folder) does not exist")
        }
        var tables: [String: TableLayout] = [:]
        for entity in model.entities where entity.rootName == entity.name {
            tables[entity.name] = TableLayout(root: entity, model: model)
        }
        self.tables = tables
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.label = "ObjectGraph.SQLiteStore"
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            identifier = try pool.write { db in try Self.prepareSchema(db, model: model, tables: tables, path: path) }
        } catch let error as ObjectGraphError {
            throw error
        } catch let error as DatabaseError {
            let reason: String
            switch error.resultCode {
            case .SQLITE_NOTADB, .SQLITE_CORRUPT: reason = "the file is not an SQLite database, or it is damaged (\(error.message ?? "\(error)"))"
            case .SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_IOERR:
                reason = "the location cannot be opened for writing (\(error.message ?? "\(error)"))"
            default: reason = error.message ?? "\(error)"
            }
            throw ObjectGraphError.storeUnavailable(path: path, reason: reason)
        } catch {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "\(error)")
        }
    }

    private static func prepareSchema(_ db: Database, model: Model, tables: [String: TableLayout], path: String) throws -> String {
        if try db.tableExists(metadataTable) {
            let stored = try String.fetchOne(db, sql: "SELECT value FROM \(metadataTable) WHERE key = 'model_hash'") ?? "none"
            guard stored == model.versionHash else {
                throw ObjectGraphError.modelMismatch(path: path, storeHash: stored, modelHash: model.versionHash)
            }
            guard let identifier = try String.fetchOne(db, sql: "SELECT value FROM \(metadataTable) WHERE key = 'store_identifier'") else {
                throw ObjectGraphError.storeUnavailable(path: path, reason: "its metadata table has no store identifier")
            }
            return identifier
        }
        let existing = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        guard existing.isEmpty else {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "it is an SQLite database but not an ObjectGraph store (it has tables \(existing.joined(separator: ", ")) and no \(metadataTable))")
        }
        let identifier = UUID().uuidString
        try db.execute(sql: "CREATE TABLE \(metadataTable) (key TEXT PRIMARY KEY, value NOT NULL)")
        try db.execute(sql: "CREATE TABLE \(sequenceTable) (entity TEXT PRIMARY KEY, max_key INTEGER NOT NULL)")
        let metadata: [(String, DatabaseValueConvertible)] = [
            ("model_hash", model.versionHash), ("store_identifier", identifier), ("format_version", 1),
            ("model", String(decoding: model.canonicalJSON(), as: UTF8.self)),
        ]
        for (key, value) in metadata {
            try db.execute(sql: "INSERT INTO \(metadataTable) (key, value) VALUES (?, ?)", arguments: [key, value])
        }
        for table in tables.values.sorted(by: { $0.name < $1.name }) {
            for statement in table.createStatements(model: model) { try db.execute(sql: statement) }
            try db.execute(sql: "INSERT INTO \(sequenceTable) (entity, max_key) VALUES (?, 0)", arguments: [table.name])
        }
        for table in joinTables() {
            try db.execute(sql: """
                CREATE TABLE \(quoted(table.name)) (
                  source INTEGER NOT NULL REFERENCES \(quoted(table.sourceRoot))(id) ON DELETE CASCADE,
                  target INTEGER NOT NULL REFERENCES \(quoted(table.targetRoot))(id) ON DELETE CASCADE,
                  position INTEGER,
                  PRIMARY KEY (source, target))
                """)
            try db.execute(sql: "CREATE INDEX \(quoted(table.name + "_target")) ON \(quoted(table.name))(target)")
        }
        return identifier

        func joinTables() -> [(name: String, sourceRoot: String, targetRoot: String)] {
            var result: [(String, String, String)] = []
            for entity in model.entities {
                for relationship in entity.description.relationships {
                    guard case .joinTable(let name, true) = entity.relationship(named: relationship.name)?.storage,
                          let destination = model.entityIfPresent(relationship.destinationEntityName) else { continue }
                    result.append((name, entity.rootName, destination.rootName))
                }
            }
            return result
        }
    }

    // MARK: Reading

    func layout(for entityName: String) throws -> (ModelEntity, TableLayout) {
        let entity = try model.entity(named: entityName)
        guard let table = tables[entity.rootName] else { throw ObjectGraphError.unknownEntity(entityName) }
        return (entity, table)
    }

    func readSnapshot(_ row: Row, table: TableLayout) throws -> Snapshot {
        let entityName: String = row[1]
        guard let columns = table.entities[entityName] else { throw ObjectGraphError.unknownEntity(entityName) }
        let id = ObjectID(entityName: entityName, rawKey: row[0])
        var values: [AttributeValue] = []
        values.reserveCapacity(columns.attributes.count)
        for (position, type) in zip(columns.attributes, columns.attributeTypes) {
            values.append(SQLiteValueCoding.decode(row[position] as DatabaseValue, as: type))
        }
        var toOne: [ObjectID?] = []
        toOne.reserveCapacity(columns.toOne.count)
        for slot in columns.toOne.indices {
            if let key: Int64 = row[columns.toOne[slot]] {
                let destination = columns.toOneEntity[slot].flatMap { row[$0] as String? } ?? columns.toOneDestination[slot]
                toOne.append(ObjectID(entityName: destination, rawKey: key))
            } else {
                toOne.append(nil)
            }
        }
        return Snapshot(objectID: id, version: row[2], values: values, toOne: toOne)
    }

    public func snapshots(for ids: [ObjectID]) throws -> [Snapshot] {
        let groups = Dictionary(grouping: ids.filter { !$0.isTemporaryID }) { id in
            (try? model.entity(named: id.entityName).rootName) ?? id.entityName
        }
        return try readStore { db in
            var result: [Snapshot] = []
            for (root, group) in groups {
                guard let table = tables[root] else { throw ObjectGraphError.unknownEntity(root) }
                let requested = Dictionary(group.map { ($0.rawKey, $0.entityName) }) { first, _ in first }
                for start in stride(from: 0, to: group.count, by: 500) {
                    let chunk = group[start..<min(start + 500, group.count)]
                    let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                    let sql = "SELECT \(table.selectList.joined(separator: ", ")) FROM \(quoted(root)) WHERE id IN (\(marks))"
                    let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(chunk.map(\.rawKey)))
                    while let row = try rows.next() {
                        let snapshot = try readSnapshot(row, table: table)
                        // The key may hold a row of another entity of the tree than the one asked for.
                        if let asked = requested[snapshot.objectID.rawKey].flatMap(model.entityIfPresent),
                           model.entityIfPresent(snapshot.objectID.entityName)?.isKind(of: asked) == true {
                            result.append(snapshot)
                        }
                    }
                }
            }
            return result
        }
    }

    func selectSQL(_ request: StoreFetchRequest, columns: String) throws -> (String, StatementArguments) {
        let (entity, table) = try layout(for: request.entityName)
        let names = request.includesSubentities ? entity.selfAndDescendantNames : [entity.name]
        var sql = "SELECT \(columns) FROM \(quoted(table.name))"
        var arguments = StatementArguments()
        if names.count < (model.entityIfPresent(table.name)?.selfAndDescendantNames.count ?? 0) || entity.name != table.name {
            sql += " WHERE _entity IN (\(Array(repeating: "?", count: names.count).joined(separator: ",")))"
            arguments += StatementArguments(names)
        }
        return (sql, arguments)
    }

    public func fetch(_ request: StoreFetchRequest) throws -> [Snapshot] {
        let (entity, table) = try layout(for: request.entityName)
        var (sql, arguments) = try selectSQL(request, columns: table.selectList.joined(separator: ", "))
        var order: [String] = []
        for key in request.sortKeys {
            guard entity.attributeIndex[key.attribute] != nil else {
                throw ObjectGraphError.unknownKey(entity: entity.name, key: key.attribute)
            }
            order.append("\(quoted(key.attribute)) \(key.ascending ? "ASC" : "DESC")")
        }
        order.append("id")
        sql += " ORDER BY " + order.joined(separator: ", ")
        if request.limit != nil || request.offset > 0 {
            sql += " LIMIT ? OFFSET ?"
            arguments += [request.limit ?? -1, request.offset]
        }
        return try readStore { db in
            var result: [Snapshot] = []
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() { result.append(try readSnapshot(row, table: table)) }
            return result
        }
    }

    public func count(_ request: StoreFetchRequest) throws -> Int {
        let (sql, arguments) = try selectSQL(request, columns: "COUNT(*)")
        return try readStore { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0 }
    }

    public func relatedIDs(of id: ObjectID, relationship: ModelRelationship) throws -> [ObjectID] {
        let destination = try model.entity(named: relationship.destinationEntityName)
        let root = quoted(destination.rootName)
        let sql: String
        switch relationship.storage {
        case .foreignKey(let column):
            let source = try model.entity(named: id.entityName)
            sql = "SELECT d.id, d._entity FROM \(quoted(source.rootName)) AS s JOIN \(root) AS d ON d.id = s.\(quoted(column)) WHERE s.id = ?"
        case .inverseForeignKey(let column, let orderColumn):
            sql = "SELECT id, _entity FROM \(root) WHERE \(quoted(column)) = ? ORDER BY \(orderColumn.map(quoted) ?? "id"), id"
        case .joinTable(let table, let isSourceSide):
            let (mine, theirs) = isSourceSide ? ("source", "target") : ("target", "source")
            sql = "SELECT d.id, d._entity FROM \(quoted(table)) AS j JOIN \(root) AS d ON d.id = j.\(theirs) WHERE j.\(mine) = ? ORDER BY j.position, d.id"
        }
        return try readStore { db in
            try Row.fetchAll(db, sql: sql, arguments: [id.rawKey]).map { ObjectID(entityName: $0[1], rawKey: $0[0]) }
        }
    }

    private func readStore<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try pool.read(body)
        } catch let error as DatabaseError {
            throw ObjectGraphError.storeUnavailable(path: location, reason: error.message ?? "\(error)")
        }
    }

    // MARK: Writing

    public func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] {
        try writeStore { db in try Self.allocate(db, root: rootEntity, count: count) }
    }

    private static func allocate(_ db: Database, root: String, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        try db.execute(sql: "UPDATE \(sequenceTable) SET max_key = max_key + ? WHERE entity = ?", arguments: [count, root])
        let last = try Int64.fetchOne(db, sql: "SELECT max_key FROM \(sequenceTable) WHERE entity = ?", arguments: [root]) ?? Int64(count)
        return Array((last - Int64(count) + 1)...last)
    }

    private func writeStore<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try pool.write(body)
        } catch let error as ObjectGraphError {
            throw error
        } catch let error as DatabaseError {
            throw ObjectGraphError.storeWriteFailed(path: location, reason: error.message ?? "\(error)")
        }
    }

    public func save(_ changes: ChangeSet) throws -> SaveResult {
        try writeStore { db in
            var transaction = SQLiteSaveTransaction(store: self, db: db)
            return try transaction.run(changes)
        }
    }
}

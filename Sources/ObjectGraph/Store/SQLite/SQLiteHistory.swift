import Foundation
import GRDB

/// Persistent history in an SQLite store: `objectgraph.history` holds a row per transaction (its number, time,
/// author, context name and the coordinator that wrote it), `objectgraph.history_changes` its changes as runs of
/// consecutive keys of one entity changed the same way (so an import of a million rows records one row, not a
/// million), each with its properties (a JSON array) or its tombstone (a JSON object).
extension SQLiteStore {
    static let historyTable = "objectgraph.history"
    static let historyChangesTable = "objectgraph.history_changes"
    /// The metadata key holding the number of the last transaction deleted: a token before it has lost changes.
    static let historyDeletedThroughKey = "history_deleted_through"

    static func createHistoryTables(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(sqlQuoted(historyTable)) (
              number INTEGER PRIMARY KEY AUTOINCREMENT, timestamp REAL NOT NULL, author TEXT, context TEXT, origin TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS \(sqlQuoted(historyChangesTable)) (
              "transaction" INTEGER NOT NULL REFERENCES \(sqlQuoted(historyTable))(number) ON DELETE CASCADE,
              entity TEXT NOT NULL, first_key INTEGER NOT NULL, key_count INTEGER NOT NULL,
              kind TEXT NOT NULL CHECK (kind IN ('insert', 'update', 'delete')), properties TEXT, tombstone TEXT);
            CREATE INDEX IF NOT EXISTS \(sqlQuoted(historyChangesTable + "(transaction)")) ON \(sqlQuoted(historyChangesTable))("transaction");
            """)
    }

    /// Whether `db` holds the history tables, read from the schema itself (GRDB's schema cache does not see another
    /// connection create them).
    static func historyTablesExist(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)", arguments: [historyTable]) ?? false
    }

    /// Whether the file records history: known, or turned on by another coordinator since this store opened.
    func recordsHistoryNow() throws -> Bool {
        if recordsHistory { return true }
        guard try readStore(singleStatement: true, Self.historyTablesExist) else { return false }
        historyTablesExist.value = true
        return true
    }

    /// Writes `record` as a new transaction in `db`'s write transaction (nothing for a record without changes).
    func writeHistory(_ record: HistoryRecord, in db: Database) throws {
        guard recordsHistory, !record.isEmpty else { return }
        try db.cachedStatement(sql: "INSERT INTO \(sqlQuoted(Self.historyTable)) (timestamp, author, context, origin) VALUES (?, ?, ?, ?)")
            .execute(arguments: [Date().timeIntervalSince1970, record.source.author, record.source.contextName, historyOrigin])
        let number = db.lastInsertedRowID
        let insert = try db.cachedStatement(sql: """
            INSERT INTO \(sqlQuoted(Self.historyChangesTable)) ("transaction", entity, first_key, key_count, kind, properties, tombstone)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for run in record.runs {
            let properties = run.properties.isEmpty ? nil : String(decoding: try encoder.encode(run.properties), as: UTF8.self)
            let tombstone = run.tombstone.isEmpty ? nil : String(decoding: try encoder.encode(run.tombstone), as: UTF8.self)
            try insert.execute(arguments: [number, run.entityName, run.firstKey, run.count, run.kind.rawValue, properties, tombstone])
        }
    }

    /// The values of `attributes` (positions in `entity`) that row `id` holds, by attribute name: what history keeps
    /// of a deleted object.
    func tombstone(of id: ObjectID, entity: ModelEntity, attributes: [Int], in db: Database) throws -> [String: AttributeValue] {
        let columns = attributes.map { "t0." + sqlQuoted(entity.attributeColumns[$0]) }.joined(separator: ", ")
        guard let row = try Row.fetchOne(
            db, sql: "SELECT \(columns) FROM \(sqlQuoted(entity.tableName)) AS t0 WHERE t0.\(RowColumn.id) = ?", arguments: [id.rawKey]) else { return [:] }
        return Self.tombstone(row, from: 0, entity: entity, attributes: attributes)
    }

    /// The values of `attributes` (positions in `entity`) that `row` holds in its columns from `offset` on, by name.
    static func tombstone(_ row: Row, from offset: Int, entity: ModelEntity, attributes: [Int]) -> [String: AttributeValue] {
        var values: [String: AttributeValue] = [:]
        for (column, index) in attributes.enumerated() {
            values[entity.attributes[index].name] = SQLiteValueCoding.decode(row[offset + column], as: entity.attributes[index].type)
        }
        return values
    }

    public func history(after token: PersistentHistoryToken?) throws -> [PersistentHistoryTransaction] {
        try history(after: token, excludingOrigin: nil).transactions
    }

    /// The transactions `request` selects: its token, moment, authors, contexts and entities in SQL, the rest as
    /// the rows are read.
    public func history(_ request: HistoryRequest) throws -> [PersistentHistoryTransaction] {
        request.filter(try history(after: request.after, excludingOrigin: nil, selecting: request).transactions)
    }

    /// Deletes the transactions through the newest one recorded before `date`.
    public func deleteHistory(before date: Date) throws -> Int {
        guard try recordsHistoryNow() else { throw ObjectGraphError.historyNotRecorded(path: location) }
        return try writeStore { db in
            guard let through = try Int64.fetchOne(
                db, sql: "SELECT max(number) FROM \(sqlQuoted(Self.historyTable)) WHERE timestamp < ?", arguments: [date.timeIntervalSince1970])
            else { return 0 }
            return try Self.deleteHistory(through: through, in: db)
        }
    }

    /// The SQL condition on the history table (`number`, `timestamp`, `author`, `context`) that selects what
    /// `request` asks for after transaction `after`, with its arguments.
    static func transactionCondition(after: Int64, _ request: HistoryRequest?) -> (sql: String, arguments: [DatabaseValueConvertible?]) {
        var sql = "number > ?"
        var arguments: [DatabaseValueConvertible?] = [after]
        guard let request else { return (sql, arguments) }
        if let date = request.afterDate {
            sql += " AND timestamp > ?"
            arguments.append(date.timeIntervalSince1970)
        }
        if let authors = request.authors {
            sql += " AND author IN (\(authors.map { _ in "?" }.joined(separator: ", ")))"
            arguments += authors.sorted() as [DatabaseValueConvertible?]
        }
        if !request.excludedAuthors.isEmpty {
            sql += " AND (author IS NULL OR author NOT IN (\(request.excludedAuthors.map { _ in "?" }.joined(separator: ", "))))"
            arguments += request.excludedAuthors.sorted() as [DatabaseValueConvertible?]
        }
        if let contexts = request.contextNames {
            sql += " AND context IN (\(contexts.map { _ in "?" }.joined(separator: ", ")))"
            arguments += contexts.sorted() as [DatabaseValueConvertible?]
        }
        return (sql, arguments)
    }

    /// The transactions recorded after `token` (all that are kept, for nil), oldest first; with `excludingOrigin`,
    /// not those that coordinator wrote; with `selecting`, those its transaction and entity filters select. `last`
    /// is the newest transaction's number of all read (excluded ones too), in the same snapshot: where the next read
    /// starts.
    func history(
        after token: PersistentHistoryToken?, excludingOrigin: String?, selecting request: HistoryRequest? = nil
    ) throws -> (transactions: [PersistentHistoryTransaction], last: Int64) {
        guard try recordsHistoryNow() else { throw ObjectGraphError.historyNotRecorded(path: location) }
        if let token {
            guard token.storeIdentifier == identifier else {
                throw ObjectGraphError.historyTokenExpired(
                    path: location, token: token.description, reason: "it is a token of store \(token.storeIdentifier), and this store is \(identifier)")
            }
        }
        let after = token?.transactionNumber ?? 0
        return try readStore { db in
            if let token { try checkNotAhead(token, in: db) }
            if token != nil, let deleted = try Int64.fetchOne(
                db, sql: "SELECT value FROM \(sqlQuoted(Self.metadataTable)) WHERE key = ?", arguments: [Self.historyDeletedThroughKey]),
               after < deleted {
                throw ObjectGraphError.historyTokenExpired(
                    path: location, token: token!.description,
                    reason: "history through transaction \(deleted) was deleted, so the changes after the token are no longer all kept; refetch instead")
            }
            var runs: [Int64: [HistoryRun]] = [:]
            let decoder = JSONDecoder()
            let selected = Self.transactionCondition(after: after, request)
            var changeSQL = """
                SELECT "transaction", entity, first_key, key_count, kind, properties, tombstone FROM \(sqlQuoted(Self.historyChangesTable))
                WHERE "transaction" IN (SELECT number FROM \(sqlQuoted(Self.historyTable)) WHERE \(selected.sql) AND origin IS NOT ?)
                """
            var changeArguments = selected.arguments + [excludingOrigin]
            if let entities = request?.entityNames {
                changeSQL += " AND entity IN (\(entities.map { _ in "?" }.joined(separator: ", ")))"
                changeArguments += entities.sorted() as [DatabaseValueConvertible?]
            }
            for row in try Row.fetchAll(
                db, sql: changeSQL + " ORDER BY \"transaction\", rowid", arguments: StatementArguments(changeArguments.map { $0?.databaseValue ?? .null })) {
                let properties: String? = row[5]
                let tombstone: String? = row[6]
                guard let kind = PersistentHistoryChange.ChangeType(rawValue: row[4]) else { continue }
                runs[row[0], default: []].append(HistoryRun(
                    entityName: row[1], firstKey: row[2], count: row[3], kind: kind,
                    properties: try properties.map { try decoder.decode([String].self, from: Data($0.utf8)) } ?? [],
                    tombstone: try tombstone.map { try decoder.decode([String: AttributeValue].self, from: Data($0.utf8)) } ?? [:]))
            }
            var transactions: [PersistentHistoryTransaction] = []
            var last = after
            for row in try Row.fetchAll(
                db, sql: "SELECT number, timestamp, author, context, origin FROM \(sqlQuoted(Self.historyTable)) WHERE \(selected.sql) ORDER BY number",
                arguments: StatementArguments(selected.arguments.map { $0?.databaseValue ?? .null })) {
                let number: Int64 = row[0]
                let origin: String = row[4]
                last = number
                if origin == excludingOrigin { continue }
                transactions.append(PersistentHistoryTransaction(
                    token: PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: number),
                    timestamp: Date(timeIntervalSince1970: row[1]), author: row[2], contextName: row[3],
                    changes: (runs[number] ?? []).flatMap { $0.changes() }, origin: origin))
            }
            return (transactions, last)
        }
    }

    /// The token of the last transaction recorded (number 0 when there is none).
    public func lastHistoryToken() throws -> PersistentHistoryToken {
        guard try recordsHistoryNow() else { throw ObjectGraphError.historyNotRecorded(path: location) }
        let number = try readStore { db in
            try Int64.fetchOne(db, sql: "SELECT max(number) FROM \(sqlQuoted(Self.historyTable))") ?? 0
        }
        return PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: number)
    }

    /// Throws ``ObjectGraphError/historyTokenAhead(path:token:lastTransaction:)`` when `token` names a transaction
    /// after the last this store recorded (kept or deleted).
    private func checkNotAhead(_ token: PersistentHistoryToken, in db: Database) throws {
        let last = try Int64.fetchOne(db, sql: """
            SELECT max(coalesce((SELECT max(number) FROM \(sqlQuoted(Self.historyTable))), 0),
                       coalesce((SELECT CAST(value AS INTEGER) FROM \(sqlQuoted(Self.metadataTable)) WHERE key = ?), 0))
            """, arguments: [Self.historyDeletedThroughKey]) ?? 0
        guard token.transactionNumber <= last else {
            throw ObjectGraphError.historyTokenAhead(path: location, token: token.description, lastTransaction: last)
        }
    }

    /// Deletes the transactions before `token`'s; returns how many went. A reader whose token is older than the
    /// last transaction deleted is told its token expired (``ObjectGraphError/historyTokenExpired(path:token:reason:)``).
    public func deleteHistory(before token: PersistentHistoryToken) throws -> Int {
        guard try recordsHistoryNow() else { throw ObjectGraphError.historyNotRecorded(path: location) }
        guard token.storeIdentifier == identifier else {
            throw ObjectGraphError.historyTokenExpired(
                path: location, token: token.description, reason: "it is a token of store \(token.storeIdentifier), and this store is \(identifier)")
        }
        return try writeStore { db in
            try checkNotAhead(token, in: db)
            return try Self.deleteHistory(through: token.transactionNumber - 1, in: db)
        }
    }

    /// Deletes the transactions numbered up to `through` and records that history through it is gone (a token
    /// before it has lost changes); returns how many went.
    private static func deleteHistory(through: Int64, in db: Database) throws -> Int {
        try db.execute(sql: "DELETE FROM \(sqlQuoted(historyChangesTable)) WHERE \"transaction\" <= ?", arguments: [through])
        try db.execute(sql: "DELETE FROM \(sqlQuoted(historyTable)) WHERE number <= ?", arguments: [through])
        let removed = db.changesCount
        try db.execute(sql: """
            INSERT INTO \(sqlQuoted(metadataTable)) (key, value) VALUES (?, ?)
            ON CONFLICT(key) DO UPDATE SET value = max(CAST(value AS INTEGER), excluded.value)
            """, arguments: [historyDeletedThroughKey, through])
        return removed
    }
}

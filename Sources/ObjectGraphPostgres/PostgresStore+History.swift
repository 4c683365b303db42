import Foundation
import ObjectGraph
import PostgresNIO

/// Persistent history in PostgreSQL, in the SQLite store's tables and format (`objectgraph.history`, and
/// `objectgraph.history_changes` holding runs of consecutive keys), always on: hosts learn of each other's changes
/// from it. A save numbers its transaction under an advisory lock held until it commits, and announces it with
/// `NOTIFY objectgraph_history` (delivered at commit, never for a rolled-back save).
extension PostgresStore {
    /// Writes `record` as a new transaction, inside the save's transaction.
    func writeHistory(_ record: HistoryRecord, in session: PostgresSession) throws {
        guard !record.isEmpty else { return }
        try session.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.historyLock))")
        var binds = StatementBindings()
        binds.append(Date().timeIntervalSince1970)
        binds.append(record.source.author)
        binds.append(record.source.contextName)
        binds.append(historyOrigin)
        let number = try session.query("""
            INSERT INTO \(pgQuoted(PostgresSchema.historyTable)) (timestamp, author, context, origin) VALUES ($1, $2, $3, $4) RETURNING number
            """, binds).first?.decode(Int64.self) ?? 0
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // One row per run (an import of a million rows is one), a thousand runs per statement.
        let runs = record.runs
        for start in stride(from: 0, to: runs.count, by: 1_000) {
            var rows = StatementBindings()
            var tuples: [String] = []
            for run in runs[start..<min(start + 1_000, runs.count)] {
                let first = rows.count
                tuples.append("(" + (1...7).map { "$\(first + $0)" }.joined(separator: ", ") + ")")
                rows.append(number)
                rows.append(run.entityName)
                rows.append(run.firstKey)
                rows.append(run.count)
                rows.append(run.kind.rawValue)
                rows.append(run.properties.isEmpty ? nil : String(decoding: try encoder.encode(run.properties), as: UTF8.self))
                rows.append(run.tombstone.isEmpty ? nil : String(decoding: try encoder.encode(run.tombstone), as: UTF8.self))
            }
            try session.query("""
                INSERT INTO \(pgQuoted(PostgresSchema.historyChangesTable)) ("transaction", entity, first_key, key_count, kind, properties, tombstone)
                VALUES \(tuples.joined(separator: ", "))
                """, rows)
        }
        var notice = StatementBindings()
        notice.append(Self.channel)
        notice.append(historyOrigin)
        try session.query("SELECT pg_notify($1, $2)", notice)
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
        try PostgresErrors.writing(location) {
            try pool.withSession { session in
                try session.transaction(learningOutcome: true) {
                    var binds = StatementBindings()
                    binds.append(date.timeIntervalSince1970)
                    guard let through = try session.query(
                        "SELECT MAX(number) FROM \(pgQuoted(PostgresSchema.historyTable)) WHERE timestamp < $1", binds
                    ).first?.decode(Int64?.self) else { return 0 }
                    return try deleteHistory(through: through, in: session)
                }
            }
        }
    }

    /// Deletes the transactions numbered up to `through` and records that history through it is gone (a token
    /// before it has lost changes); returns how many went.
    private func deleteHistory(through: Int64, in session: PostgresSession) throws -> Int {
        var number = StatementBindings()
        number.append(through)
        let removed = try session.query("DELETE FROM \(pgQuoted(PostgresSchema.historyTable)) WHERE number <= $1", number).metadata.rows ?? 0
        var marker = StatementBindings()
        marker.append("\(through)")
        try session.query("""
            INSERT INTO \(pgQuoted(PostgresSchema.metadataTable)) (key, value) VALUES ('history_deleted_through', $1)
            ON CONFLICT (key) DO UPDATE SET value = GREATEST(CAST(\(pgQuoted(PostgresSchema.metadataTable)).value AS BIGINT), CAST(excluded.value AS BIGINT))::TEXT
            """, marker)
        return removed
    }

    /// The SQL condition on the history table that selects what `request` asks for after transaction `after`,
    /// its values appended to `binds`.
    private static func transactionCondition(after: Int64, _ request: HistoryRequest?, binds: inout StatementBindings) -> String {
        func placeholder<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        var sql = "number > \(placeholder(after))"
        guard let request else { return sql }
        if let date = request.afterDate { sql += " AND timestamp > \(placeholder(date.timeIntervalSince1970))" }
        if let authors = request.authors { sql += " AND author = ANY(\(placeholder(authors.sorted())))" }
        if !request.excludedAuthors.isEmpty {
            sql += " AND (author IS NULL OR NOT author = ANY(\(placeholder(request.excludedAuthors.sorted()))))"
        }
        if let contexts = request.contextNames { sql += " AND context = ANY(\(placeholder(contexts.sorted())))" }
        return sql
    }

    /// The transactions after `token`, without those `excludingOrigin` wrote (and, with `selecting`, those its
    /// transaction and entity filters select), and the number of the newest read.
    func history(
        after token: PersistentHistoryToken?, excludingOrigin: String?, selecting request: HistoryRequest? = nil
    ) throws -> (transactions: [PersistentHistoryTransaction], last: Int64) {
        if let token { try check(token) }
        let after = token?.transactionNumber ?? 0
        return try read { session in
            try session.transaction {
                // One snapshot for the three reads: a transaction committed meanwhile is seen whole or not at all.
                try session.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                if let token { try checkNotAhead(token, session) }
                if token != nil, let deleted = try session.query(
                    "SELECT value FROM \(pgQuoted(PostgresSchema.metadataTable)) WHERE key = 'history_deleted_through'"
                ).first.flatMap({ Int64(try $0.decode(String.self)) }), after < deleted {
                    throw ObjectGraphError.historyTokenExpired(
                        path: location, token: token!.description,
                        reason: "history through transaction \(deleted) was deleted, so the changes after the token are no longer all kept; refetch instead")
                }
                var binds = StatementBindings()
                let selected = Self.transactionCondition(after: after, request, binds: &binds)
                var changeBinds = binds
                var entityCondition = ""
                if let entities = request?.entityNames {
                    changeBinds.append(entities.sorted())
                    entityCondition = " AND entity = ANY($\(changeBinds.count))"
                }
                var runs: [Int64: [HistoryRun]] = [:]
                let decoder = JSONDecoder()
                for row in try session.query("""
                    SELECT "transaction", entity, first_key, key_count, kind, properties, tombstone FROM \(pgQuoted(PostgresSchema.historyChangesTable))
                    WHERE "transaction" IN (SELECT number FROM \(pgQuoted(PostgresSchema.historyTable)) WHERE \(selected))\(entityCondition)
                    ORDER BY "transaction", ctid
                    """, changeBinds) {
                    let (number, entity, first, count, kindName, properties, tombstone) = try row.decode(
                        (Int64, String, Int64, Int64, String, String?, String?).self)
                    guard let kind = PersistentHistoryChange.ChangeType(rawValue: kindName) else { continue }
                    runs[number, default: []].append(HistoryRun(
                        entityName: entity, firstKey: first, count: count, kind: kind,
                        properties: try properties.map { try decoder.decode([String].self, from: Data($0.utf8)) } ?? [],
                        tombstone: try tombstone.map { try decoder.decode([String: AttributeValue].self, from: Data($0.utf8)) } ?? [:]))
                }
                var transactions: [PersistentHistoryTransaction] = []
                var last = after
                for row in try session.query("""
                    SELECT number, timestamp, author, context, origin FROM \(pgQuoted(PostgresSchema.historyTable)) WHERE \(selected) ORDER BY number
                    """, binds) {
                    let (number, timestamp, author, context, origin) = try row.decode((Int64, Double, String?, String?, String).self)
                    last = number
                    if origin == excludingOrigin { continue }
                    transactions.append(PersistentHistoryTransaction(
                        token: PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: number),
                        timestamp: Date(timeIntervalSince1970: timestamp), author: author, contextName: context,
                        changes: (runs[number] ?? []).flatMap { $0.changes() }, origin: origin))
                }
                return (transactions, last)
            }
        }
    }

    public func lastHistoryToken() throws -> PersistentHistoryToken {
        let number = try read { session in
            try session.query("SELECT COALESCE(MAX(number), 0) FROM \(pgQuoted(PostgresSchema.historyTable))").first?.decode(Int64.self) ?? 0
        }
        return PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: number)
    }

    public func deleteHistory(before token: PersistentHistoryToken) throws -> Int {
        try check(token)
        return try PostgresErrors.writing(location) {
            try pool.withSession { session in
                try session.transaction(learningOutcome: true) {
                    try checkNotAhead(token, session)
                    return try deleteHistory(through: token.transactionNumber - 1, in: session)
                }
            }
        }
    }

    /// Throws ``ObjectGraphError/historyTokenAhead(path:token:lastTransaction:)`` when `token` names a transaction
    /// after the last this store recorded (kept or deleted).
    private func checkNotAhead(_ token: PersistentHistoryToken, _ session: PostgresSession) throws {
        let last = try session.query("""
            SELECT GREATEST(COALESCE((SELECT MAX(number) FROM \(pgQuoted(PostgresSchema.historyTable))), 0),
                            COALESCE((SELECT CAST(value AS BIGINT) FROM \(pgQuoted(PostgresSchema.metadataTable)) WHERE key = 'history_deleted_through'), 0))
            """).first?.decode(Int64.self) ?? 0
        guard token.transactionNumber <= last else {
            throw ObjectGraphError.historyTokenAhead(path: location, token: token.description, lastTransaction: last)
        }
    }

    private func check(_ token: PersistentHistoryToken) throws {
        guard token.storeIdentifier == identifier else {
            throw ObjectGraphError.historyTokenExpired(
                path: location, token: token.description, reason: "it is a token of store \(token.storeIdentifier), and this store is \(identifier)")
        }
    }

    // MARK: Other hosts

    /// Listens on a connection of its own; each announcement by another coordinator reads the history after the
    /// last transaction heard (on a queue of its own, off the event loop) and delivers it.
    public func watchRemoteChanges(_ deliver: @escaping @Sendable (RemoteChangeNotification) -> Void) throws -> any RemoteChangeWatch {
        try PostgresRemoteChangeListener(store: self, deliver: deliver)
    }
}

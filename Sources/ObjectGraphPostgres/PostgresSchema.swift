import Foundation
import ObjectGraph
import PostgresNIO
import PredicateFormat

/// The store's tables in PostgreSQL: the same names and layout as the SQLite store's (see `TableLayout`), so a
/// reader who knows one knows the other (names past 63 bytes shortened, see `pgQuoted(_:)`), with PostgreSQL's
/// types, and the SQL functions the predicate compiler's string operators call.
enum PostgresSchema {
    static let metadataTable = StorageNames.metadataTable
    static let sequenceTable = StorageNames.sequenceTable
    static let historyTable = "objectgraph.history"
    static let historyChangesTable = "objectgraph.history_changes"
    static let formatVersion = 1
    /// The advisory lock held while a store's schema is created, so two hosts opening an empty database at once
    /// create it once.
    static let schemaLock: Int64 = 0x4F47_5343_4845_4D41
    /// The advisory lock a save holds from numbering its history until it commits: transactions become visible in
    /// the order of their numbers, so a reader that has seen number n never later finds a smaller one.
    static let historyLock: Int64 = 0x4F47_4849_5354_4F52

    /// The table of each inheritance tree of `model`, its names written as PostgreSQL keeps them.
    static func tableLayouts(_ model: Model) -> [TableLayout] {
        model.entities.filter { $0.rootName == $0.name }.map { TableLayout(root: $0, model: model, dialect: .postgres) }
    }

    /// Creates the schema in an empty database, or checks the one there, migrating a store an earlier of `versions`
    /// wrote: the identifier of the store.
    static func prepare(
        _ session: PostgresSession, versions: SchemaVersions, tables: [TableLayout], location: String, progress: MigrationProgressHandler? = nil
    ) throws -> String {
        let model = versions.current
        return try session.transaction {
            try session.query("SELECT pg_advisory_xact_lock(\(schemaLock))")
            if let stored = try storedMetadata(session, location: location) {
                guard let identifier = stored["store_identifier"] else {
                    throw ObjectGraphError.storeUnavailable(path: location, reason: "its metadata table has no store identifier")
                }
                let storedHash = stored["model_hash"] ?? "none"
                guard storedHash != model.versionHash else { return identifier }
                guard let index = versions.index(ofHash: storedHash), index < versions.currentIndex else {
                    throw ObjectGraphError.modelMismatch(path: location, storeHash: storedHash, modelHash: model.versionHash)
                }
                for step in index..<versions.currentIndex {
                    let stage = versions.stages.first { $0.from == step }
                    if let willMigrate = stage?.willMigrate {
                        try PostgresMigration.runStage(willMigrate, model: versions.models[step], in: session, identifier: identifier)
                    }
                    try PostgresMigration.run(
                        from: versions.models[step], to: versions.models[step + 1], in: session, location: location,
                        step: step - index + 1, steps: versions.currentIndex - index, progress: progress)
                    if let didMigrate = stage?.didMigrate {
                        try PostgresMigration.runStage(didMigrate, model: versions.models[step + 1], in: session, identifier: identifier)
                    }
                }
                return identifier
            }
            let existing = try session.query("""
                SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name LIMIT 5
                """).map { try $0.decode(String.self) }
            guard existing.isEmpty else {
                throw ObjectGraphError.storeUnavailable(
                    path: location,
                    reason: "the database holds tables (\(existing.joined(separator: ", "))) but no \(metadataTable): it is not an ObjectGraph store")
            }
            let identifier = UUID().uuidString
            for statement in createStatements(model: model, tables: tables) { try session.query(statement) }
            var binds = StatementBindings()
            binds.append(model.versionHash)
            binds.append(identifier)
            binds.append(String(decoding: model.canonicalJSON(), as: UTF8.self))
            binds.append("\(formatVersion)")
            try session.query("""
                INSERT INTO \(pgQuoted(metadataTable)) (key, value) VALUES
                ('model_hash', $1), ('store_identifier', $2), ('model', $3), ('format_version', $4)
                """, binds)
            return identifier
        }
    }

    /// The metadata of the store in the database, nil when there is none; a store of a newer format is refused.
    static func storedMetadata(_ session: PostgresSession, location: String) throws -> [String: String]? {
        let exists = try session.query("SELECT to_regclass($1) IS NOT NULL", binds([pgQuoted(metadataTable)])).first?.decode(Bool.self) ?? false
        guard exists else { return nil }
        var values: [String: String] = [:]
        for row in try session.query("SELECT key, value FROM \(pgQuoted(metadataTable))") {
            let (key, value) = try row.decode((String, String).self)
            values[key] = value
        }
        if let format = values["format_version"].flatMap(Int.init), format > formatVersion {
            throw ObjectGraphError.storeUnavailable(
                path: location, reason: "the store has format \(format), newer than this library's \(formatVersion); update the library")
        }
        return values
    }

    static func binds(_ texts: [String]) -> StatementBindings {
        var binds = StatementBindings()
        for text in texts { binds.append(text) }
        return binds
    }

    /// The history tables (see `PostgresStore+History.swift`).
    static let historyStatements = [
        """
        CREATE TABLE \(pgQuoted(historyTable)) (
          number BIGSERIAL PRIMARY KEY, timestamp DOUBLE PRECISION NOT NULL, author TEXT, context TEXT, origin TEXT NOT NULL)
        """,
        """
        CREATE TABLE \(pgQuoted(historyChangesTable)) (
          "transaction" BIGINT NOT NULL REFERENCES \(pgQuoted(historyTable))(number) ON DELETE CASCADE,
          entity TEXT NOT NULL, first_key BIGINT NOT NULL, key_count BIGINT NOT NULL,
          kind TEXT NOT NULL CHECK (kind IN ('insert', 'update', 'delete')), properties TEXT, tombstone TEXT)
        """,
        "CREATE INDEX \(pgQuoted(historyChangesTable + "(transaction)")) ON \(pgQuoted(historyChangesTable))(\"transaction\")",
    ]

    /// The statements creating the store's tables, functions and triggers for `model`; a migration keeps the
    /// history tables there are (`includingHistory` false).
    static func createStatements(model: Model, tables: [TableLayout], includingHistory: Bool = true) -> [String] {
        var statements = [
            "CREATE TABLE \(pgQuoted(metadataTable)) (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            "CREATE TABLE \(pgQuoted(sequenceTable)) (entity TEXT PRIMARY KEY, max_key BIGINT NOT NULL)",
        ]
        if includingHistory { statements += historyStatements }
        let id = pgQuoted(StorageNames.rowID)
        for table in tables {
            var definitions = [
                "\(id) BIGINT PRIMARY KEY", "\(pgQuoted(StorageNames.rowEntity)) TEXT NOT NULL",
                "\(pgQuoted(StorageNames.rowVersion)) BIGINT NOT NULL DEFAULT 1",
            ]
            for column in table.columns { definitions.append("\(pgQuoted(column.name)) \(PostgresValueCoding.sqlType(column.sqlType))") }
            statements.append("CREATE TABLE \(pgQuoted(table.name)) (\(definitions.joined(separator: ", ")))")
            statements.append("INSERT INTO \(pgQuoted(sequenceTable)) (entity, max_key) VALUES (\(sqlLiteral(table.rootEntity)), 0)")
        }
        // References once every table exists: trees may point at each other.
        for table in tables {
            for column in table.columns {
                guard let references = column.references else { continue }
                statements.append("""
                    ALTER TABLE \(pgQuoted(table.name)) ADD FOREIGN KEY (\(pgQuoted(column.name)))
                    REFERENCES \(pgQuoted(references))(\(id)) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED
                    """)
            }
            statements += table.indexes(model: model).map(\.sql)
        }
        for join in SQLiteStore.joinTables(model) {
            statements.append("""
                CREATE TABLE \(pgQuoted(join.name)) (
                  source BIGINT NOT NULL REFERENCES \(pgQuoted(join.sourceTable))(\(id)) ON DELETE CASCADE,
                  target BIGINT NOT NULL REFERENCES \(pgQuoted(join.targetTable))(\(id)) ON DELETE CASCADE,
                  position BIGINT,\(join.isOrderedBothWays ? " inverse_position BIGINT," : "") PRIMARY KEY (source, target))
                """)
            statements.append("CREATE INDEX \(pgQuoted(join.name + "(target)")) ON \(pgQuoted(join.name))(target)")
        }
        return statements + functions + PostgresDerivationTriggers.statements(model: model)
    }

    /// A string constant in SQL text (only for names the model declares, never for values).
    static func sqlLiteral(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// The string operators of the predicate language, as the evaluator defines them (see `StringMatching`):
    /// folding is Unicode case folding (lowercase, with final sigma, long s, sharp s and the fi and fl ligatures as their plain forms) and removal of
    /// combining marks after canonical decomposition; comparisons are by code point; LIKE's `*` and `?` are
    /// wildcards and `\` escapes; MATCHES must match the whole string. A nil operand makes every test false.
    static let functions = [
        """
        CREATE OR REPLACE FUNCTION og_fold(t TEXT, options INTEGER) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT CASE WHEN options & 1 = 1 THEN replace(replace(replace(translate(lower(d), 'ςſ', 'σs'), 'ß', 'ss'), 'ﬁ', 'fi'), 'ﬂ', 'fl') ELSE d END
          FROM (SELECT CASE WHEN options & 2 = 2
                THEN normalize(regexp_replace(normalize(t, NFD), '[\\u0300-\\u036f]', '', 'g'), NFC) ELSE t END AS d) AS folded
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION og_beginswith(t TEXT, p TEXT, options INTEGER) RETURNS BOOLEAN LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT COALESCE(starts_with(og_fold(t, options) COLLATE "C", og_fold(p, options) COLLATE "C"), FALSE)
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION og_endswith(t TEXT, p TEXT, options INTEGER) RETURNS BOOLEAN LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT COALESCE(right(og_fold(t, options), length(og_fold(p, options))) COLLATE "C" = og_fold(p, options) COLLATE "C"
                          OR (p IS NOT NULL AND t IS NOT NULL AND length(og_fold(p, options)) = 0), FALSE)
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION og_contains(t TEXT, p TEXT, options INTEGER) RETURNS BOOLEAN LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT COALESCE(strpos(og_fold(t, options), og_fold(p, options)) > 0, FALSE)
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION og_like_pattern(p TEXT) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
        DECLARE
          result TEXT := '';
          c TEXT;
          escaping BOOLEAN := FALSE;
        BEGIN
          FOREACH c IN ARRAY regexp_split_to_array(p, '') LOOP
            IF escaping THEN
              result := result || CASE WHEN c IN ('%', '_', '\\') THEN '\\' || c ELSE c END;
              escaping := FALSE;
            ELSIF c = '\\' THEN escaping := TRUE;
            ELSIF c = '*' THEN result := result || '%';
            ELSIF c = '?' THEN result := result || '_';
            ELSIF c IN ('%', '_') THEN result := result || '\\' || c;
            ELSE result := result || c;
            END IF;
          END LOOP;
          RETURN result;
        END
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION og_like(t TEXT, p TEXT, options INTEGER) RETURNS BOOLEAN LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT COALESCE(og_fold(t, options) COLLATE "C" LIKE og_like_pattern(og_fold(p, options)) COLLATE "C", FALSE)
        $$
        """,
        """
        CREATE OR REPLACE FUNCTION og_matches(t TEXT, p TEXT, options INTEGER) RETURNS BOOLEAN LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT COALESCE(CASE WHEN options & 1 = 1 THEN og_fold(t, options & 2) ~* ('^(?:' || p || ')$')
                          ELSE og_fold(t, options & 2) ~ ('^(?:' || p || ')$') END, FALSE)
        $$
        """,
    ]
}

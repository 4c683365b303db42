import Foundation
import GRDB
import GRDBSQLite
import PredicateFormat
import Synchronization

/// A store in one SQLite file, in WAL mode: one writing connection, and read-only connections reading snapshots
/// beside it (`StatementReaders`).
///
/// The schema is readable without this library: a table per root entity (see `TableLayout`), a column per
/// attribute, `<relationship>_id` foreign keys for to-one relationships, join tables named `<Entity>_<relationship>`
/// for many-to-many ones, an `_version` column per row for optimistic locking, and `objectgraph_metadata` holding
/// the model, its hash and the store's identifier, so any store describes itself.
public final class SQLiteStore: PersistentStore, QueryGenerationStore {
    public let identifier: String
    public let location: String
    /// How long a write waits for a lock another connection or process holds, by default: long enough for any
    /// ordinary save elsewhere, short enough that a stuck one is reported.
    public static let defaultBusyTimeout: TimeInterval = 10
    /// How long this store's writes wait for a lock held elsewhere.
    public let busyTimeout: TimeInterval
    let model: Model
    /// The store's one writing connection (read-only for a read-only store), which also runs the checks on open.
    ///
    /// A GRDB `DatabaseQueue` in WAL mode, not a `DatabasePool`: a pool writes on every open (it creates and drops a
    /// table when the `-wal` is empty, which it is after every clean close), and a store opened for writing writes
    /// only what its schema needs. The store's readers are its own (``StatementReaders``): they open once the writer
    /// has made the `-wal` and `-shm`.
    let writer: DatabaseQueue
    /// Connections for single-statement reads (see ``StatementReaders``).
    let statementReaders: StatementReaders
    let tables: NameTable<TableLayout>
    let statementCount = Atomic<Int>(0)
    /// After how many rows a fetch reads the rest on a thread of its own (see ``RowPipeline``): far more than a
    /// screen's query reads, few enough that a large fetch overlaps most of its reading with making its objects.
    /// Tests lower it to run the pipeline on small stores; 0 turns it off.
    let pipelineThreshold = Atomic<Int>(2_048)
    /// Whether the store acts as if the system refused it a reading thread: tests set it to take the path where
    /// the fetch's own thread reads on.
    let refusesReadingThreads = Atomic<Bool>(false)
    /// Whether large fetches read ahead now (see ``ReadAheadPolicy``).
    let readAheadPolicy = ReadAheadPolicy()
    /// Whether this store traces its statements and each fetch's row count (see ``ObjectGraphLogging``), decided
    /// when it opens: asking the logger on every fetch took its lock and copied it, a twentieth of a lookup's time.
    let tracesSQL: Bool
    /// The SQL of recent object fetches, by what decides it (see ``fetchSQL(_:)``).
    let fetchSQLCache = SlotTable(count: 256)
    /// Compiled fetches by shape, for fetches that differ from them only in their constants.
    let fetchSQLTemplates = SlotTable(count: 128)

    static let metadataTable = StorageNames.metadataTable
    static let sequenceTable = StorageNames.sequenceTable
    /// The layout of tables and metadata this code writes and reads; a store of a later format is refused untouched.
    static let formatVersion = 2

    /// The files the store opened, and the process: a save fails, rather than writing where no later process will
    /// read it, once the path or its companions name other files or none, or in a forked process (see ``StoreFiles``).
    let files: StoreFiles
    /// This store's hold on its file, shared with every other store of the process on it: its key reservations
    /// (see ``reservePrimaryKeys(rootEntity:count:)``), and the rule that keeps the process's SQLite locks (see
    /// ``StoreFileRegistry``). Released once every connection of the store is closed.
    private let lease: StoreFileRegistry.Lease
    /// Whether the store was opened read-only (see ``StoreOptions/isReadOnly``).
    public let isReadOnly: Bool
    /// The files keeping large values beside the store (see ``ExternalBinaryData``).
    let externalData: ExternalBinaryData
    /// Whether its connections read the file as immutable (see ``StoreOptions/isReadOnly``): their closing is then
    /// left to the registry.
    private let readsImmutableFile: Bool
    /// Whether saves and batch requests record persistent history (see ``StoreOptions/recordsHistory``). Once any
    /// coordinator turns history on for the file, every store open on it records from its next write on: each write
    /// transaction looks for the history tables until it finds them.
    public var recordsHistory: Bool { historyTablesExist.value }
    let historyTablesExist: AtomicFlag
    /// Names this open store in the history it records, so that its coordinator skips its own transactions when it
    /// merges other processes'.
    let historyOrigin = UUID().uuidString

    /// Opens the store at `url`, creating it (and its schema) when the file does not exist or is empty.
    ///
    /// Anything else at `url` is checked through a read-only connection before the store writes a byte: a damaged
    /// file, a database of another program, a store of another model or of a newer format is refused with
    /// ``ObjectGraphError/storeUnavailable(path:reason:)`` or ``ObjectGraphError/modelMismatch(path:storeHash:modelHash:)``
    /// and left exactly as it was.
    ///
    /// A write that finds the file locked by another connection or process waits up to `busyTimeout` seconds for
    /// it, then fails with ``ObjectGraphError/storeWriteFailed(path:reason:)``, writing nothing.
    public convenience init(url: URL, model: Model, busyTimeout: TimeInterval = SQLiteStore.defaultBusyTimeout) throws {
        try self.init(url: url, versions: try SchemaVersions([model]), busyTimeout: busyTimeout)
    }

    /// ``init(url:versions:busyTimeout:progress:)`` without progress reports.
    public convenience init(url: URL, versions: SchemaVersions, busyTimeout: TimeInterval = SQLiteStore.defaultBusyTimeout) throws {
        try self.init(url: url, versions: versions, busyTimeout: busyTimeout, progress: nil)
    }

    /// ``init(url:versions:options:progress:)`` with only a busy timeout.
    public convenience init(url: URL, versions: SchemaVersions, busyTimeout: TimeInterval, progress: MigrationProgressHandler?) throws {
        try self.init(url: url, versions: versions, options: StoreOptions(busyTimeout: busyTimeout), progress: progress)
    }

    /// Opens (or creates) the store at `url` for the current of `versions`: a store an earlier version wrote is
    /// migrated first, one version at a time, each by its inferred ``MigrationPlan``, all in one transaction (a
    /// failure leaves the store as the earlier version wrote it); a store a later version wrote is refused untouched.
    /// `progress` hears of each entity's rows as they are copied.
    ///
    /// With ``StoreOptions/recordsHistory`` (or on a store that already records it), every save and batch request
    /// records a transaction in the store's persistent history (see ``PersistentStoreCoordinator/history(after:)-(PersistentHistoryToken?)``).
    public init(url: URL, versions: SchemaVersions, options: StoreOptions, progress: MigrationProgressHandler? = nil) throws {
        let model = versions.current
        let path = url.path
        let busyTimeout = options.busyTimeout
        location = path
        self.busyTimeout = busyTimeout
        self.model = model
        let folder = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "the folder \(folder) does not exist")
        }
        let tables = Self.tableLayouts(model)
        self.tables = tables
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "ObjectGraph.SQLiteStore"
        let traced = ObjectGraphLogging.tracesSQL
        tracesSQL = traced
        // Bound values appear in the trace only when it is on (they may be private).
        configuration.publicStatementArguments = traced
        let readOnly = options.isReadOnly
        configuration.prepareDatabase { db in
            if !readOnly {
                // WAL, as SQLite recommends for a writer beside readers; `synchronous = NORMAL` is the durability
                // contract (ARCHITECTURE.md, "Durability"). On a store already in WAL mode this writes nothing.
                guard try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") == "wal" else {
                    throw ObjectGraphError.storeUnavailable(path: path, reason: "SQLite could not switch it to write-ahead logging (WAL)")
                }
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                // After a checkpoint has copied the whole log, the `-wal` is cut back to this size (see `checkpoint()`).
                try db.execute(sql: "PRAGMA journal_size_limit = \(Self.logSizeLimit)")
            }
            PredicateSQLFunctions.register(in: db)
            db.add(function: DerivationTriggers.caseFunction)
            db.add(function: BatchValueCheck.function)
            if traced { ObjectGraphLogging.traceStatements(of: db) }
        }
        // One name for the file, whichever link the app gave: SQLite keeps the `-wal` beside the file itself.
        let file = StoreFileRegistry.canonicalPath(path)
        externalData = ExternalBinaryData(storeURL: URL(fileURLWithPath: file))
        var lease: StoreFileRegistry.Lease?
        isReadOnly = options.isReadOnly
        configuration.readonly = options.isReadOnly
        do {
            if options.isReadOnly, !FileManager.default.fileExists(atPath: file) {
                throw ObjectGraphError.storeUnavailable(path: path, reason: "there is no store file to open read-only")
            }
            if let problem = StoreFiles.secondNameProblem(file) { throw ObjectGraphError.storeUnavailable(path: path, reason: problem) }
            let stored = try StoreFileCheck.inspect(path: file, versions: versions)
            if options.isReadOnly, stored != versions.currentIndex {
                throw ObjectGraphError.storeUnavailable(
                    path: path, reason: "it was written by version \((stored ?? 0) + 1) of the model and needs migrating to version \(versions.currentIndex + 1), which writes; open it for writing once, or read-only with its own version")
            }
            let immutable = options.isReadOnly && StoreFileRegistry.mayOpenImmutable(file)
            readsImmutableFile = immutable
            // Held before the first locking connection opens, and until the last one is closed.
            let held = immutable ? StoreFileRegistry.detachedLease(file) : StoreFileRegistry.lease(file)
            lease = held
            self.lease = held
            let connectionPath = options.isReadOnly ? StoreFileRegistry.readOnlyURI(file, immutable: immutable) : file
            if let stored, versions.stages.contains(where: { $0.from >= stored && $0.from < versions.currentIndex }) {
                try StagedMigration.run(path: file, from: stored, versions: versions, busyTimeout: busyTimeout, progress: progress)
            }
            writer = try DatabaseQueue(path: connectionPath, configuration: configuration)
            // An existing store is only read: another process saving meanwhile holds the write lock, and opening
            // must not wait for it.
            let existing = try writer.read { db in try Self.storedIdentifier(db, model: model, path: path, migrating: true) }
            if existing == nil, options.isReadOnly {
                throw ObjectGraphError.storeUnavailable(path: path, reason: "it is a store of an earlier format and needs upgrading, which writes; open it for writing once")
            }
            identifier = try existing
                ?? writer.writeWithoutTransaction { db in try Self.prepareSchema(db, versions: versions, tables: tables, path: path, progress: progress) }
            let keepsHistory = try writer.read(Self.historyTablesExist)
            if options.keepsHistory && !keepsHistory && !options.isReadOnly { try writer.write { try Self.createHistoryTables($0) } }
            historyTablesExist = AtomicFlag(keepsHistory || (options.keepsHistory && !options.isReadOnly))
            statementReaders = try StatementReaders(path: connectionPath, busyTimeout: busyTimeout, immutableFile: immutable ? file : nil)
            files = StoreFiles(path: file)
            if !options.isReadOnly { try removeStrayExternalFiles() }
        } catch let error as ObjectGraphError {
            lease?.release()
            throw error
        } catch let error as DatabaseError {
            lease?.release()
            let reason: String
            switch error.resultCode {
            case .SQLITE_NOTADB, .SQLITE_CORRUPT: reason = "the file is not an SQLite database, or it is damaged (\(error.message ?? "\(error)"))"
            case .SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_IOERR:
                reason = "the location cannot be opened for writing (\(error.message ?? "\(error)"))"
            default: reason = error.message ?? "\(error)"
            }
            throw ObjectGraphError.storeUnavailable(path: path, reason: reason)
        } catch {
            lease?.release()
            throw ObjectGraphError.storeUnavailable(path: path, reason: "\(error)")
        }
    }

    /// The tables of `model`'s trees, by root entity.
    static func tableLayouts(_ model: Model) -> NameTable<TableLayout> {
        NameTable(model.entities.filter { $0.rootName == $0.name }.map { ($0.name, TableLayout(root: $0, model: model)) })
    }

    /// The identifier of the store in `db`, after checking it was made with `model`; nil when `db` holds no store of
    /// the current format (a new file, or a store to upgrade), or with `migrating`, a store of another model (whose
    /// version the file check has accepted) to migrate.
    private static func storedIdentifier(_ db: Database, model: Model, path: String, migrating: Bool = false) throws -> String? {
        guard try db.tableExists(metadataTable) else { return nil }
        if migrating, try String.fetchOne(db, sql: "SELECT value FROM \(sqlQuoted(metadataTable)) WHERE key = 'model_hash'") != model.versionHash {
            return nil
        }
        return try checkedIdentifier(db, metadataTable: metadataTable, model: model, path: path)
    }

    static func checkedIdentifier(_ db: Database, metadataTable: String, model: Model, path: String) throws -> String {
        let stored = try String.fetchOne(db, sql: "SELECT value FROM \(sqlQuoted(metadataTable)) WHERE key = 'model_hash'") ?? "none"
        guard stored == model.versionHash else {
            throw ObjectGraphError.modelMismatch(path: path, storeHash: stored, modelHash: model.versionHash)
        }
        guard let identifier = try String.fetchOne(db, sql: "SELECT value FROM \(sqlQuoted(metadataTable)) WHERE key = 'store_identifier'") else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "its metadata table has no store identifier")
        }
        return identifier
    }

    /// Creates the schema in an empty database, or upgrades a store of an earlier format, in one transaction.
    ///
    /// Foreign keys are off meanwhile (SQLite allows switching them only outside a transaction): an upgrade moves
    /// tables aside and drops them, and dropping a table with foreign keys on would first delete its rows one by
    /// one, setting references to NULL as it went. Every reference is checked before the transaction commits.
    private static func prepareSchema(
        _ db: Database, versions: SchemaVersions, tables: NameTable<TableLayout>, path: String, progress: MigrationProgressHandler?
    ) throws -> String {
        let model = versions.current
        try db.execute(sql: "PRAGMA foreign_keys = OFF")
        defer { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
        var identifier = ""
        try db.inTransaction(.immediate) {
            if let existing = try storedIdentifier(db, model: model, path: path, migrating: true) {
                identifier = existing
                return .commit
            }
            let isFormat1 = try db.tableExists(StoreFormat1.metadataTable)
            let isStore = try isFormat1 || db.tableExists(metadataTable)
            if isStore {
                let storedHash = try String.fetchOne(
                    db, sql: "SELECT value FROM \(sqlQuoted(isFormat1 ? StoreFormat1.metadataTable : metadataTable)) WHERE key = 'model_hash'") ?? "none"
                guard let stored = versions.index(ofHash: storedHash), stored <= versions.currentIndex else {
                    throw ObjectGraphError.modelMismatch(path: path, storeHash: storedHash, modelHash: model.versionHash)
                }
                if isFormat1 {
                    let old = versions.models[stored]
                    _ = try StoreFormat1.upgrade(db, model: old, tables: tableLayouts(old), path: path)
                }
                for step in stored..<versions.currentIndex {
                    try SQLiteMigration.run(
                        from: versions.models[step], to: versions.models[step + 1], in: db, path: path,
                        step: step - stored + 1, steps: versions.currentIndex - stored, progress: progress)
                }
                identifier = try checkedIdentifier(db, metadataTable: metadataTable, model: model, path: path)
            } else {
                let existing = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                guard existing.isEmpty else {
                    throw ObjectGraphError.storeUnavailable(
                        path: path, reason: "it is an SQLite database but not an ObjectGraph store (it has tables \(existing.joined(separator: ", ")) and no \(metadataTable))")
                }
                identifier = UUID().uuidString
                try createSchema(db, model: model, tables: tables, metadata: [
                    ("model_hash", model.versionHash), ("store_identifier", identifier),
                    ("model", String(decoding: model.canonicalJSON(), as: UTF8.self)),
                ])
            }
            let broken = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check")
            guard broken.isEmpty else {
                throw ObjectGraphError.storeUnavailable(
                    path: path, reason: "\(broken.count) rows refer to rows that do not exist (first in table \(broken[0][0] as String? ?? "?")); nothing was changed")
            }
            return .commit
        }
        return identifier
    }

    /// Creates every table of the current format, with `metadata` (and the format version) in the metadata table and
    /// every table and column named in the schema table (see `StorageNames`).
    static func createSchema(_ db: Database, model: Model, tables: NameTable<TableLayout>, metadata: [(String, String)]) throws {
        try db.execute(sql: "CREATE TABLE \(sqlQuoted(metadataTable)) (key TEXT PRIMARY KEY, value NOT NULL)")
        try db.execute(sql: "CREATE TABLE \(sqlQuoted(sequenceTable)) (entity TEXT PRIMARY KEY, max_key INTEGER NOT NULL)")
        for (key, value) in metadata + [("format_version", "\(formatVersion)")] {
            try db.execute(sql: "INSERT INTO \(sqlQuoted(metadataTable)) (key, value) VALUES (?, ?)", arguments: [key, value])
        }
        for table in tables.sorted(by: { $0.name < $1.name }) {
            for statement in table.createStatements(model: model) { try db.execute(sql: statement) }
            try db.execute(sql: "INSERT INTO \(sqlQuoted(sequenceTable)) (entity, max_key) VALUES (?, 0)", arguments: [table.rootEntity])
        }
        for table in joinTables(model) { try createJoinTable(db, table) }
        for statement in DerivationTriggers.statements(model: model) { try db.execute(sql: statement) }
        try db.execute(sql: """
            CREATE TABLE \(sqlQuoted(StorageNames.schemaTable)) (
              entity TEXT NOT NULL, property TEXT, kind TEXT NOT NULL, "table" TEXT NOT NULL, "column" TEXT)
            """)
        try fillSchemaTable(db, model: model)
    }

    static func createJoinTable(_ db: Database, _ table: JoinTable) throws {
        try db.execute(sql: """
            CREATE TABLE \(sqlQuoted(table.name)) (
              source INTEGER NOT NULL REFERENCES \(sqlQuoted(table.sourceTable))(\(RowColumn.id)) ON DELETE CASCADE,
              target INTEGER NOT NULL REFERENCES \(sqlQuoted(table.targetTable))(\(RowColumn.id)) ON DELETE CASCADE,
              position INTEGER,\(table.isOrderedBothWays ? "\n  inverse_position INTEGER," : "")
              PRIMARY KEY (source, target))
            """)
        try db.execute(sql: "CREATE INDEX \(sqlQuoted(table.name + "(target)")) ON \(sqlQuoted(table.name))(target)")
    }

    /// Lists `model`'s tables and columns in `objectgraph.schema`: all of them, or when the store lists `old`'s and
    /// `model` only adds to it (a migration step in place), the rows it adds.
    static func fillSchemaTable(_ db: Database, model: Model, adding old: Model? = nil) throws {
        var rows = schemaRows(model)
        if let old {
            func key(_ row: (entity: String, property: String?, kind: String, table: String, column: String?)) -> [String?] {
                [row.entity, row.property, row.kind, row.table, row.column]
            }
            let listed = Set(schemaRows(old).map(key))
            rows.removeAll { listed.contains(key($0)) }
        } else {
            try db.execute(sql: "DELETE FROM \(sqlQuoted(StorageNames.schemaTable))")
        }
        guard !rows.isEmpty else { return }
        let insert = try db.makeStatement(sql: "INSERT INTO \(sqlQuoted(StorageNames.schemaTable)) VALUES (?, ?, ?, ?, ?)")
        for row in rows { try insert.execute(arguments: [row.entity, row.property, row.kind, row.table, row.column]) }
    }

    /// The join tables of `model`, each once, with the tables its columns refer to.
    package static func joinTables(_ model: Model) -> [JoinTable] {
        var result: [JoinTable] = []
        for entity in model.entities {
            for declared in entity.description.relationships {
                guard let relationship = entity.relationship(named: declared.name), case .joinTable(let name, true) = relationship.storage,
                      let destination = model.entityIfPresent(relationship.destinationEntityName) else { continue }
                result.append(JoinTable(
                    name: name, sourceTable: entity.tableName, targetTable: destination.tableName, isOrderedBothWays: relationship.isOrderedBothWays))
            }
        }
        return result
    }

    /// A join table of a model: its name, the tables its `source` and `target` refer to, and whether it keeps the
    /// target side's positions too (`inverse_position`, for a relationship ordered on both sides).
    package struct JoinTable: Sendable {
        package let name: String
        package let sourceTable: String
        package let targetTable: String
        package let isOrderedBothWays: Bool
    }

    /// Where each entity and each property it declares is kept: what `objectgraph.schema` lists for a reader
    /// without this library.
    static func schemaRows(_ model: Model) -> [(entity: String, property: String?, kind: String, table: String, column: String?)] {
        var rows: [(String, String?, String, String, String?)] = []
        for entity in model.entities {
            rows.append((entity.name, nil, "entity", entity.tableName, nil))
            let inherited = entity.attributes.count - entity.description.attributes.count
            for (offset, attribute) in entity.description.attributes.enumerated() {
                if attribute.isTransient {
                    rows.append((entity.name, attribute.name, "transient attribute", entity.tableName, nil))
                } else {
                    rows.append((entity.name, attribute.name, "attribute", entity.tableName, entity.attributeColumns[inherited + offset]))
                }
            }
            for declared in entity.description.relationships {
                guard let relationship = entity.relationship(named: declared.name),
                      let destination = model.entityIfPresent(relationship.destinationEntityName) else { continue }
                switch relationship.storage {
                case .foreignKey(let column):
                    rows.append((entity.name, declared.name, "to-one", entity.tableName, column))
                case .inverseForeignKey(let column, let orderColumn):
                    rows.append((entity.name, declared.name, "to-many", destination.tableName, column))
                    if let orderColumn { rows.append((entity.name, declared.name, "to-many positions", destination.tableName, orderColumn)) }
                case .joinTable(let table, let isSourceSide):
                    rows.append((entity.name, declared.name, "many-to-many", table, isSourceSide ? "source" : "target"))
                case .transient:
                    rows.append((entity.name, declared.name, "transient relationship", entity.tableName, nil))
                }
            }
        }
        return rows
    }

    /// The whole store is in the `.sqlite` file once the store is gone: the WAL is copied back (a checkpoint) and
    /// emptied, so a user copying the file alone copies everything. When another connection or process is using
    /// the store (it holds a lock), the checkpoint is left to it rather than waited for: whoever let go of the last
    /// context would wait for as long as the busy timeout.
    ///
    /// The connections are closed here, before the store lets go of its file (see ``StoreFileRegistry``).
    deinit {
        if readsImmutableFile {
            // Immutable connections' descriptors are outside SQLite's bookkeeping (see ``StoreFileRegistry``).
            StoreFileRegistry.close(writer, path: lease.path)
            StoreFileRegistry.close(statementReaders, path: lease.path)
            return
        }
        if !isReadOnly {
            try? writer.writeWithoutTransaction { db in
                sqlite3_busy_timeout(db.sqliteConnection, 0)
                _ = try db.checkpoint(.truncate)
            }
            externalData.releaseAll()
        }
        // The readers first: the last connection to close removes the `-wal` and `-shm`, and only a writing one can.
        statementReaders.close()
        try? writer.close()
        lease.release()
    }

    // MARK: Writing

    public func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] {
        try writeStore { db in try allocate(db, root: rootEntity, count: count) }
    }

    /// Takes `count` keys of the tree's sequence in `db`'s transaction, past any key a published save reserved.
    ///
    /// The reservations' lock is held throughout, and the keys taken are recorded as reserved too: a reservation
    /// reads the sequence as committed, which an allocation under way has not changed yet.
    func allocate(_ db: Database, root: String, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        let last = try lease.reservations.keys.withLock { reserved in
            try db.execute(
                sql: "UPDATE \(sqlQuoted(Self.sequenceTable)) SET max_key = max(max_key, ?) + ? WHERE entity = ?",
                arguments: [reserved[root] ?? 0, count, root])
            let last = try Int64.fetchOne(db, sql: "SELECT max_key FROM \(sqlQuoted(Self.sequenceTable)) WHERE entity = ?", arguments: [root]) ?? Int64(count)
            reserved[root] = last
            return last
        }
        return Array((last - Int64(count) + 1)...last)
    }

    /// Keys a root's save will write its inserts with, reserved in memory only: a published view names rows by the
    /// keys the store will hold, and a save that then fails must have written nothing. The save that writes them
    /// moves the sequence past them; a failed one leaves a gap in this process's keys, and nothing in the file.
    public func reservePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        let stored = try readStore(singleStatement: true) { db in
            try Int64.fetchOne(db, sql: "SELECT max_key FROM \(sqlQuoted(Self.sequenceTable)) WHERE entity = ?", arguments: [rootEntity]) ?? 0
        }
        let first = lease.reservations.keys.withLock { reserved in
            let first = max(stored, reserved[rootEntity] ?? 0) + 1
            reserved[rootEntity] = first + Int64(count) - 1
            return first
        }
        return Array(first..<first + Int64(count))
    }

    func writeStore<T>(_ body: (Database) throws -> T, beforeCommit: () throws -> Void = {}) throws -> T {
        guard !isReadOnly else {
            throw Self.readOnlyRefusal(location)
        }
        if let problem = files.processProblem() { throw ObjectGraphError.storeWriteFailed(path: location, reason: problem) }
        do {
            return try writer.write { db in
                // Inside the write lock: a coordinator that turned history on since has committed its tables.
                if !historyTablesExist.value, try Self.historyTablesExist(db) { historyTablesExist.value = true }
                let result = try body(db)
                // Last, so that nothing commits where no later process reads it (see `StoreFiles`).
                if let problem = files.problem() { throw ObjectGraphError.storeWriteFailed(path: location, reason: problem) }
                try beforeCommit()
                return result
            }
        } catch let error as ObjectGraphError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw ObjectGraphError.storeWriteFailed(
                path: location, reason: "another connection or process kept the store locked for longer than the busy timeout (\(busyTimeout) s)")
        } catch let error as DatabaseError {
            throw ObjectGraphError.storeWriteFailed(path: location, reason: error.message ?? "\(error)")
        }
    }

    /// What a write to a read-only store throws.
    static func readOnlyRefusal(_ location: String) -> ObjectGraphError {
        .storeWriteFailed(path: location, reason: "the store was opened read-only (StoreOptions.isReadOnly); nothing was written")
    }

    /// Milliseconds since `start`, rounded to a hundredth, for log lines.
    static func milliseconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        return (ms * 100).rounded() / 100
    }

    public func save(_ changes: ChangeSet) throws -> SaveResult { try save(changes, beforeCommit: {}) }

    public func save(_ changes: ChangeSet, beforeCommit: () throws -> Void) throws -> SaveResult {
        let start = ContinuousClock.now
        do {
            let files = ExternalFileChanges()
            let result: SaveResult
            do {
                result = try writeStore({ db in
                    var transaction = SQLiteSaveTransaction(store: self, db: db, externalFiles: files)
                    return try transaction.run(changes)
                }, beforeCommit: beforeCommit)
            } catch {
                externalData.discard(files.written)
                throw error
            }
            externalData.release(files.released)
            ObjectGraphLogging.logger.debug("saved \(changes.inserted.count) inserted, \(changes.updated.count) updated, \(changes.deleted.count) deleted objects to \(location) in \(Self.milliseconds(since: start)) ms")
            return result
        } catch let error as ObjectGraphError {
            if case .conflict = error { ObjectGraphLogging.logger.debug("save to \(location) refused: \(error)") }
            throw error
        }
    }
}

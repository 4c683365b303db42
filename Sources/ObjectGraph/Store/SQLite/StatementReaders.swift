import Foundation
import GRDB
import PredicateFormat
import Synchronization

/// The store's read-only connections, each lent to one read at a time.
///
/// GRDB's `DatabasePool` lends a reader for every read through a pool of semaphores and locks, and asks SQLite for
/// the schema version each time (to refresh its schema cache): together about three fifths of a one-object fetch,
/// which is what a screen's query costs the main thread while an import runs. A store's schema never changes once
/// it is open, and SQLite reads one statement from one snapshot by itself, so such reads take a plain read-only
/// connection from a short list instead, outside any transaction; reads of several statements take one in a read
/// transaction (``readInTransaction(_:)``).
///
/// The first connection is lent through an atomic flag, not the lock: a read that finds it free (the usual case: one
/// reader at a time, often the main thread) takes no lock at all, where taking and returning a connection under a
/// lock cost two locks per read.
final class StatementReaders: Sendable {
    /// The connection opened with the store, and whether a read has it.
    private let first: Reader
    private let firstIsLent = Atomic<Bool>(false)
    /// Further idle connections, for reads while the first is lent.
    private let idle = Protected<[Reader]>([])
    private let path: String
    private let configuration: Configuration
    /// How many further idle connections are kept; more concurrent reads open more, closed when done.
    private let limit = 3
    /// The store file, when the connections open it immutable: their descriptors are outside SQLite's bookkeeping,
    /// so a surplus one is closed through ``StoreFileRegistry/close(_:path:)``, never directly.
    private let immutableFile: String?

    /// Opens the first connection at once: opening one costs little on a fresh heap, but much (glibc consolidates
    /// its free lists for SQLite's page cache) on the heap a large import has just churned, and the first read is
    /// often a screen's query on the main thread during such an import.
    init(path: String, busyTimeout: TimeInterval, immutableFile: String? = nil) throws {
        self.path = path
        self.immutableFile = immutableFile
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "ObjectGraph.SQLiteStore.reader"
        let traced = ObjectGraphLogging.tracesSQL
        configuration.publicStatementArguments = traced
        configuration.prepareDatabase { db in
            PredicateSQLFunctions.register(in: db)
            if traced { ObjectGraphLogging.traceStatements(of: db) }
        }
        self.configuration = configuration
        first = try Reader(queue: DatabaseQueue(path: path, configuration: configuration))
    }

    /// Closes the connections, when the store closes: none is lent then.
    ///
    /// A connection's kept statements are finalized first: SQLite closes no connection that still has prepared
    /// statements, and one left open would outlive the store's writer, which could then not remove the `-wal` and
    /// `-shm` as the last connection does.
    func close() {
        for reader in [first] + idle.withLock({ $0 }) {
            reader.queue.unsafeRead { _ in reader.memo.removeAll() }
            try? reader.queue.close()
        }
    }

    /// Runs `body` on an idle connection (opening one when none is idle), outside any transaction.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try lend { reader in try reader.queue.unsafeRead(body) }
    }

    /// Runs `body` on an idle connection in one read transaction: its statements read one snapshot of the store.
    func readInTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        // A pinned connection is in its generation's transaction already.
        if let pinned = pinnedReader() { return try pinned.lend { reader in try reader.queue.unsafeRead(body) } }
        return try lendIdle { reader in try reader.queue.read(body) }
    }

    // MARK: Query generations

    /// A connection holding one read transaction open: the store as it was when the transaction began, for the
    /// contexts pinned to it (Core Data's query generations, which read the WAL from a transaction's snapshot).
    final class PinnedReader: StoreSnapshot {
        fileprivate let reader: Reader
        fileprivate unowned let readers: StatementReaders
        /// Contexts sharing a token read one at a time.
        private let inUse = NSLock()

        fileprivate init(_ reader: Reader, readers: StatementReaders) {
            self.reader = reader
            self.readers = readers
        }

        fileprivate func lend<T>(_ body: (Reader) throws -> T) throws -> T {
            inUse.lock()
            defer { inUse.unlock() }
            return try body(reader)
        }

        func close() {
            inUse.lock()
            defer { inUse.unlock() }
            reader.queue.unsafeRead { db in
                reader.memo.removeAll()
                try? db.execute(sql: "ROLLBACK")
            }
            // An immutable connection's descriptor is outside SQLite's bookkeeping (see `StoreFileRegistry`).
            if let immutableFile = readers.immutableFile { StoreFileRegistry.close(reader, path: immutableFile) } else { try? reader.queue.close() }
        }
    }

    /// A new connection in a read transaction that has read the store, so that its snapshot is taken now.
    func pin() throws -> PinnedReader {
        var configuration = configuration
        // The transaction stays open between reads, on purpose: GRDB refuses that unless told.
        configuration.allowsUnsafeTransactions = true
        let reader = try Reader(queue: DatabaseQueue(path: path, configuration: configuration))
        try reader.queue.unsafeRead { db in
            try db.execute(sql: "BEGIN DEFERRED")
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
        }
        return PinnedReader(reader, readers: self)
    }

    private func pinnedReader() -> PinnedReader? {
        guard let generation = StoreGeneration.bound, let pinned = generation.snapshot as? PinnedReader, pinned.readers === self else { return nil }
        return pinned
    }

    /// Runs `body` with the statement of `compiled` (its sliced SQL when `sliced`) prepared on an idle connection.
    ///
    /// A screen repeats its query, and finds the statement still prepared on the connection it read from last:
    /// `body` then runs on the caller's thread, outside GRDB's queue, since the connection is this read's alone
    /// while it is lent. GRDB's queue hop (a dispatch, generic metadata, a check that the queue is not re-entered)
    /// was a seventh of a small query beside an import. A statement not yet prepared is prepared, and run, on
    /// GRDB's queue.
    ///
    /// `body` must touch only SQLite's C API on the statement (``Statement/sqliteStatement``): GRDB's own methods
    /// check that they run on its queue, and stop the process when they do not.
    func withStatement<T>(for compiled: FetchSQL, sliced: Bool, _ body: (KeptStatement) throws -> T) throws -> T {
        try lend { reader in
            if let kept = reader.memo.statement(for: compiled, sliced: sliced) { return try body(kept) }
            return try reader.queue.unsafeRead { db in
                try body(try reader.memo.statement(for: compiled, sliced: sliced, in: db))
            }
        }
    }

    /// Runs `body` with `sql` prepared on an idle connection, outside any transaction: outside GRDB's queue too when
    /// the connection keeps the statement prepared already, as ``withStatement(for:sliced:_:)`` runs a repeated
    /// fetch. A fault reads one row by its key, once per object: the queue hop and GRDB's statement cache were an
    /// eighth of it. `body` must touch only SQLite's C API on the statement.
    func withKeptStatement<T>(_ sql: String, _ body: (Statement) throws -> T) throws -> T {
        try lend { reader in
            if let kept = reader.memo.statement(sql) { return try body(kept) }
            return try reader.queue.unsafeRead { db in try body(try reader.memo.statement(sql, in: db)) }
        }
    }

    /// Lends `body` an idle connection, which no other read uses until `body` returns: the first one when it is
    /// free, else one from the idle list, else a new one. A read for a context pinned to a query generation gets
    /// that generation's connection, whose open transaction holds the store as it was.
    private func lend<T>(_ body: (Reader) throws -> T) throws -> T {
        if let pinned = pinnedReader() { return try pinned.lend(body) }
        return try lendIdle(body)
    }

    private func lendIdle<T>(_ body: (Reader) throws -> T) throws -> T {
        if firstIsLent.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            defer { firstIsLent.store(false, ordering: .releasing) }
            return try body(first)
        }
        let reader = try idle.withLock { $0.popLast() } ?? Reader(queue: DatabaseQueue(path: path, configuration: configuration))
        defer {
            let kept = idle.withLock { idle in
                guard idle.count < limit else { return false }
                idle.append(reader)
                return true
            }
            if !kept, let immutableFile { StoreFileRegistry.close(reader, path: immutableFile) }
        }
        return try body(reader)
    }

    /// One connection and the memo of its last statements.
    fileprivate final class Reader: Sendable {
        let queue: DatabaseQueue
        let memo = StatementMemo()

        init(queue: DatabaseQueue) { self.queue = queue }
    }
}

/// The statements a reader connection keeps prepared for the fetches it ran last, found by the compiled fetch's
/// identity, else by their SQL.
///
/// A screen repeats its query (an app a few, in turn): hashing and comparing the text of a fetch (a select list of
/// every column), as GRDB's statement cache does, was 3–4% of a small query beside an import, so the memo first
/// looks for the compiled fetch itself (keeping it alive keeps its identity from being reused by another). Fetches
/// that differ only in their constants share their SQL, and find the statement by its text. The statements are the
/// memo's own, not GRDB's cached ones, so nothing else binds them and ``KeptStatement`` knows what they hold.
final class StatementMemo: @unchecked Sendable {
    // @unchecked Sendable: sound because only the read that has the memo's connection touches it, and
    // StatementReaders lends each connection to one read at a time (its atomic flag and its lock order one read's
    // accesses before the next one's).
    private var kept: [KeptStatement] = []
    /// How many statements a connection keeps; the oldest goes first.
    static let capacity = 8

    /// The kept statement of `compiled`'s SQL (its sliced SQL when `sliced`), if any, now serving `compiled` (whose
    /// arguments ``KeptStatement/bind(slice:)`` binds when the statement held another fetch's).
    func statement(for compiled: FetchSQL, sliced: Bool) -> KeptStatement? {
        // Newest first: the fetch a screen repeats is usually the last one.
        for kept in kept.reversed() where kept.compiled === compiled && kept.sliced == sliced { return kept }
        let sql = sliced ? compiled.slicedSQL : compiled.sql
        for kept in kept.reversed() where kept.sql == sql {
            kept.compiled = compiled
            return kept
        }
        return nil
    }

    /// Statements kept by their text alone (a table's read of one row by key), newest last.
    private var keptByText: [(sql: String, statement: Statement)] = []

    /// Lets go of every kept statement (finalizing it), on the connection's queue.
    func removeAll() {
        kept.removeAll()
        keptByText.removeAll()
    }

    /// The statement of `sql` kept by ``statement(_:in:)``, if any. Each table's text is one string, so the
    /// comparison usually finds the same storage and reads no character.
    func statement(_ sql: String) -> Statement? {
        for kept in keptByText.reversed() where kept.sql == sql { return kept.statement }
        return nil
    }

    /// The statement of `sql`, prepared on `db`, this memo's connection, when not kept yet.
    func statement(_ sql: String, in db: Database) throws -> Statement {
        if let kept = statement(sql) { return kept }
        let made = try db.makeStatement(sql: sql)
        // Finalized here, on GRDB's queue, when the memo lets go of it.
        if keptByText.count == Self.capacity { keptByText.removeFirst() }
        keptByText.append((sql, made))
        return made
    }

    /// The statement of `compiled`'s SQL (its sliced SQL when `sliced`), prepared on `db`, this memo's connection,
    /// when not kept yet.
    func statement(for compiled: FetchSQL, sliced: Bool, in db: Database) throws -> KeptStatement {
        if let kept = statement(for: compiled, sliced: sliced) { return kept }
        let sql = sliced ? compiled.slicedSQL : compiled.sql
        let made = KeptStatement(compiled: compiled, sliced: sliced, sql: sql, statement: try db.makeStatement(sql: sql))
        // Finalized here, on GRDB's queue, when the memo lets go of it.
        if kept.count == Self.capacity { kept.removeFirst() }
        kept.append(made)
        return made
    }
}

/// A statement a reader connection keeps prepared, the compiled fetch it serves now, and the slice its parameters
/// hold.
///
/// SQLite keeps a statement's bindings through a reset, and a compiled fetch's arguments never change, so a
/// repeated fetch with the same slice binds nothing: binding a screen's three integers took a mutex and a value
/// release each, a twentieth of a small query beside an import.
final class KeptStatement {
    let sliced: Bool
    let sql: String
    let statement: Statement
    /// The fetch the statement serves; another fetch with the same SQL (other constants) takes it over, and its
    /// arguments are bound anew.
    var compiled: FetchSQL {
        didSet { if compiled !== oldValue { isBound = false } }
    }
    /// Whether the parameters hold `compiled`'s arguments and `boundSlice`: false until a binding succeeds, and
    /// while one is under way (a failed one leaves the parameters half bound).
    private var isBound = false
    private var boundSlice: FetchSlice?

    init(compiled: FetchSQL, sliced: Bool, sql: String, statement: Statement) {
        (self.compiled, self.sliced, self.sql, self.statement) = (compiled, sliced, sql, statement)
    }

    /// Binds the fetch's arguments and `slice`, unless the parameters hold them already.
    func bind(slice: FetchSlice?) throws {
        if isBound, boundSlice == slice { return }
        isBound = false
        try statement.bind(compiled.arguments, slice: slice)
        (isBound, boundSlice) = (true, slice)
    }
}

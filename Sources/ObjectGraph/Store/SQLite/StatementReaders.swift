import GRDB
import PredicateFormat
import Synchronization

/// Read-only connections for reads of one statement, lent one at a time.
///
/// GRDB's `DatabasePool` lends a reader for every read through a pool of semaphores and locks, and asks SQLite for
/// the schema version each time (to refresh its schema cache): together about three fifths of a one-object fetch,
/// which is what a screen's query costs the main thread while an import runs. A store's schema never changes once
/// it is open, and SQLite reads one statement from one snapshot by itself, so such reads take a plain read-only
/// connection from a short list instead; reads of several statements still take a pool reader and a transaction.
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

    /// Opens the first connection at once: opening one costs little on a fresh heap, but much (glibc consolidates
    /// its free lists for SQLite's page cache) on the heap a large import has just churned, and the first read is
    /// often a screen's query on the main thread during such an import.
    init(path: String) throws {
        self.path = path
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "ObjectGraph.SQLiteStore.reader"
        configuration.prepareDatabase { db in PredicateSQLFunctions.register(in: db) }
        self.configuration = configuration
        first = try Reader(queue: DatabaseQueue(path: path, configuration: configuration))
    }

    /// Runs `body` on an idle connection (opening one when none is idle), outside any transaction, with the
    /// connection's memo of its last statement.
    func read<T>(_ body: (Database, StatementMemo) throws -> T) throws -> T {
        if firstIsLent.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            defer { firstIsLent.store(false, ordering: .releasing) }
            return try first.read(body)
        }
        let reader = try idle.withLock { $0.popLast() } ?? Reader(queue: DatabaseQueue(path: path, configuration: configuration))
        defer {
            idle.withLock { idle in
                if idle.count < limit { idle.append(reader) }
            }
        }
        return try reader.read(body)
    }

    /// One connection and its memo.
    private final class Reader: Sendable {
        let queue: DatabaseQueue
        let memo = StatementMemo()

        init(queue: DatabaseQueue) { self.queue = queue }

        func read<T>(_ body: (Database, StatementMemo) throws -> T) throws -> T {
            try queue.unsafeRead { db in try body(db, memo) }
        }
    }
}

/// The statement a reader connection prepared for the fetch it ran last, found by the compiled fetch's identity.
///
/// A screen repeats its query, and GRDB finds a kept statement by its SQL text: hashing and comparing the text of a
/// fetch (a select list of every column) was 3–4% of a small query beside an import. Keeping the compiled fetch
/// alive here keeps its identity from being reused by another.
final class StatementMemo: @unchecked Sendable {
    // @unchecked Sendable: sound because only the access closure of the memo's own connection touches it, and GRDB
    // runs those one at a time (StatementReaders lends each connection to one read at a time besides).
    private var compiled: FetchSQL?
    private var sliced = false
    private var statement: Statement?

    /// The statement of `compiled` (its sliced SQL when `sliced`), prepared on `db`, this memo's connection.
    func statement(for compiled: FetchSQL, sliced: Bool, in db: Database) throws -> Statement {
        if let statement, self.compiled === compiled, self.sliced == sliced { return statement }
        let statement = try db.cachedStatement(sql: sliced ? compiled.slicedSQL : compiled.sql)
        (self.compiled, self.sliced, self.statement) = (compiled, sliced, statement)
        return statement
    }
}

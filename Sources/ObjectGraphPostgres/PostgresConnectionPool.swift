import Dispatch
import Foundation
import Logging
import ObjectGraph
import PostgresNIO
import Synchronization

/// A few connections to one server, handed to one caller at a time, on an event loop of the store's own.
///
/// The store's calls are synchronous (a context's `perform` runs a fetch to its end), and postgres-nio's are not:
/// a caller's thread waits for the event loop's answer on a semaphore, up to the query timeout. The wait happens on
/// the caller's thread (a context's queue, or the main thread), never on the event loop nor on a thread of Swift's
/// cooperative pool that the answer would need, so it cannot deadlock; and it always ends: when the timeout passes
/// first, the connection is closed (its statement may still be running on the server, and the connection is then
/// in an unknown state) and the caller gets an error naming the host, the database and the statement.
final class PostgresConnectionPool: Sendable {
    let configuration: PostgresStoreConfiguration
    private let connectionConfiguration: PostgresConnection.Configuration
    /// The pool's event loop; nil in a pool that lends one session (``init(lending:)``), which opens nothing.
    private let group: MultiThreadedEventLoopGroup?
    /// The session every caller gets, in a pool made by ``init(lending:)``.
    private let lent: PostgresSession?
    private let idle = Mutex<[PostgresConnection]>([])
    /// Free places: one per connection the pool may still open or hand out.
    private let places: DispatchSemaphore
    private let nextID = Atomic<Int>(0)
    private let logger = Logger(label: "ObjectGraph.PostgresStore")

    init(configuration: PostgresStoreConfiguration) throws {
        self.configuration = configuration
        connectionConfiguration = try configuration.connectionConfiguration()
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        lent = nil
        places = DispatchSemaphore(value: max(1, configuration.maximumConnections))
    }

    /// A pool that hands `session` to every caller and opens no connection: a migration stage's store works inside
    /// the migration's transaction, and another connection would neither see its tables nor get past its locks. Its
    /// callers run one at a time (the stage's context, while the migration waits for it), so the session is never
    /// used by two at once.
    init(lending session: PostgresSession) {
        configuration = session.pool.configuration
        connectionConfiguration = session.pool.connectionConfiguration
        group = nil
        lent = session
        places = DispatchSemaphore(value: 1)
    }

    deinit {
        for connection in idle.withLock({ $0 }) { connection.closeSoon() }
        group?.shutdownGracefully { _ in }
    }

    var location: String { configuration.location }

    /// Runs `body` with a connection of its own; a connection that failed or timed out is closed, not kept.
    ///
    /// A pooled connection the server ended while it sat idle (a restart, `pg_terminate_backend`, a failover) is
    /// found out when it is taken, or by the first statement sent on it, and `body` runs again on a new connection:
    /// that first statement only began a transaction or read, so running it again has no second effect.
    func withSession<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        if let lent { return try body(lent) }
        guard places.wait(timeout: .now() + configuration.queryTimeout.seconds) == .success else {
            throw ObjectGraphError.storeUnavailable(
                path: location, reason: "no connection to the server came free within \(configuration.queryTimeout)")
        }
        defer { places.signal() }
        var (connection, reused) = try takeConnection()
        while true {
            let session = PostgresSession(connection: connection, pool: self, isReused: reused)
            do {
                let result = try body(session)
                if !connection.isClosed { idle.withLock { $0.append(connection) } }
                return result
            } catch {
                if connection.isClosed || session.isBroken.load(ordering: .relaxed) {
                    connection.closeSoon()
                } else {
                    idle.withLock { $0.append(connection) }
                }
                guard session.endedUnanswered.load(ordering: .relaxed) else { throw error }
                ObjectGraphLogging.logger.info("\(location): a pooled connection had been closed by the server; going on with a new one")
                (connection, reused) = try takeConnection()
            }
        }
    }

    /// An idle connection, or a new one when none is left: idle connections the server closed meanwhile are dropped.
    private func takeConnection() throws -> (PostgresConnection, reused: Bool) {
        while let connection = idle.withLock({ $0.popLast() }) {
            if !connection.isClosed { return (connection, true) }
        }
        return (try connect(), false)
    }

    /// Opens a new connection, or reports why the server cannot be reached.
    func connect() throws -> PostgresConnection {
        guard let group else {
            throw ObjectGraphError.storeUnavailable(path: location, reason: "a migration stage's store opens no connection of its own")
        }
        let future = PostgresConnection.connect(
            on: group.next(), configuration: connectionConfiguration, id: nextID.add(1, ordering: .relaxed).newValue, logger: logger)
        do {
            return try Self.wait(for: future, timeout: configuration.connectTimeout + .seconds(1)) {
                future.whenSuccess { $0.closeSoon() }
            }
        } catch is PostgresTimeout {
            throw ObjectGraphError.storeUnavailable(path: location, reason: "the server did not answer within \(configuration.connectTimeout)")
        } catch {
            throw ObjectGraphError.storeUnavailable(path: location, reason: PostgresErrors.describe(error, host: configuration.host))
        }
    }

    /// The value of `future`, waited for up to `timeout`; past it, `onTimeout` runs and ``PostgresTimeout`` is thrown.
    ///
    /// With `connection`, the wait also ends soon after the connection closes: a statement sent on a connection that
    /// had just closed never gets an answer (postgres-nio drops it), so ``PostgresConnectionEnded`` is thrown rather
    /// than waiting the whole timeout.
    static func wait<T: Sendable>(
        for future: EventLoopFuture<T>, timeout: Duration, connection: PostgresConnection? = nil, onTimeout: () -> Void
    ) throws -> T {
        precondition(!future.eventLoop.inEventLoop, "a PostgreSQL store call must not wait on its own event loop")
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        future.whenComplete { result in
            box.result.withLock { $0 = result }
            done.signal()
        }
        var watch = CloseWatch(connection: connection, deadline: .now() + timeout.seconds)
        do {
            try watch.wait(for: done)
        } catch let timeout as PostgresTimeout {
            onTimeout()
            throw timeout
        }
        return try box.result.withLock { $0! }.get()
    }
}

/// A wait for a statement's answer, in short slices, that notices the connection closing under it. A closed
/// connection still delivers an answer that was on its way, so the wait ends a grace period after the close.
struct CloseWatch {

    let connection: PostgresConnection?
    let deadline: DispatchTime
    private var closedAt: DispatchTime?
    private static let slice = 0.2
    private static let grace = 1.0

    init(connection: PostgresConnection?, deadline: DispatchTime) {
        self.connection = connection
        self.deadline = deadline
    }

    /// Waits until `signal` is signalled; throws ``PostgresTimeout`` past the deadline, and
    /// ``PostgresConnectionEnded`` a grace period after the connection closed.
    mutating func wait(for signal: DispatchSemaphore) throws {
        while signal.wait(timeout: connection == nil ? deadline : min(deadline, .now() + Self.slice)) != .success {
            let now = DispatchTime.now()
            if now >= deadline { throw PostgresTimeout() }
            guard let connection, connection.isClosed else { continue }
            let closed = closedAt ?? now
            closedAt = closed
            if now >= closed + Self.grace { throw PostgresConnectionEnded() }
        }
    }
}

/// The outcome of a future, handed from the event loop to the waiting thread.
private final class ResultBox<T: Sendable>: Sendable {
    let result = Mutex<Result<T, any Error>?>(nil)
}

/// Rows read on the event loop, handed to the waiting thread.
private final class RowBox<T: Sendable>: Sendable {
    let values = Mutex<[T]>([])
}

/// Rows decoded on the event loop, taken in batches by the waiting thread.
private final class RowStream<T: Sendable>: Sendable {
    private struct State {
        var values: [T] = []
        var outcome: Result<Void, any Error>?
        var waiting = false
    }

    private let state = Mutex(State())
    /// Signalled when values or the outcome arrive while the reader waits.
    private let ready = DispatchSemaphore(value: 0)

    /// How many values wake the reader: fewer wakes cost less than the overlap gains.
    private static var batch: Int { 1_024 }

    func append(_ value: T) {
        let wake = state.withLock { state in
            state.values.append(value)
            guard state.waiting && state.values.count >= Self.batch else { return false }
            state.waiting = false
            return true
        }
        if wake { ready.signal() }
    }

    func finish(_ outcome: Result<Void, any Error>) {
        let wake = state.withLock { state in
            state.outcome = outcome
            defer { state.waiting = false }
            return state.waiting
        }
        if wake { ready.signal() }
    }

    /// The values that arrived since the last call, and the outcome once the query ended; waits for either until
    /// the watch's deadline, then throws ``PostgresTimeout`` (or ``PostgresConnectionEnded`` when the connection
    /// closed without an answer).
    func take(_ watch: inout CloseWatch) throws -> ([T], Result<Void, any Error>?) {
        while true {
            let taken: ([T], Result<Void, any Error>?)? = state.withLock { state in
                guard state.values.count < Self.batch && state.outcome == nil else {
                    defer { state.values.removeAll(keepingCapacity: true) }
                    return (state.values, state.values.isEmpty ? state.outcome : nil)
                }
                state.waiting = true
                return nil
            }
            if let taken { return taken }
            try watch.wait(for: ready)
        }
    }
}

/// A wait that ran out of time.
struct PostgresTimeout: Error {}

/// A statement whose connection closed before it was answered.
struct PostgresConnectionEnded: Error {}

extension Duration {
    /// The duration in seconds, as Dispatch counts them.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// One caller's use of one connection: statements run one after another, each waited for.
final class PostgresSession: Sendable {
    let connection: PostgresConnection
    let pool: PostgresConnectionPool
    /// Whether the connection sat idle in the pool before: the server may have closed it meanwhile.
    let isReused: Bool
    /// Set when a statement timed out or the connection failed: the pool closes the connection.
    let isBroken = Atomic<Bool>(false)
    /// Set when the first statement on a reused connection found it closed by the server before any answer, and
    /// that statement only began a transaction or read: the pool runs the call again on a new connection.
    let endedUnanswered = Atomic<Bool>(false)
    /// Statements sent so far. Atomics only to make the class `Sendable`: one caller uses a session at a time.
    private let statements = Atomic<Int>(0)
    /// Transactions open on this session, the outermost first (see ``transaction(_:)``).
    private let transactionDepth = Atomic<Int>(0)

    init(connection: PostgresConnection, pool: PostgresConnectionPool, isReused: Bool = false) {
        self.connection = connection
        self.pool = pool
        self.isReused = isReused
    }

    /// Runs `sql` with `binds` and returns every row. Errors name the server, the database and the statement.
    @discardableResult
    func query(_ sql: String, _ binds: StatementBindings = StatementBindings()) throws -> PostgresQueryResult {
        let first = try starting(sql)
        let start = ContinuousClock.now
        let future = connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: PostgresStore.sqlLogger)
        do {
            let result = try waitForAnswer(future)
            trace(sql, binds, since: start, rows: result.rows.count)
            return result
        } catch {
            throw failure(error, sql: sql, first: first)
        }
    }

    /// Runs `sql` and hands each row to `body` on the event loop as it arrives, so that reading the rows overlaps
    /// with receiving them; returns what `body` kept. Errors as ``query(_:_:)``.
    func rows<T: Sendable>(_ sql: String, _ binds: StatementBindings, _ body: @escaping @Sendable (PostgresRow) throws -> T) throws -> [T] {
        let first = try starting(sql)
        let kept = RowBox<T>()
        let future = connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: PostgresStore.sqlLogger) { row in
            let value = try body(row)
            kept.values.withLock { $0.append(value) }
        }
        let start = ContinuousClock.now
        do {
            _ = try waitForAnswer(future)
        } catch {
            throw failure(error, sql: sql, first: first && kept.values.withLock(\.isEmpty))
        }
        let rows = kept.values.withLock { $0 }
        trace(sql, binds, since: start, rows: rows.count)
        return rows
    }

    /// Counts a statement about to be sent, and refuses it on a connection already closed (it would never be
    /// answered); returns whether it is the session's first.
    private func starting(_ sql: String) throws -> Bool {
        let first = statements.add(1, ordering: .relaxed).oldValue == 0
        guard connection.isClosed else { return first }
        throw failure(PostgresConnectionEnded(), sql: sql, first: first)
    }

    /// `future`'s answer, waited for up to the query timeout; past it, or when the connection closes first, the
    /// session is broken and its connection closed.
    private func waitForAnswer<T: Sendable>(_ future: EventLoopFuture<T>) throws -> T {
        try PostgresConnectionPool.wait(for: future, timeout: pool.configuration.queryTimeout, connection: connection) {
            isBroken.store(true, ordering: .relaxed)
            connection.closeSoon()
        }
    }

    /// The store's account of a statement's failure. A connection found ended marks the session broken; when that
    /// happened to the first statement of a reused connection, and the statement could have had no effect (a
    /// transaction's start or a read), the pool may run the call again (see ``PostgresConnectionPool/withSession(_:)``).
    private func failure(_ error: any Error, sql: String, first: Bool) -> any Error {
        switch error {
        case is PostgresTimeout:
            return PostgresErrors.Failure.timedOut(location: pool.location, seconds: pool.configuration.queryTimeout, sql: sql)
        case is PostgresErrors.Failure, is ObjectGraphError:
            return error
        default:
            let failure: PostgresErrors.Failure = error is PostgresConnectionEnded
                ? .ended(location: pool.location, sql: sql) : .server(location: pool.location, error: error, sql: sql)
            if connection.isClosed || failure.endsConnection {
                isBroken.store(true, ordering: .relaxed)
                let harmless = sql == "BEGIN" || sql.hasPrefix("SELECT ")
                if first && isReused && harmless { endedUnanswered.store(true, ordering: .relaxed) }
            }
            return failure
        }
    }

    /// Traces a statement that ran, as the SQLite store's are: its time, its SQL, its values and its rows.
    private func trace(_ sql: String, _ binds: StatementBindings, since start: ContinuousClock.Instant, rows: Int) {
        guard let shown = binds.shown else { return }
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let values = shown.isEmpty ? "" : " [\(shown.joined(separator: ", "))]"
        ObjectGraphLogging.trace(String(format: "SQL %.3f ms: ", milliseconds) + sql + values + " (\(rows) row\(rows == 1 ? "" : "s"))")
    }

    /// Runs `sql`, decoding each row with `decode` on the event loop as it arrives and handing the decoded values to
    /// `each` on the caller's thread meanwhile: receiving, decoding and what the caller does with the rows (a
    /// context making objects) overlap. Waits at most the query timeout in all; when `each` throws, the connection
    /// is closed (the server may still be sending) and the error rethrown.
    func stream<T: Sendable>(
        _ sql: String, _ binds: StatementBindings, decode: @escaping @Sendable (PostgresRow) throws -> T, each: (T) throws -> Void
    ) throws {
        let first = try starting(sql)
        let buffer = RowStream<T>()
        let future = connection.query(PostgresQuery(unsafeSQL: sql, binds: binds.bindings), logger: PostgresStore.sqlLogger) { row in
            buffer.append(try decode(row))
        }
        future.whenComplete { result in buffer.finish(result.map { _ in () }) }
        var watch = CloseWatch(connection: connection, deadline: .now() + pool.configuration.queryTimeout.seconds)
        let start = ContinuousClock.now
        var delivered = 0
        while true {
            let values: [T], outcome: Result<Void, any Error>?
            do {
                (values, outcome) = try buffer.take(&watch)
            } catch {
                isBroken.store(true, ordering: .relaxed)
                connection.closeSoon()
                throw failure(error, sql: sql, first: first && delivered == 0)
            }
            do {
                for value in values { try each(value) }
                delivered += values.count
            } catch {
                isBroken.store(true, ordering: .relaxed)
                connection.closeSoon()
                throw error
            }
            guard let outcome else { continue }
            switch outcome {
            case .success:
                trace(sql, binds, since: start, rows: delivered)
                return
            case .failure(let error):
                throw failure(error, sql: sql, first: first && delivered == 0)
            }
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws. Inside a transaction
    /// already open on this session (a migration's, whose stages save through the same session), `body` runs in a
    /// savepoint instead: released when it returns, rolled back to when it throws, and committed with the outer one.
    ///
    /// `learningOutcome`: the transaction writes, and when its COMMIT's answer is lost the store asks the server
    /// what became of it (by the transaction's ID, read before the COMMIT) instead of guessing: committed, the call
    /// returns as if the answer had come; rolled back, the failure is thrown; not known in time,
    /// `ObjectGraphError.saveOutcomeUnknown` names the transaction.
    func transaction<T>(learningOutcome: Bool = false, _ body: () throws -> T) throws -> T {
        let depth = transactionDepth.add(1, ordering: .relaxed).newValue
        defer { transactionDepth.subtract(1, ordering: .relaxed) }
        let savepoint = "og_savepoint_\(depth)"
        try query(depth == 1 ? "BEGIN" : "SAVEPOINT \(savepoint)")
        let result: T
        var transactionID: String?
        do {
            result = try body()
            if depth == 1 && learningOutcome {
                transactionID = try query("SELECT pg_current_xact_id()::TEXT").first?.decode(String.self)
            }
        } catch {
            if !connection.isClosed { _ = try? query(depth == 1 ? "ROLLBACK" : "ROLLBACK TO SAVEPOINT \(savepoint)") }
            throw error
        }
        do {
            try query(depth == 1 ? "COMMIT" : "RELEASE SAVEPOINT \(savepoint)")
        } catch let failure as PostgresErrors.Failure {
            // The server answered (a deferred constraint, a serialization failure): it rolled back.
            guard let transactionID, isBroken.load(ordering: .relaxed) else {
                if !connection.isClosed && depth > 1 { _ = try? query("ROLLBACK TO SAVEPOINT \(savepoint)") }
                throw failure
            }
            try pool.settle(transactionID, lostCommit: failure)
        }
        return result
    }
}

extension PostgresConnection {
    /// Closes the connection without waiting for it to be closed. The connection is kept until it is: postgres-nio
    /// requires a connection to be closed before it is released.
    ///
    /// A connection already closed is left alone: its event loop may have shut down with the store's pool (a
    /// listener outliving its store), and a close scheduled there would never complete, which SwiftNIO reports by
    /// stopping the process.
    func closeSoon() {
        guard !isClosed else { return }
        let closed: EventLoopFuture<Void> = close()
        closed.whenComplete { _ in withExtendedLifetime(self) {} }
    }
}

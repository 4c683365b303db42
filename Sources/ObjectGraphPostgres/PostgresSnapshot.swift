import Foundation
import ObjectGraph

/// The database at one moment, for contexts pinned to a query generation: a connection of its own, outside the
/// pool, in a repeatable-read transaction whose first statement took the snapshot every later read sees.
final class PostgresSnapshot: StoreSnapshot {
    private let session: PostgresSession
    /// Contexts sharing a token read one at a time, as a session serves one caller.
    private let inUse = NSLock()

    init(pool: PostgresConnectionPool) throws {
        let connection = try pool.connect()
        session = PostgresSession(connection: connection, pool: pool)
        do {
            try session.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try session.query("SELECT 1")
        } catch {
            connection.closeSoon()
            throw error
        }
    }

    func reading<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        inUse.lock()
        defer { inUse.unlock() }
        return try body(session)
    }

    func close() {
        inUse.lock()
        defer { inUse.unlock() }
        if !session.connection.isClosed { _ = try? session.query("ROLLBACK") }
        session.connection.closeSoon()
    }
}

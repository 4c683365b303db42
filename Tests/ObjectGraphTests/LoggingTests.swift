import Foundation
import Logging
import Synchronization
import Testing
@testable import ObjectGraph
#if OBJECTGRAPH_POSTGRES
import ObjectGraphPostgres
#endif

/// Every statement is traced with its bound values and time at debug level, each fetch with its rows, each save and
/// merge; at info, the level a library's user runs at by default, nothing; `OBJECTGRAPH_SQL_DEBUG=1` prints the
/// trace to standard error with no code.
@Suite(.serialized) struct LoggingTests {
    /// A log handler that keeps what it is given.
    struct Capture: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.lines.withLock { $0.append("\(event.level) \(event.message)") } }
    }

    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
    }

    /// Makes the process's logger a capture at `level`; returns what it hears, and how to put the logger back.
    static func capture(_ level: Logger.Level) -> (lines: Lines, restore: () -> Void) {
        let captured = Lines()
        let previous = ObjectGraphLogging.logger
        ObjectGraphLogging.logger = Logger(label: ObjectGraphLogging.label) { _ in
            var handler = Capture(lines: captured)
            handler.logLevel = level
            return handler
        }
        return (captured, { ObjectGraphLogging.logger = previous })
    }

    @Test func aDebugLoggerSeesEachStatementWithItsValuesAndEachFetchsRows() async throws {
        let (captured, restore) = Self.capture(.debug)
        defer { restore() }
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL))
        try await context.perform { ctx in
            try seedLibrary(ctx)
            _ = try ctx.fetch(try FetchRequest(entityName: "Book", format: "pages > %d", argumentArray: [500]))
        }
        let lines = captured.all
        #expect(lines.contains { $0.hasPrefix("debug SQL") && $0.contains("SELECT") && $0.contains("500") }, "\(lines.suffix(5))")
        #expect(lines.contains { $0 == "debug fetched 3 rows of Book" }, "\(lines.filter { $0.contains("fetched") })")
        #expect(lines.contains { $0.hasPrefix("debug saved 14 inserted, 0 updated, 0 deleted objects to \(folder.storeURL.path)") }, "\(lines.filter { $0.contains("saved") })")
    }

    /// Saves, merges and fetches at swift-log's default level: a server's log, or the demo's progress bar, gets no line.
    @Test func anInfoLoggerHearsNothingFromRoutineWork() async throws {
        let (captured, restore) = Self.capture(.info)
        defer { restore() }
        let folder = try TemporaryFolder()
        let coordinator = try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL)
        let writer = ObjectContext(coordinator: coordinator)
        let reader = ObjectContext(coordinator: coordinator)
        let notification = try await writer.perform { ctx in
            try seedLibrary(ctx)
            try ctx.fetch(FetchRequest(entityName: "Book"))[0].setValue(Int64(1), forKey: "pages")
            return try #require(try ctx.saveAndNotification())
        }
        await reader.mergeChanges(fromContextDidSave: notification)
        _ = try await reader.perform { ctx in try ctx.fetch(FetchRequest(entityName: "Book")).count }
        _ = try coordinator.execute(BatchDeleteRequest(entityName: "Tag"))
        // The logger is the process's: suites running meanwhile may report their own stores' failures through it.
        let heard = captured.all.filter { !$0.contains("postgres://") }
        #expect(heard.isEmpty, "\(heard)")
    }

    @Test func theEnvironmentVariablePrintsTheTraceToStandardError() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            setenv("OBJECTGRAPH_SQL_DEBUG", "1", 1)
            let folder = try TemporaryFolder()
            let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL))
            try await context.perform { ctx in
                _ = try ctx.fetch(try FetchRequest(entityName: "Tag", format: "label == %@", argumentArray: ["war"]))
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("SQL ") && output.contains("'war'"), "\(output.suffix(400))")
        #expect(output.contains("fetched 0 rows of Tag"), "\(output.suffix(400))")
    }

    #if OBJECTGRAPH_POSTGRES
    /// The PostgreSQL store traces its statements as the SQLite store does: the SQL, the bound values, the time and
    /// the rows; never the password of the server's URL.
    @Test func aDebugLoggerSeesThePostgreSQLStoresStatementsToo() async throws {
        let (captured, restore) = Self.capture(.debug)
        defer { restore() }
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.postgres.coordinator(try Fixtures.model(), folder)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try seedLibrary(ctx)
            _ = try ctx.fetch(try FetchRequest(entityName: "Book", format: "pages > %d", argumentArray: [4321]))
        }
        let lines = captured.all
        #expect(lines.contains { $0.hasPrefix("debug SQL") && $0.contains("INSERT") && $0.contains("\"") }, "\(lines.suffix(5))")
        #expect(lines.contains { $0.hasPrefix("debug SQL") && $0.contains("SELECT") && $0.contains("4321") && $0.hasSuffix("rows)") }, "\(lines.suffix(5))")
        if let password = try PostgresStoreConfiguration(url: try TestPostgres.url()).password {
            #expect(!lines.contains { $0.contains(password) })
        }
    }
    #endif
}

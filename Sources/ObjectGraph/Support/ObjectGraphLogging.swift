import Foundation
import GRDB
import Logging
import PredicateFormat

/// Where ObjectGraph logs, through swift-log: every SQL statement with its bound arguments and duration, each
/// fetch's row count, each save, merge, refused save and batch request, all at debug level. Routine work is not an
/// operator's news, so at swift-log's default level (info) the library prints nothing; an error reaches the app as a
/// thrown error.
///
/// Choose the level as for any swift-log library, when the app starts:
///
/// ```swift
/// LoggingSystem.bootstrap { label in
///     var handler = StreamLogHandler.standardError(label: label)
///     handler.logLevel = label == ObjectGraphLogging.label ? .debug : .info
///     return handler
/// }
/// ```
///
/// Or, with no code, run with `OBJECTGRAPH_SQL_DEBUG=1` in the environment, as Core Data's `SQLDebug` launch
/// argument: the SQL trace goes to standard error.
public enum ObjectGraphLogging {
    /// The label of ObjectGraph's logger.
    public static let label = "ObjectGraph"

    private static let current = Protected(Logger(label: label))

    /// The logger every store and context logs through; set it to log elsewhere or at another level (a store opened
    /// afterwards traces its SQL when the new logger keeps debug messages).
    public static var logger: Logger {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Whether `OBJECTGRAPH_SQL_DEBUG=1` asks for the SQL trace on standard error.
    public static let tracesSQLToStandardError = ProcessInfo.processInfo.environment["OBJECTGRAPH_SQL_DEBUG"] == "1"

    /// Whether statements are traced: the environment asks for it, or the logger keeps debug messages. Decided
    /// when a store opens, so that an untraced store pays nothing per statement.
    package static var tracesSQL: Bool { tracesSQLToStandardError || logger.logLevel <= .debug }

    /// Traces every statement `db` runs, with its arguments and duration.
    static func traceStatements(of db: Database) {
        db.trace(options: .profile) { event in
            guard case let .profile(statement, duration) = event else { return }
            trace(String(format: "SQL %.3f ms: %@", duration * 1000, statement.expandedSQL))
        }
    }

    /// Reports rows a fetch read, at debug level (statements report their time, not their rows).
    static func fetched(_ count: Int, of entity: String) {
        guard tracesSQL else { return }
        trace("fetched \(count) row\(count == 1 ? "" : "s") of \(entity)")
    }

    /// One line of the SQL trace: to standard error with `OBJECTGRAPH_SQL_DEBUG=1`, and to the logger at debug level.
    package static func trace(_ line: String) {
        if tracesSQLToStandardError { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        logger.debug("\(line)")
    }
}

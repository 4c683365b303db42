import ObjectGraph
import PostgresNIO

/// What went wrong with a statement, turned into the store's errors at its edge.
enum PostgresErrors {
    enum Failure: Error {
        /// The server did not answer the statement in time; its connection was closed.
        case timedOut(location: String, seconds: Duration, sql: String)
        /// The server refused the statement, or the connection failed under it.
        case server(location: String, error: any Error, sql: String)
        /// The connection was closed before the statement was answered (found closed when it was sent, or closed
        /// while it waited).
        case ended(location: String, sql: String)

        /// Whether the failure means the connection is gone: closed by the server (a restart, an administrator,
        /// a crash: SQLSTATE class 57P) or cut.
        var endsConnection: Bool {
            switch self {
            case .timedOut, .ended: return true
            case .server(_, let error as PSQLError, _):
                if let state = error.serverInfo?[.sqlState] { return state.hasPrefix("57P") }
                return [.serverClosedConnection, .uncleanShutdown, .clientClosedConnection].contains(error.code)
            case .server: return false
            }
        }

        /// The SQLSTATE the server gave, when it gave one (`23505` for a broken uniqueness constraint).
        var sqlState: String? {
            guard case .server(_, let error as PSQLError, _) = self else { return nil }
            return error.serverInfo?[.sqlState]
        }

        /// The constraint the statement broke, when the server named one.
        var constraintName: String? {
            guard case .server(_, let error as PSQLError, _) = self else { return nil }
            return error.serverInfo?[.constraintName]
        }

        /// The server's message (and detail) or the client's, without the statement.
        var message: String {
            switch self {
            case .timedOut(_, let seconds, _): "the server did not answer within \(seconds); the connection was closed"
            case .server(_, let error, _): PostgresErrors.describe(error)
            case .ended: PostgresErrors.said(.serverClosedConnection)
            }
        }

        /// The message, and the statement it came from.
        var reason: String {
            switch self {
            case .timedOut(_, _, let sql), .server(_, _, let sql), .ended(_, let sql): "\(message) (while running \(sql.prefix(300)))"
            }
        }
    }

    /// A readable account of a postgres-nio error: the server's message, detail and SQLSTATE when it sent them,
    /// else the client's error code (its `description` withholds everything, lest it leak data into logs). `host`:
    /// the server's, named when its TLS certificate does not name it.
    static func describe(_ error: any Error, host: String? = nil) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let underlying = error.underlying, let refusal = tlsRefusal(underlying, host: host) { return refusal }
        if let info = error.serverInfo, let message = info[.message] {
            var text = message
            if let detail = info[.detail] { text += ": \(detail)" }
            if let state = info[.sqlState] { text += " (SQLSTATE \(state))" }
            return text
        }
        var text = said(error.code)
        if let underlying = error.underlying { text += " (\(describe(underlying)))" }
        return text
    }

    /// What a failed TLS handshake means for the one who configures the connection, when `error` is one.
    static func tlsRefusal(_ error: any Error, host: String?) -> String? {
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return "the server's TLS certificate does not name the host \(host ?? "connected to"): connect by a name the certificate lists"
        }
        if case NIOSSLError.handshakeFailed(let reason) = error, "\(reason)".contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's TLS certificate is not signed by a trusted authority: give the authority's PEM file as "
                + "trustedCertificatesFile (sslrootcert= in the URL)"
        }
        return nil
    }

    /// What a client-side error code means, in the words an operator acts on (postgres-nio's own description of an
    /// error is a fixed text that says nothing of it).
    static func said(_ code: PSQLError.Code) -> String {
        switch code {
        case .serverClosedConnection: "the server closed the connection (it restarted, or an administrator ended the session)"
        case .clientClosedConnection: "the connection was closed on this side before the statement finished"
        case .uncleanShutdown: "the connection was cut without the server closing it (a network failure or a killed server)"
        case .connectionError: "the server could not be reached (refused, unreachable or timed out)"
        case .sslUnsupported: "the server does not offer TLS; turn TLS on in the server's configuration (ssl = on), or connect without it (sslmode=disable)"
        case .failedToAddSSLHandler: "TLS could not be set up on the connection"
        case .receivedUnencryptedDataAfterSSLRequest: "the server answered the TLS request without TLS"
        case .unsupportedAuthMechanism: "the server asks for an authentication method this client does not support"
        case .authMechanismRequiresPassword: "the server asks for a password, and the URL gives none"
        case .saslError: "the server refused the password (SCRAM authentication failed)"
        case .queryCancelled: "the statement was cancelled"
        case .tooManyParameters: "the statement binds more values than PostgreSQL allows (65,535)"
        case .poolClosed: "the connection pool is closed"
        case .listenFailed: "LISTEN failed"
        case .messageDecodingFailure, .unexpectedBackendMessage, .invalidCommandTag: "the server sent a message this client could not read (\(code))"
        default: "\(code)"
        }
    }

    /// Runs a read, reporting failures as `ObjectGraphError.storeReadFailed(path:reason:)`.
    static func reading<T>(_ location: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as Failure {
            throw ObjectGraphError.storeReadFailed(path: location, reason: failure.reason)
        }
    }

    /// Runs a write, reporting failures as `ObjectGraphError.storeWriteFailed(path:reason:)`: the transaction
    /// was rolled back (by the store, or by the server when the connection went), so nothing of it was written.
    static func writing<T>(_ location: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as Failure {
            throw ObjectGraphError.storeWriteFailed(path: location, reason: failure.reason + "; nothing of it was written")
        }
    }
}

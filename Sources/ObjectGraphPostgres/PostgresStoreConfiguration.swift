import Foundation
import ObjectGraph
import PostgresNIO

/// Where a PostgreSQL store lives and how long its calls may take.
///
/// ```swift
/// let configuration = try PostgresStoreConfiguration(url: "postgres://app:secret@db.local:5432/books")
/// let store = try PostgresStore(configuration: configuration, model: model)
/// ```
public struct PostgresStoreConfiguration: Sendable {
    /// Whether the connection is encrypted.
    public enum TLS: Sendable, Hashable {
        /// Plain TCP (a server on loopback or a private network).
        case disable
        /// TLS, the server's certificate verified against the trusted authorities (the system's, or
        /// ``PostgresStoreConfiguration/trustedCertificatesFile``) and its host name checked; the connection fails
        /// without it. libpq calls this `verify-full`; its `require`, which trusts any certificate, is not offered.
        case require
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The role to connect as.
    public var username: String
    /// The role's password, when the server asks for one.
    public var password: String?
    /// The database holding the store.
    public var database: String
    /// Whether to encrypt the connection.
    public var tls: TLS
    /// A PEM file of the certificate authorities that sign the server's certificate, trusted instead of the
    /// system's (libpq's `sslrootcert`): a company's own authority, or a cloud database's. Read when the store
    /// connects; a file that cannot be read is named in the error.
    ///
    /// ```swift
    /// let configuration = try PostgresStoreConfiguration(
    ///     url: "postgres://app@db.internal/books?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem")
    /// ```
    public var trustedCertificatesFile: String?
    /// How long connecting may take before the store reports the server unreachable.
    public var connectTimeout: Duration = .seconds(10)
    /// How long one statement may take, waiting included, before the store gives up on it, closes its connection and
    /// throws: a call on the main queue never hangs on a slow or dead server for longer than this.
    public var queryTimeout: Duration = .seconds(30)
    /// How many connections the store keeps open at most; a call waits for a free one.
    public var maximumConnections: Int = 4

    /// Describes a server.
    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String, tls: TLS = .disable) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Reads a URL of the form `postgres://user:password@host:port/database`, with `?sslmode=require` (or
    /// `verify-full`, the same here) for TLS and `&sslrootcert=/path/ca.pem` for the authorities to trust.
    /// The user, password and database are percent-decoded once, as libpq decodes them: a `%` in a password is
    /// written `%25`.
    ///
    /// - Throws: `ObjectGraphError.storeUnavailable(path:reason:)` naming what is missing or wrong in the URL.
    public init(url text: String) throws {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? "") else {
            throw ObjectGraphError.storeUnavailable(path: text, reason: "not a PostgreSQL URL; write postgres://user:password@host:port/database")
        }
        guard let host = url.host, !host.isEmpty else {
            throw ObjectGraphError.storeUnavailable(path: text, reason: "the URL names no host")
        }
        guard let user = url.user, !user.isEmpty else {
            throw ObjectGraphError.storeUnavailable(path: text, reason: "the URL names no user (postgres://user@\(host)/database)")
        }
        let database = String(url.path.drop { $0 == "/" })
        guard !database.isEmpty else {
            throw ObjectGraphError.storeUnavailable(path: text, reason: "the URL names no database (postgres://\(user)@\(host)/database)")
        }
        let sslMode = url.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
        guard ["disable", "require", "verify-full"].contains(sslMode) else {
            throw ObjectGraphError.storeUnavailable(
                path: text, reason: "sslmode '\(sslMode)' is not supported; use disable, or require (the certificate and host name verified, as verify-full)")
        }
        // URLComponents hands the user, password and path back decoded already.
        self.init(host: host, port: url.port ?? 5432, username: user, password: url.password, database: database, tls: sslMode == "disable" ? .disable : .require)
        trustedCertificatesFile = url.queryItems?.first { $0.name == "sslrootcert" }?.value
    }

    /// The store's location as errors name it: the URL without the password.
    public var location: String { "postgres://\(username)@\(host):\(port)/\(database)" }

    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        switch self.tls {
        case .disable: tls = .disable
        case .require:
            var settings = TLSConfiguration.makeClientConfiguration()
            if let file = trustedCertificatesFile {
                do {
                    settings.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
                } catch {
                    throw ObjectGraphError.storeUnavailable(
                        path: location, reason: "the trusted certificates file \(file) cannot be read as PEM certificates (\(error))")
                }
            }
            do {
                tls = .require(try NIOSSLContext(configuration: settings))
            } catch {
                throw ObjectGraphError.storeUnavailable(path: location, reason: "TLS could not be set up: \(error)")
            }
        }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .nanoseconds(Int64(connectTimeout.components.seconds) * 1_000_000_000
            + Int64(connectTimeout.components.attoseconds / 1_000_000_000))
        return configuration
    }
}

/// A configuration's description, debug description and mirror leave the password out: printing or dumping one in a
/// log keeps the secret.
extension PostgresStoreConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "PostgresStoreConfiguration(\(location), password: \(password == nil ? "none" : "hidden"), tls: \(tls), "
            + (trustedCertificatesFile.map { "trustedCertificatesFile: \($0), " } ?? "")
            + "connectTimeout: \(connectTimeout), queryTimeout: \(queryTimeout), maximumConnections: \(maximumConnections))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: [
            "host": host, "port": port, "username": username, "password": password == nil ? "none" : "hidden", "database": database,
            "tls": tls, "trustedCertificatesFile": trustedCertificatesFile as Any, "connectTimeout": connectTimeout, "queryTimeout": queryTimeout, "maximumConnections": maximumConnections,
        ], displayStyle: .struct)
    }
}

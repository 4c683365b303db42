import Foundation
import ObjectGraph
import ObjectGraphPostgres
import Testing

/// TLS against a server that accepts nothing else, whose certificate was signed for `localhost` by an authority of its
/// own (both made with openssl by `scripts/with-postgres.sh`): trusted, the store works; untrusted, or reached by
/// another host name, it is refused with a reason that says so.
@Suite struct PostgresTLSTests {
    static let model = try! Model(entities: [EntityDescription("Note", attributes: [.init("text", .string)])])

    /// The TLS server's URL (host `localhost`) and its authority's PEM file.
    static var server: (url: String, authority: String) {
        get throws {
            let environment = ProcessInfo.processInfo.environment
            guard let url = environment["OBJECTGRAPH_POSTGRES_TLS_URL"], let authority = environment["OBJECTGRAPH_POSTGRES_TLS_CA"] else {
                throw TLSServerMissing()
            }
            return (url, authority)
        }
    }

    struct TLSServerMissing: Error, CustomStringConvertible {
        var description: String {
            "OBJECTGRAPH_POSTGRES_TLS_URL and OBJECTGRAPH_POSTGRES_TLS_CA are not set: run the tests with `bash scripts/with-postgres.sh swift test`"
        }
    }

    /// Whether `error` is the store refusing to open, with a reason containing each of `words`.
    static func isRefusal(_ error: any Error, saying words: [String]) -> Bool {
        guard case ObjectGraphError.storeUnavailable(_, let reason) = error else { return false }
        return words.allSatisfy { reason.localizedCaseInsensitiveContains($0) }
    }

    @Test func aServerWhoseAuthorityIsTrustedIsUsedOverTLS() async throws {
        let (url, authority) = try Self.server
        let configuration = try PostgresStoreConfiguration(url: url + "?sslmode=verify-full&sslrootcert=\(authority)")
        #expect(configuration.tls == .require)
        #expect(configuration.trustedCertificatesFile == authority)
        let store = try PostgresStore(configuration: configuration, model: Self.model)
        let coordinator = PersistentStoreCoordinator(model: Self.model, store: store)
        let text = "sealed \(UUID())"
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.insert("Note").setValue(text, forKey: "text")
            try ctx.save()
        }
        let found = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.count(for: FetchRequest(entityName: "Note", format: "text == %@", text))
        }
        #expect(found == 1)
        // The server accepts TLS connections only: the store above used TLS.
        #expect {
            _ = try PostgresStore(configuration: try PostgresStoreConfiguration(url: url), model: Self.model)
        } throws: { error in
            guard case ObjectGraphError.storeUnavailable(_, let reason) = error else { return false }
            return reason.contains("no encryption")
        }
    }

    @Test func aCertificateFromAnAuthorityNotTrustedIsRefused() throws {
        let (url, _) = try Self.server
        // The system's authorities: none of them signed the test's certificate.
        let configuration = try PostgresStoreConfiguration(url: url + "?sslmode=require")
        #expect {
            _ = try PostgresStore(configuration: configuration, model: Self.model)
        } throws: { error in
            Self.isRefusal(error, saying: ["not signed by a trusted authority", "sslrootcert"])
        }
    }

    @Test func aServerReachedByAnotherHostNameIsRefused() throws {
        let (url, authority) = try Self.server
        // The certificate names `localhost` only.
        let configuration = try PostgresStoreConfiguration(
            url: url.replacingOccurrences(of: "@localhost:", with: "@127.0.0.1:") + "?sslmode=verify-full&sslrootcert=\(authority)")
        #expect(configuration.host == "127.0.0.1")
        #expect {
            _ = try PostgresStore(configuration: configuration, model: Self.model)
        } throws: { error in
            Self.isRefusal(error, saying: ["does not name the host 127.0.0.1"])
        }
    }

    @Test func aCertificatesFileThatCannotBeReadIsNamed() throws {
        let (url, _) = try Self.server
        let configuration = try PostgresStoreConfiguration(url: url + "?sslmode=require&sslrootcert=/nonexistent/ca.pem")
        #expect {
            _ = try PostgresStore(configuration: configuration, model: Self.model)
        } throws: { error in
            Self.isRefusal(error, saying: ["/nonexistent/ca.pem"])
        }
    }
}

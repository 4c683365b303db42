import Foundation
import ObjectGraph
import ObjectGraphPostgres
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A server that refuses, never answers, stalls or drops a connection: each is a clear error naming the server, in
/// bounded time, and a failed save writes nothing.
@Suite struct PostgresFailureTests {
    static var model: Model { get throws { try Model(entities: [EntityDescription("Entry", attributes: [.init("title", .string)])]) } }

    /// A TCP port that accepts connections (the kernel completes them) and never says a word.
    final class SilentServer: Sendable {
        let socket: Int32
        let port: Int

        init() throws {
            let handle = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(handle, $0, length) } }
            guard bound == 0, listen(handle, 8) == 0 else {
                close(handle)
                throw POSIXError(.EADDRINUSE)
            }
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(handle, $0, &length) } }
            socket = handle
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(socket) }
    }

    @Test func aServerThatNeverAnswersIsReportedWithinTheConnectTimeout() throws {
        let silent = try SilentServer()
        var configuration = PostgresStoreConfiguration(host: "127.0.0.1", port: silent.port, username: "app", database: "books")
        configuration.connectTimeout = .seconds(1)
        #expect {
            _ = try PostgresStore(configuration: configuration, model: try Self.model)
        } throws: { error in
            guard case ObjectGraphError.storeUnavailable(let path, _) = error else { return false }
            return path == "postgres://app@127.0.0.1:\(silent.port)/books"
        }
    }

    @Test func aRefusedConnectionNamesTheHost() throws {
        let port = try { let silent = try SilentServer(); return silent.port }()
        let configuration = PostgresStoreConfiguration(host: "127.0.0.1", port: port, username: "app", database: "books")
        #expect {
            _ = try PostgresStore(configuration: configuration, model: try Self.model)
        } throws: { error in
            guard case ObjectGraphError.storeUnavailable(let path, let reason) = error else { return false }
            return path.contains("127.0.0.1:\(port)/books") && !reason.isEmpty
        }
    }

    @Test func requiringTLSFromAServerWithoutItIsRefusedNamingTheServer() throws {
        var configuration = try PostgresStoreConfiguration(url: try TestServer.url + "?sslmode=require")
        configuration.connectTimeout = .seconds(5)
        #expect(configuration.tls == .require)
        #expect {
            _ = try PostgresStore(configuration: configuration, model: try Self.model)
        } throws: { error in
            guard case ObjectGraphError.storeUnavailable(let path, let reason) = error else { return false }
            return path == configuration.location && reason.contains("does not offer TLS") && reason.contains("sslmode=disable")
        }
    }

    /// The user, password and database are decoded once, as libpq does: `%2541` is `%41`, and `%25` a literal `%`.
    @Test func aURLIsPercentDecodedOnce() throws {
        let configuration = try PostgresStoreConfiguration(url: "postgres://us%40er:pa%2541ss%25@db.local:6543/bo%20oks")
        #expect(configuration.username == "us@er")
        #expect(configuration.password == "pa%41ss%")
        #expect(configuration.database == "bo oks")
        #expect(configuration.port == 6543)
    }

    /// Printing, debug-printing or dumping a configuration never shows its password.
    @Test func noDescriptionShowsThePassword() throws {
        let configuration = try PostgresStoreConfiguration(url: "postgres://app:s3cr3t-pw@db.local/books")
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [String(describing: configuration), String(reflecting: configuration), "\(configuration)", dumped] {
            #expect(!text.contains("s3cr3t-pw"), "\(text)")
            #expect(text.contains("db.local"))
        }
    }

    @Test func aBadURLSaysWhatIsMissing() {
        #expect(throws: ObjectGraphError.self) { try PostgresStoreConfiguration(url: "postgres://127.0.0.1/books") }
        #expect(throws: ObjectGraphError.self) { try PostgresStoreConfiguration(url: "postgres://app@127.0.0.1") }
        #expect(throws: ObjectGraphError.self) { try PostgresStoreConfiguration(url: "mysql://app@127.0.0.1/books") }
        #expect(throws: ObjectGraphError.self) { try PostgresStoreConfiguration(url: "postgres://app@127.0.0.1/books?sslmode=verify-full") }
    }

    @Test func aStoreOfAnotherModelIsRefusedNamingTheDatabase() async throws {
        let database = try await TestDatabase.make()
        _ = try PostgresStore(configuration: database.configuration, model: try Self.model)
        let other = try Model(entities: [EntityDescription("Entry", attributes: [.init("title", .string), .init("pages", .int64)])])
        #expect {
            _ = try PostgresStore(configuration: database.configuration, model: other)
        } throws: { error in
            guard case ObjectGraphError.modelMismatch(let path, _, _) = error else { return false }
            return path == database.configuration.location
        }
        await database.drop()
    }

    @MainActor
    @Test func aMainQueueFetchOnAStalledServerTimesOut() async throws {
        let database = try await TestDatabase.make()
        var configuration = database.configuration
        configuration.queryTimeout = .seconds(1)
        let store = try PostgresStore(configuration: configuration, model: try Self.model)
        let admin = try await AdminConnection.open(database.configuration)
        try await admin.query("BEGIN")
        try await admin.query("LOCK TABLE \"Entry\" IN ACCESS EXCLUSIVE MODE")
        #expect {
            _ = try store.fetch(StoreFetchRequest(entityName: "Entry"))
        } throws: { error in
            guard case ObjectGraphError.storeReadFailed(let path, let reason) = error else { return false }
            return path == configuration.location && reason.contains("did not answer within")
        }
        try await admin.query("ROLLBACK")
        // The store goes on with a new connection.
        #expect(try store.fetch(StoreFetchRequest(entityName: "Entry")).isEmpty)
        await admin.close()
        await database.drop()
    }

    @Test func aConnectionDroppedMidSaveWritesNothing() async throws {
        let database = try await TestDatabase.make()
        let model = try Self.model
        let coordinator = PersistentStoreCoordinator(model: model, store: try PostgresStore(configuration: database.configuration, model: model))
        let admin = try await AdminConnection.open(database.configuration)
        try await admin.query("BEGIN")
        try await admin.query("LOCK TABLE \"Entry\" IN ACCESS EXCLUSIVE MODE")
        let save = Task {
            try await ObjectContext(coordinator: coordinator).perform { ctx in
                for index in 0..<3 { try ctx.insert("Entry").setValue("Entry \(index)", forKey: "title") }
                try ctx.save()
            }
        }
        // Wait for the save to block on the lock, then end its session as a lost connection would.
        let killer = try await AdminConnection.open(database.configuration)
        var ended: [String?] = []
        while ended.isEmpty {
            ended = try await killer.query("""
                SELECT pg_terminate_backend(pid)::TEXT FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()
                """)
            await Task.yield()
        }
        await #expect {
            try await save.value
        } throws: { error in
            guard case ObjectGraphError.storeWriteFailed(let path, let reason) = error else { return false }
            // What happened, in words: not postgres-nio's fixed text that withholds it.
            return path == database.configuration.location && reason.contains("nothing of it was written")
                && reason.contains("terminating connection") && !reason.contains("Generic description")
        }
        try await admin.query("ROLLBACK")
        #expect(try coordinator.store.count(StoreFetchRequest(entityName: "Entry")) == 0)
        await admin.close()
        await killer.close()
        await database.drop()
    }
}

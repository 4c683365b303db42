import ExampleStores
import Foundation
import ObjectGraph
import ObjectGraphPostgres
import PostgresNIO
import Testing

/// The server the tests use: `OBJECTGRAPH_POSTGRES_URL`, which `scripts/with-postgres.sh` sets (and `scripts/test.sh`
/// runs the tests under it). Each test gets a database of its own, dropped at the end.
enum TestServer {
    static var url: String {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["OBJECTGRAPH_POSTGRES_URL"] else {
                throw TestServerMissing()
            }
            return url
        }
    }

    struct TestServerMissing: Error, CustomStringConvertible {
        var description: String {
            "OBJECTGRAPH_POSTGRES_URL is not set: run the tests with `bash scripts/with-postgres.sh swift test`, or point it at a server"
        }
    }

    /// Runs one statement on the server's own database (to create and drop the tests' databases).
    static func administer(_ sql: String) async throws {
        let configuration = try PostgresStoreConfiguration(url: url)
        let connection = try await PostgresConnection.connect(
            configuration: PostgresConnection.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username, password: configuration.password,
                database: configuration.database, tls: .disable),
            id: 1, logger: Logger(label: "tests"))
        defer { Task { try? await connection.close() } }
        _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "tests"))
    }
}

/// A database of its own for one test.
final class TestDatabase: Sendable {
    let name: String
    let configuration: PostgresStoreConfiguration

    private init(name: String, configuration: PostgresStoreConfiguration) {
        self.name = name
        self.configuration = configuration
    }

    static func make() async throws -> TestDatabase {
        let name = "og_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await TestServer.administer("CREATE DATABASE \(name)")
        var configuration = try PostgresStoreConfiguration(url: try TestServer.url)
        configuration.database = name
        return TestDatabase(name: name, configuration: configuration)
    }

    var url: String { configuration.location }

    func drop() async {
        try? await TestServer.administer("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

/// A small library: authors, books with tags (many-to-many) and ordered chapters (cascade), every attribute type.
enum Library {
    static let entities: [EntityDescription] = [
        EntityDescription(
            "Author", attributes: [.init("name", .string, isOptional: false)],
            relationships: [.init("books", destination: "Book", inverse: "author", isToMany: true, deleteRule: .cascade)]),
        EntityDescription(
            "Book",
            attributes: [
                .init("title", .string, isOptional: false, isIndexed: true), .init("pages", .int32), .init("price", .double),
                .init("published", .date), .init("isbn", .string), .init("inPrint", .bool), .init("cost", .decimal),
                .init("cover", .binary), .init("uuid", .uuid), .init("site", .uri), .init("weight", .float), .init("copies", .int64),
                .init("edition", .int16),
            ],
            relationships: [
                .init("author", destination: "Author", inverse: "books"),
                .init("tags", destination: "Tag", inverse: "books", isToMany: true),
                .init("chapters", destination: "Chapter", inverse: "book", isToMany: true, isOrdered: true, deleteRule: .cascade),
            ],
            uniquenessConstraints: [["isbn"]]),
        EntityDescription("Tag", attributes: [.init("label", .string)],
                          relationships: [.init("books", destination: "Book", inverse: "tags", isToMany: true)]),
        EntityDescription("Chapter", attributes: [.init("heading", .string)],
                          relationships: [.init("book", destination: "Book", inverse: "chapters", deleteRule: .nullify)]),
    ]

    static func model() throws -> Model { try Model(entities: entities) }
}

/// The stores every conformance test runs on: the three of the library, and an atomic store with a file format
/// written as a user writes one (``JSONStoreFile``, public API only).
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, memory, postgres, atomic
    var testDescription: String { rawValue }
    /// Whether the store records persistent history (Core Data: SQLite stores only; here every store but the atomic one).
    var recordsHistory: Bool { self != .atomic }
}

/// A coordinator on a fresh store of one kind, and what to remove afterwards.
final class TestStore: Sendable {
    let coordinator: PersistentStoreCoordinator
    let database: TestDatabase?
    let folder: URL?

    private init(coordinator: PersistentStoreCoordinator, database: TestDatabase?, folder: URL?) {
        (self.coordinator, self.database, self.folder) = (coordinator, database, folder)
    }

    static func make(_ kind: StoreKind, model: Model) async throws -> TestStore {
        switch kind {
        case .memory:
            return TestStore(coordinator: .inMemory(model: model, recordsHistory: true), database: nil, folder: nil)
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("og-conformance-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let coordinator = try PersistentStoreCoordinator(
                model: model, storeURL: folder.appendingPathComponent("store.sqlite"), options: StoreOptions(recordsHistory: true))
            return TestStore(coordinator: coordinator, database: nil, folder: folder)
        case .atomic:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("og-conformance-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = try AtomicStore(model: model, file: JSONStoreFile(url: folder.appendingPathComponent("store.json")))
            return TestStore(coordinator: PersistentStoreCoordinator(model: model, store: store), database: nil, folder: folder)
        case .postgres:
            let database = try await TestDatabase.make()
            let store = try PostgresStore(configuration: database.configuration, model: model)
            return TestStore(coordinator: PersistentStoreCoordinator(model: model, store: store), database: database, folder: nil)
        }
    }

    /// For a store kept in a file of its own format: the file, opened again, holds what the live store holds (every
    /// row, every list, the metadata).
    func expectFileHoldsWhatTheStoreHolds(model: Model) throws {
        guard let live = coordinator.store as? AtomicStore else { return }
        let reopened = try AtomicStore(model: model, file: live.file)
        #expect(reopened.identifier == live.identifier)
        #expect(try reopened.metadata() == live.metadata())
        for entity in model.entities where entity.description.parentName == nil {
            let rows = try live.fetch(StoreFetchRequest(entityName: entity.name))
            #expect(Set(try reopened.fetch(StoreFetchRequest(entityName: entity.name))) == Set(rows), "\(entity.name)")
            for relationship in model.entities.filter({ $0.rootName == entity.name }).flatMap(\.relationships) where relationship.isToMany {
                let owners = rows.map(\.objectID).filter { model.entityIfPresent($0.entityName)?.relationship(named: relationship.name) != nil }
                #expect(try reopened.relatedIDs(of: owners, relationship: relationship) == live.relatedIDs(of: owners, relationship: relationship),
                        "\(entity.name).\(relationship.name)")
            }
        }
    }

    func remove() async {
        await database?.drop()
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }
}

/// A connection of the test's own to a test database, for holding locks and ending other sessions.
final class AdminConnection: Sendable {
    let connection: PostgresConnection

    private init(connection: PostgresConnection) { self.connection = connection }

    static func open(_ configuration: PostgresStoreConfiguration) async throws -> AdminConnection {
        let connection = try await PostgresConnection.connect(
            configuration: PostgresConnection.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username, password: configuration.password,
                database: configuration.database, tls: .disable),
            id: 2, logger: Logger(label: "tests"))
        return AdminConnection(connection: connection)
    }

    /// Runs `sql` and returns the first column of each row as text.
    @discardableResult
    func query(_ sql: String) async throws -> [String?] {
        var values: [String?] = []
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "tests")) {
            values.append(try row.makeRandomAccess()[0].decode(String?.self))
        }
        return values
    }

    func close() async { try? await connection.close() }
}

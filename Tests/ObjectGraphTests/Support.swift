import Foundation
import Testing
@testable import ObjectGraph
#if OBJECTGRAPH_POSTGRES
import ObjectGraphPostgres
import PostgresNIO
#endif

/// A library model built at run time: authors, books (a sub-entity of Media), tags, chapters (ordered).
enum Fixtures {
    static let allTypes = EntityDescription(
        "Sample",
        attributes: [
            .init("string", .string), .init("bool", .bool), .init("int16", .int16), .init("int32", .int32),
            .init("int64", .int64), .init("double", .double), .init("float", .float), .init("decimal", .decimal),
            .init("date", .date), .init("data", .binary), .init("uuid", .uuid), .init("url", .uri),
            .init("codable", .codable(typeName: "Point")),
        ])

    static let entities: [EntityDescription] = [
        EntityDescription(
            "Author",
            attributes: [.init("name", .string, isOptional: false, minLength: 1, maxLength: 40)],
            relationships: [
                .init("books", destination: "Book", inverse: "author", isToMany: true, deleteRule: .cascade),
                .init("agent", destination: "Agent", inverse: "clients", deleteRule: .nullify),
                .init("profile", destination: "Profile", inverse: "author", deleteRule: .deny),
            ]),
        EntityDescription("Profile", attributes: [.init("bio", .string)],
                          relationships: [.init("author", destination: "Author", inverse: "profile")]),
        EntityDescription("Agent", attributes: [.init("name", .string)],
                          relationships: [.init("clients", destination: "Author", inverse: "agent", isToMany: true)]),
        EntityDescription("Media", attributes: [.init("title", .string, isOptional: false, isIndexed: true)], isAbstract: true),
        EntityDescription(
            "Book",
            attributes: [
                .init("pages", .int32, isOptional: false, defaultValue: .int(1), minValue: 1, maxValue: 5000),
                .init("isbn", .string, pattern: "[0-9]{3}-[0-9]{4}"),
            ],
            relationships: [
                .init("author", destination: "Author", inverse: "books"),
                .init("tags", destination: "Tag", inverse: "books", isToMany: true),
                .init("chapters", destination: "Chapter", inverse: "book", isToMany: true, isOrdered: true, deleteRule: .cascade),
            ],
            parent: "Media", uniquenessConstraints: [["isbn"]]),
        EntityDescription("Movie", attributes: [.init("minutes", .int64)], parent: "Media"),
        EntityDescription("Tag", attributes: [.init("label", .string)],
                          relationships: [.init("books", destination: "Book", inverse: "tags", isToMany: true)]),
        EntityDescription("Chapter", attributes: [.init("heading", .string)],
                          relationships: [.init("book", destination: "Book", inverse: "chapters")]),
        allTypes,
    ]

    static func model() throws -> Model { try Model(entities: entities) }
}

/// A folder of its own for each test, removed at the end, with the PostgreSQL database its store may use.
final class TemporaryFolder {
    let url: URL
    /// The test's database on the test server, once a PostgreSQL store was made for it; dropped at the end.
    var postgresDatabase: String?
    /// Databases of the test's further stores (``StoreKind/store(_:_:name:)``), by name; dropped at the end.
    var namedPostgresDatabases: [String: String] = [:]

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var storeURL: URL { url.appendingPathComponent("store.sqlite") }

    deinit {
        try? FileManager.default.removeItem(at: url)
        #if OBJECTGRAPH_POSTGRES
        for database in [postgresDatabase].compactMap({ $0 }) + namedPostgresDatabases.values {
            try? TestPostgres.administer("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
        }
        #endif
    }
}

/// Where a test's store lives: each behaviour test runs on every store (PostgreSQL where the build has it; the
/// ThreadSanitizer build leaves it out).
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, memory
    #if OBJECTGRAPH_POSTGRES
    case postgres
    #endif
    var testDescription: String { rawValue }

    func coordinator(_ model: Model, _ folder: TemporaryFolder) throws -> PersistentStoreCoordinator {
        switch self {
        case .sqlite: return try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        case .memory: return PersistentStoreCoordinator.inMemory(model: model)
        #if OBJECTGRAPH_POSTGRES
        case .postgres:
            let configuration = try folder.postgresDatabase.map { try TestPostgres.configuration($0) } ?? TestPostgres.newDatabase(for: folder)
            return PersistentStoreCoordinator(model: model, store: try PostgresStore(configuration: configuration, model: model))
        #endif
        }
    }

    /// A store of this kind named `name` in `folder` (a file, or a database of its own), reopened by a later call
    /// with the same name.
    func store(_ model: Model, _ folder: TemporaryFolder, name: String) throws -> any PersistentStore {
        switch self {
        case .sqlite: return try SQLiteStore(url: folder.url.appendingPathComponent("\(name).sqlite"), model: model)
        case .memory: return InMemoryStore(model: model)
        #if OBJECTGRAPH_POSTGRES
        case .postgres:
            let database = try folder.namedPostgresDatabases[name] ?? {
                let created = "og_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
                try TestPostgres.administer("CREATE DATABASE \(created)")
                folder.namedPostgresDatabases[name] = created
                return created
            }()
            return try PostgresStore(configuration: TestPostgres.configuration(database), model: model)
        #endif
        }
    }
}

#if OBJECTGRAPH_POSTGRES
/// The test server (`OBJECTGRAPH_POSTGRES_URL`, which scripts/test.sh sets) and a database of its own per test.
enum TestPostgres {
    static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["OBJECTGRAPH_POSTGRES_URL"] else {
            throw ObjectGraphError.storeUnavailable(path: "OBJECTGRAPH_POSTGRES_URL", reason: "not set: run the tests with scripts/test.sh")
        }
        return url
    }

    static func configuration(_ database: String) throws -> PostgresStoreConfiguration {
        var configuration = try PostgresStoreConfiguration(url: try url())
        configuration.database = database
        return configuration
    }

    /// Creates a database for `folder`'s test and returns where it is.
    static func newDatabase(for folder: TemporaryFolder) throws -> PostgresStoreConfiguration {
        let name = "og_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try administer("CREATE DATABASE \(name)")
        folder.postgresDatabase = name
        return try configuration(name)
    }

    /// Runs one statement on the server's own database, waiting for it (tests are not on an event loop).
    static func administer(_ sql: String) throws {
        let server = try PostgresStoreConfiguration(url: try url())
        let connection = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(),
            configuration: PostgresConnection.Configuration(
                host: server.host, port: server.port, username: server.username, password: server.password, database: server.database,
                tls: .disable),
            id: 1, logger: Logger(label: "tests")).wait()
        defer { _ = try? (connection.close() as EventLoopFuture<Void>).wait() }
        _ = try connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "tests")).wait()
    }
}
#endif

extension ObjectGraphError {
    /// The error's message, for checks that it names what a user must fix.
    var message: String { description }
}

/// The String values of `key` in `objects`, "-" where there is none: tests compare them in one line.
func stringValues(_ objects: [ManagedObject], _ key: String) throws -> [String] {
    try objects.map { object in
        guard case .string(let text) = try object.value(forKey: key) else { return "-" }
        return text
    }
}

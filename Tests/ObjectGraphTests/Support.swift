import Foundation
import Testing
@testable import ObjectGraph

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

/// A folder of its own for each test, removed at the end.
final class TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var storeURL: URL { url.appendingPathComponent("store.sqlite") }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Where a test's store lives: each behaviour test runs on both.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, memory
    var testDescription: String { rawValue }

    func coordinator(_ model: Model, _ folder: TemporaryFolder) throws -> PersistentStoreCoordinator {
        switch self {
        case .sqlite: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        case .memory: PersistentStoreCoordinator.inMemory(model: model)
        }
    }
}

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

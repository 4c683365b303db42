import Foundation

/// The versions of an app's model, oldest first, the last the current one: what lets a store made by an earlier
/// version open with the current one, migrated, and a store made by a later version be refused untouched.
///
/// ```swift
/// let versions = try SchemaVersions([Model([BookV1.self]), Model([BookV2.self]), Model([Book.self])])
/// let coordinator = try PersistentStoreCoordinator(versions: versions, storeURL: url)
/// let fromXcode = try SchemaVersions(contentsOf: URL(fileURLWithPath: "Library.xcdatamodeld"))
/// ```
public struct SchemaVersions: Sendable {
    /// Every version, oldest first.
    public let models: [Model]
    /// Where the current version sits in ``models``: versions after it are newer than the app.
    public let currentIndex: Int
    /// Code to run around steps of a migration (see ``MigrationStage``).
    public let stages: [MigrationStage]

    /// The current version: what the app works with.
    public var current: Model { models[currentIndex] }

    /// Versions oldest first; the last is the current one unless `current` names another (by index).
    ///
    /// - Throws: ``ObjectGraphError/invalidModel(entity:property:reason:)`` for no versions, or two with the same
    ///   version hash (a store could not tell them apart).
    public init(_ models: [Model], current: Int? = nil, stages: [MigrationStage] = []) throws {
        guard !models.isEmpty else { throw ObjectGraphError.invalidModel(entity: "(versions)", property: nil, reason: "there are no versions") }
        var seen: [String: Int] = [:]
        for (index, model) in models.enumerated() {
            if let earlier = seen[model.versionHash] {
                throw ObjectGraphError.invalidModel(
                    entity: "(versions)", property: nil, reason: "versions \(earlier + 1) and \(index + 1) are the same model (hash \(model.versionHash))")
            }
            seen[model.versionHash] = index
        }
        self.models = models
        self.currentIndex = current ?? models.count - 1
        if let stage = stages.first(where: { $0.from < 0 || $0.from + 1 >= models.count }) {
            throw ObjectGraphError.invalidModel(
                entity: "(versions)", property: nil, reason: "a stage runs from version \(stage.from + 1), which has no next version")
        }
        self.stages = stages
    }

    /// Every version of a `.xcdatamodeld`, ordered as Xcode names them ("Library", "Library 2", "Library 3"…), the
    /// current one named by `.xccurrentversion`.
    public init(contentsOf url: URL, classes: [any ManagedEntity.Type] = [], stages: [MigrationStage] = []) throws {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [])
            .filter { $0.hasSuffix(".xcdatamodel") }
            .sorted { Self.versionNumber($0) < Self.versionNumber($1) }
        guard !names.isEmpty else {
            throw ObjectGraphError.invalidModelFile(path: url.path, element: "versions", reason: "the bundle holds no .xcdatamodel version")
        }
        let currentName = try XcodeModelLoader.versionURL(url).lastPathComponent
        let models = try names.map { try Model(contentsOf: url.appendingPathComponent($0), classes: classes) }
        try self.init(models, current: names.firstIndex(of: currentName) ?? names.count - 1, stages: stages)
    }

    /// The number Xcode appends to a version's name ("Library 3" is 3; the first, unnumbered, is 1), then the name.
    private static func versionNumber(_ name: String) -> (Int, String) {
        let base = name.dropLast(".xcdatamodel".count)
        let digits = base.reversed().prefix { $0.isNumber }
        return (digits.isEmpty ? 1 : Int(String(digits.reversed())) ?? 1, name)
    }

    /// The position of the version whose hash is `hash`, if any.
    package func index(ofHash hash: String) -> Int? { models.firstIndex { $0.versionHash == hash } }
}

import Foundation
import PredicateFormat

/// A fetch against any store file with the model the store keeps, no app code needed: what `objectgraph query`
/// runs. Relationships read as object IDs (a to-many as the list of its members').
///
/// ```swift
/// let result = try StoreQuery(contentsOf: URL(fileURLWithPath: "books.sqlite"), entity: "Book",
///                             predicate: "pages > 300", sortedBy: ["-pages"], limit: 10)
/// print(result.table)
/// ```
///
/// The store is opened as an app opens it (its log may be folded into the file when it closes); nothing is
/// written. A store of an older format, which opening would upgrade, is refused.
public struct StoreQuery: Sendable {
    /// One column's value for one object.
    public enum Value: Sendable, Hashable {
        /// An attribute's value.
        case attribute(AttributeValue)
        /// A to-one relationship's destination, or nil.
        case object(ObjectID?)
        /// A to-many relationship's members, in order for an ordered one.
        case objects([ObjectID])
    }

    /// The properties shown, in order: the entity's stored attributes, then its relationships.
    public let columns: [String]
    /// Each object: its ID, then a value per column.
    public let rows: [(objectID: ObjectID, values: [Value])]
    /// The number of objects that match, before the limit and offset.
    public let matchCount: Int

    /// Runs `predicate` (the format language; nil for every object) against `entity` in the store at `url`, opened
    /// read-only (see ``StoreOptions/isReadOnly``): nothing is written to the file or beside it.
    ///
    /// - Throws: ``ObjectGraphError/storeUnavailable(path:reason:)`` for a folder or a file that is not a store (or
    ///   one of an older format), ``ObjectGraphError/invalidFetch(entity:reason:)`` for an entity the store lacks
    ///   (listing those it has), `FormatPredicateError` for a malformed predicate,
    ///   ``ObjectGraphError/invalidPredicate(entity:error:)`` for one that cannot run.
    public init(
        contentsOf url: URL, entity entityName: String, predicate format: String? = nil, sortedBy sortKeys: [String] = [],
        limit: Int? = nil, offset: Int = 0
    ) throws {
        let summary = try StoreSummary(contentsOf: url)
        guard summary.formatVersion == SQLiteStore.formatVersion else {
            throw ObjectGraphError.storeUnavailable(
                path: url.path, reason: "it is a format \(summary.formatVersion) store; open it once with the app (which upgrades it) before querying it")
        }
        try self.init(model: summary.model, entity: entityName, predicate: format, sortedBy: sortKeys, limit: limit, offset: offset) {
            try PersistentStoreCoordinator(model: $0, storeURL: url, options: StoreOptions(isReadOnly: true))
        }
    }

    /// Runs `predicate` against `entity` with `model`, the model a store keeps, in the store `coordinator` opens
    /// with it: what each kind of store's query shares.
    package init(
        model: Model, entity entityName: String, predicate format: String?, sortedBy sortKeys: [String], limit: Int?, offset: Int,
        coordinator: (Model) throws -> PersistentStoreCoordinator
    ) throws {
        guard let entity = model.entityIfPresent(entityName) else {
            throw ObjectGraphError.invalidFetch(
                entity: entityName,
                reason: "the store has no such entity; its entities are \(model.entities.map(\.name).sorted().joined(separator: ", "))")
        }
        var fetch = FetchRequest(entityName: entity.name, predicate: try format.map { try FormatPredicate(format: $0, argumentArray: []) })
        fetch.sortKeys = sortKeys.map { SortKey($0) }
        let request = fetch
        let columns = entity.storedAttributes.map { entity.attributes[$0].name } + entity.relationships.map(\.name)
        let context = ObjectContext(coordinator: try coordinator(model), name: "query")
        let (count, rows) = try context.performAndWait { ctx -> (Int, [(ObjectID, [Value])]) in
            let count = try ctx.count(for: request)
            var sliced = request
            sliced.fetchOffset = offset
            sliced.fetchLimit = limit
            var rows: [(ObjectID, [Value])] = []
            for object in try ctx.fetch(sliced) {
                var values: [Value] = []
                for name in columns {
                    if object.entity.attributeIndex[name] != nil {
                        values.append(.attribute(try object.value(forKey: name)))
                    } else if object.entity.relationship(named: name)?.isToMany == true {
                        values.append(.objects(try object.objects(forKey: name).map(\.objectID)))
                    } else {
                        values.append(.object(try object.object(forKey: name)?.objectID))
                    }
                }
                rows.append((object.objectID, values))
            }
            return (count, rows)
        }
        self.columns = columns
        self.rows = rows
        matchCount = count
    }

    /// The objects as an aligned text table, a header first.
    public var table: String {
        let header = ["id"] + columns
        let cells = rows.map { [$0.objectID.description] + $0.values.map(Self.text) }
        let widths = header.indices.map { column in ([header] + cells).map { $0[column].count }.max() ?? 0 }
        func line(_ fields: [String]) -> String {
            zip(fields, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        return ([line(header)] + cells.map(line)).joined(separator: "\n")
    }

    /// The objects as JSON lines, one object per line: `{"id": "Book/p1", "title": "Dune", ...}`.
    public var jsonLines: String {
        rows.map { row in
            var object: [String: Any] = ["id": row.objectID.description]
            for (name, value) in zip(columns, row.values) { object[name] = Self.json(value) }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self)
        }.joined(separator: "\n")
    }

    /// A value as a table cell: a to-many shows its first members and how many there are.
    static func text(_ value: Value) -> String {
        switch value {
        case .attribute(let value): text(value)
        case .object(let id): id?.description ?? "nil"
        case .objects(let ids) where ids.count > 3: ids.prefix(3).map(\.description).joined(separator: " ") + " … (\(ids.count))"
        case .objects(let ids): ids.isEmpty ? "none" : ids.map(\.description).joined(separator: " ")
        }
    }

    static func text(_ value: AttributeValue) -> String {
        switch value {
        case .null: "nil"
        case .string(let text): text
        case .date(let date): ISO8601DateFormatter().string(from: date)
        case .data(let data): data.base64EncodedString()
        case .objectID(let id): id.description
        default: value.description
        }
    }

    static func json(_ value: Value) -> Any {
        switch value {
        case .attribute(.null), .object(nil): NSNull()
        case .attribute(.bool(let v)): v
        case .attribute(.int(let v)): v
        case .attribute(.double(let v)): v.isFinite ? v : (v.isNaN ? "nan" : v > 0 ? "inf" : "-inf") as Any
        case .attribute(let other): text(other)
        case .object(let id?): id.description
        case .objects(let ids): ids.map(\.description)
        }
    }
}

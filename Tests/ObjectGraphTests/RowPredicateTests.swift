import Foundation
import Testing
@testable import ObjectGraph

/// Rows in a parent's layers are judged by predicates resolved to each entity's attribute positions: what a fetch
/// returns beside them is what it returns once they are saved, for an entity and its sub-entity alike.
@Suite struct RowPredicateTests {
    static let formats = [
        "n > 10", "modulus:by:(n, 3) == 0 AND name BEGINSWITH 'S'", "n * 2 BETWEEN {10, 30} OR name == 'Item 4'",
        "NOT (n IN {1, 2, 3})", "name CONTAINS[c] 'special'",
    ]

    /// Each format's results in `context`, as names in `n` order.
    static func results(_ context: ObjectContext, entity: String) async throws -> [String] {
        try await context.perform { ctx in
            try Self.formats.map { format in
                var request = try FetchRequest(entityName: entity, format: format)
                request.sortKeys = [SortKey("n")]
                return try ctx.fetch(request).map { object -> String in
                    guard case .string(let name) = try object.value(forKey: "name") else { return "?" }
                    return name
                }.joined(separator: ",")
            }
        }
    }

    @Test func layerRowsOfAnEntityAndItsSubentityAreJudgedAsOnceSaved() async throws {
        let folder = try TemporaryFolder()
        let model = try Model(entities: [
            EntityDescription("Item", attributes: [.init("name", .string), .init("n", .int64)]),
            EntityDescription("Special", attributes: [.init("extra", .string, isOptional: true)], parent: "Item"),
        ])
        let root = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.url.appendingPathComponent("s.sqlite")), name: "root")
        let child = ObjectContext(parent: root, name: "child")
        try await child.perform { ctx in
            for n in 0..<30 {
                let entity = n.isMultiple(of: 3) ? "Special" : "Item"
                let object = try ctx.insert(entity)
                try object.setValue("\(entity) \(n)", forKey: "name")
                try object.setValue(Int64(n), forKey: "n")
            }
            try ctx.save()
        }
        // The root holds the child's save as a layer, unsaved: the child's fetches judge its rows.
        let besideLayers = (try await Self.results(child, entity: "Item"), try await Self.results(child, entity: "Special"))
        try await root.perform { ctx in try ctx.save() }
        let saved = (try await Self.results(child, entity: "Item"), try await Self.results(child, entity: "Special"))
        #expect(besideLayers.0 == saved.0)
        #expect(besideLayers.1 == saved.1)
        // The predicates select proper subsets, so the agreement says something.
        #expect(saved.0[0].split(separator: ",").count == 19)
        #expect(saved.1[1] == "Special 0,Special 3,Special 6,Special 9,Special 12,Special 15,Special 18,Special 21,Special 24,Special 27")
    }
}

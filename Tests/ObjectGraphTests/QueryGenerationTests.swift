import Foundation
import Testing
@testable import ObjectGraph

/// Core Data's query generations ("Accessing data when the store changes"): "Whenever you read from a context, you
/// see the same generation, or snapshot, of data until you choose to advance it to a later generation"; pinned
/// contexts move to the newest generation when they save, merge or reset.
@Suite struct QueryGenerationTests {
    static func model() throws -> Model { try UndoTests.model() }

    /// Three drafts in a binder, saved; returns their IDs by title.
    static func seed(_ coordinator: PersistentStoreCoordinator) async throws -> [String: ObjectID] {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let binder = try ctx.insert(Binder.self)
            binder.name = "Work"
            var ids: [String: ObjectID] = [:]
            for title in ["a", "b", "c"] {
                let draft = try ctx.insert(Draft.self)
                draft.title = title
                draft.folder = binder
                ids[title] = draft.objectID
            }
            try ctx.save()
            ids["binder"] = binder.objectID
            return ids
        }
    }

    /// Another context's save: "a" renamed, "b" deleted, "d" inserted into the binder.
    static func changeElsewhere(_ coordinator: PersistentStoreCoordinator, _ ids: [String: ObjectID]) async throws {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.existingObject(with: ids["a"]!, as: Draft.self).title = "a2"
            try ctx.delete(ctx.existingObject(with: ids["b"]!))
            let draft = try ctx.insert(Draft.self)
            draft.title = "d"
            draft.folder = try ctx.existingObject(with: ids["binder"]!, as: Binder.self)
            try ctx.save()
        }
    }

    /// What a context reads: titles by fetch, the count, the binder's list and a fault of "a" made now.
    static func reads(_ ctx: isolated ObjectContext, _ ids: [String: ObjectID]) throws -> [String] {
        let titles = try ctx.fetch(Draft.self, sortedBy: ["title"]).map(\.title)
        let count = try ctx.count(for: FetchRequest(entityName: "Draft"))
        let binder = try ctx.existingObject(with: ids["binder"]!, as: Binder.self)
        let listed = binder.drafts.map(\.title).sorted()
        return [titles.joined(separator: ","), "\(count)", listed.joined(separator: ",")]
    }

    @Test(arguments: StoreKind.allCases)
    func aPinnedContextReadsTheStateItWasPinnedAtUntilItMovesOn(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Self.model(), folder)
        let ids = try await Self.seed(coordinator)
        let pinned = ObjectContext(coordinator: coordinator)
        try await pinned.perform { ctx in
            try ctx.setQueryGenerationFrom(.current)
            #expect(ctx.queryGenerationToken != nil && ctx.queryGenerationToken != .current)
        }
        try await Self.changeElsewhere(coordinator, ids)
        let before = ["a,b,c", "3", "a,b,c"]
        try await pinned.perform { ctx in
            // Nothing was registered before: every fault, fetch, count and list reads the pinned state.
            #expect(try Self.reads(ctx, ids) == before)
            let b = try ctx.existingObject(with: ids["b"]!, as: Draft.self)
            #expect(b.title == "b")
            // A refresh reads the pinned state too.
            try ctx.refreshAllObjects()
            #expect(try Self.reads(ctx, ids) == before)
        }
        // A child reads through its pinned parent.
        let child = ObjectContext(parent: pinned)
        let childReads = try await child.perform { ctx in try Self.reads(ctx, ids) }
        #expect(childReads == before)
        // Pinning again moves to the newest state.
        try await pinned.perform { ctx in
            try ctx.setQueryGenerationFrom(.current)
            try ctx.refreshAllObjects()
            ctx.reset()
            #expect(try Self.reads(ctx, ids) == ["a2,c,d", "3", "a2,c,d"])
            try ctx.setQueryGenerationFrom(nil)
            #expect(ctx.queryGenerationToken == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aSaveAMergeAndAResetMoveAPinnedContextToTheNewestState(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Self.model(), folder)
        let ids = try await Self.seed(coordinator)
        let pinned = ObjectContext(coordinator: coordinator)
        let first = try await pinned.perform { ctx in
            try ctx.setQueryGenerationFrom(.current)
            return ctx.queryGenerationToken
        }
        try await Self.changeElsewhere(coordinator, ids)
        let seen = try await pinned.perform { ctx in
            try ctx.existingObject(with: ids["c"]!, as: Draft.self).words = 1
            try ctx.save()
            #expect(ctx.queryGenerationToken != first && ctx.queryGenerationToken != nil, "still pinned, at a newer state")
            return try Self.reads(ctx, ids)[0]
        }
        #expect(seen == "a2,c,d")
        // Two contexts pinned to one token read one state, whatever is saved meanwhile.
        let token = try #require(try await pinned.perform { $0.queryGenerationToken })
        let twin = ObjectContext(coordinator: coordinator)
        try await twin.perform { ctx in try ctx.setQueryGenerationFrom(token) }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.existingObject(with: ids["c"]!, as: Draft.self).title = "c2"
            try ctx.save()
        }
        let (twinTitles, twinToken) = try await twin.perform { ctx in (try Self.reads(ctx, ids)[0], ctx.queryGenerationToken) }
        #expect(twinTitles == "a2,c,d" && twinToken == token)
        try await twin.perform { ctx in ctx.reset() }
        let afterReset = try await twin.perform { ctx in try Self.reads(ctx, ids)[0] }
        #expect(afterReset == "a2,c2,d")
    }

    @Test func childrenAndOtherStoresTokensAreRefusedNamingWhy() async throws {
        let model = try Self.model()
        let root = ObjectContext(coordinator: .inMemory(model: model), name: "root")
        let other = ObjectContext(coordinator: .inMemory(model: model))
        let token = try await other.perform { ctx in
            try ctx.setQueryGenerationFrom(.current)
            return ctx.queryGenerationToken
        }
        try await root.perform { ctx in
            let foreign = #expect(throws: ObjectGraphError.self) { try ctx.setQueryGenerationFrom(token) }
            #expect(foreign?.message.contains("the token is of the store") == true, "\(foreign?.message ?? "")")
        }
        try await ObjectContext(parent: root, name: "child").perform { ctx in
            let child = #expect(throws: ObjectGraphError.self) { try ctx.setQueryGenerationFrom(.current) }
            #expect(child?.message.contains("context child") == true && child?.message.contains("pin the root") == true)
        }
    }

    /// A coordinator with a store per configuration pins every store at once.
    @Test func aCoordinatorOfSeveralStoresPinsThemAll() async throws {
        let model = try ConfigurationStoresTests.model()
        let folder = try TemporaryFolder()
        let coordinator = try ConfigurationStoresTests.coordinator(.sqlite, folder, model: model)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            _ = try ConfigurationStoresTests.insert(ctx, country: "PT")
            _ = try ConfigurationStoresTests.insert(ctx, trip: "Coast", to: "PT")
            try ctx.save()
        }
        let pinned = ObjectContext(coordinator: coordinator)
        try await pinned.perform { ctx in try ctx.setQueryGenerationFrom(.current) }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            _ = try ConfigurationStoresTests.insert(ctx, country: "ES")
            _ = try ConfigurationStoresTests.insert(ctx, trip: "Meseta", to: "ES")
            try ctx.save()
        }
        let counts = try await pinned.perform { ctx in
            [try ctx.count(for: FetchRequest(entityName: "Country")), try ctx.count(for: FetchRequest(entityName: "Trip"))]
        }
        #expect(counts == [1, 1])
    }
}

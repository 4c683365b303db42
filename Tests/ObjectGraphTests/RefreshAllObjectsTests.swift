import Foundation
import Testing
import ObjectGraph

/// Core Data's `refreshAllObjects()` ("refreshes all objects in the context: objects with unsaved changes keep
/// them, merged with the stored values; others are turned into faults") and `retainsRegisteredObjects` ("whether
/// the context keeps strong references to all registered managed objects"; false by default).
@Suite struct RefreshAllObjectsTests {
    static func novels(_ ctx: isolated ObjectContext, _ titles: [String]) throws -> [ObjectID] {
        let novels = try titles.map { title in
            let novel = try ctx.insert(Novel.self)
            novel.title = title
            return novel
        }
        try ctx.save()
        return novels.map(\.objectID)
    }

    @Test(arguments: StoreKind.allCases)
    func refreshingEverythingKeepsTheContextsOwnChangesOnTheStoredValues(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try MacroEntityTests.model(), folder)
        let ids = try await ObjectContext(coordinator: coordinator).perform { ctx in try Self.novels(ctx, ["Kept", "Changed", "Doomed"]) }
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            // Held, so that the unchanged object keeps the values it read until the refresh.
            ctx.retainsRegisteredObjects = true
            let (kept, changed, doomed) = (
                try ctx.existingObject(with: ids[0], as: Novel.self), try ctx.existingObject(with: ids[1], as: Novel.self),
                try ctx.existingObject(with: ids[2], as: Novel.self))
            changed.title = "Changed here"
            try ctx.delete(doomed)
            let inserted = try ctx.insert(Novel.self)
            inserted.title = "New"
            _ = kept.title
        }
        // Another context saves new page counts (this one does not merge them).
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            for id in ids.prefix(2) { try ctx.existingObject(with: id, as: Novel.self).pages = 99 }
            try ctx.save()
        }
        try await context.perform { ctx in
            let (kept, changed) = (try ctx.existingObject(with: ids[0], as: Novel.self), try ctx.existingObject(with: ids[1], as: Novel.self))
            #expect(kept.pages == 1 && changed.pages == 1)
            try ctx.refreshAllObjects()
            // The unchanged object became a fault and reads the stored row.
            #expect(kept.isFault)
            #expect(kept.pages == 99)
            // The changed one reads the stored values under its own change.
            #expect(changed.title == "Changed here" && changed.pages == 99)
            // The insert and the deletion stay pending.
            let (inserted, deleted) = (ctx.insertedObjects.count, ctx.deletedObjects.map(\.objectID))
            #expect(inserted == 1 && deleted == [ids[2]])
            // The changed object's save no longer conflicts: it was refreshed onto the stored version.
            try ctx.save()
        }
        let titles = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.fetch(Novel.self, sortedBy: ["title"]).map { "\($0.title) \($0.pages)" }
        }
        #expect(titles == ["Changed here 99", "Kept 99", "New 1"])
    }

    @Test func aContextRetainsItsObjectsOnlyWhenAsked() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try MacroEntityTests.model())
        let ids = try await ObjectContext(coordinator: coordinator).perform { ctx in try Self.novels(ctx, ["A", "B"]) }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let isOn = ctx.retainsRegisteredObjects
            #expect(!isOn)
            // By default an object nobody holds leaves the context.
            _ = try ctx.existingObject(with: ids[0], as: Novel.self).title
            #expect(ctx.registeredObject(for: ids[0]) == nil)
            ctx.retainsRegisteredObjects = true
            _ = try ctx.existingObject(with: ids[0], as: Novel.self).title
            _ = try ctx.existingObject(with: ids[1], as: Novel.self).title
            #expect(ctx.registeredObject(for: ids[0]) != nil && ctx.registeredObject(for: ids[1]) != nil)
            // Turned off, the context lets go of them.
            ctx.retainsRegisteredObjects = false
            #expect(ctx.registeredObject(for: ids[0]) == nil && ctx.registeredObject(for: ids[1]) == nil)
            // Held objects a reset forgets are freed too.
            ctx.retainsRegisteredObjects = true
            _ = try ctx.existingObject(with: ids[0], as: Novel.self).title
            ctx.reset()
            #expect(ctx.registeredObject(for: ids[0]) == nil)
        }
    }
}

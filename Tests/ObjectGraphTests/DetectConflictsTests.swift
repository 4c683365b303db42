import Foundation
import Testing
import ObjectGraph

/// Core Data's `detectConflicts(for:)`: "marks an object for conflict detection, which means that the save fails if
/// the object has been altered in the persistent store by another context since it was fetched" — an object the
/// save writes nothing for.
@Suite struct DetectConflictsTests {
    /// Two saved novels, a context that read the first ("Dune", the one it will mark) and another that changes or
    /// deletes it behind the first one's back.
    static func setUp(_ kind: StoreKind, _ folder: TemporaryFolder) async throws -> (PersistentStoreCoordinator, ObjectContext, [ObjectID]) {
        let coordinator = try kind.coordinator(try MacroEntityTests.model(), folder)
        let ids = try await ObjectContext(coordinator: coordinator).perform { ctx in try RefreshAllObjectsTests.novels(ctx, ["Dune", "Emma"]) }
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            ctx.retainsRegisteredObjects = true
            for id in ids { _ = try ctx.existingObject(with: id, as: Novel.self).title }
        }
        return (coordinator, context, ids)
    }

    static func changeBehindTheBack(_ coordinator: PersistentStoreCoordinator, _ id: ObjectID, delete: Bool = false) async throws {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let novel = try ctx.existingObject(with: id, as: Novel.self)
            if delete { try ctx.delete(novel) } else { novel.pages = 99 }
            try ctx.save()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aMarkedObjectChangedInTheStoreFailsTheSave(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let (coordinator, context, ids) = try await Self.setUp(kind, folder)
        try await context.perform { ctx in try ctx.detectConflicts(for: try ctx.existingObject(with: ids[0])) }
        try await Self.changeBehindTheBack(coordinator, ids[0])
        try await context.perform { ctx in
            try ctx.existingObject(with: ids[1], as: Novel.self).title = "Emma (annotated)"
            #expect {
                try ctx.save()
            } throws: { error in
                guard case ObjectGraphError.conflict(let conflicts) = error else { return false }
                return conflicts.map(\.objectID) == [ids[0]] && conflicts.first?.storedVersion == 2
            }
            // A rollback drops the mark with the changes: the same change saves.
            ctx.rollback()
            try ctx.existingObject(with: ids[1], as: Novel.self).title = "Emma (annotated)"
            try ctx.save()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aMarkedObjectDeletedInTheStoreFailsTheSave(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let (coordinator, context, ids) = try await Self.setUp(kind, folder)
        try await context.perform { ctx in try ctx.detectConflicts(for: try ctx.existingObject(with: ids[0])) }
        try await Self.changeBehindTheBack(coordinator, ids[0], delete: true)
        try await context.perform { ctx in
            try ctx.existingObject(with: ids[1], as: Novel.self).pages = 3
            #expect {
                try ctx.save()
            } throws: { error in
                guard case ObjectGraphError.conflict(let conflicts) = error else { return false }
                return conflicts.map(\.objectID) == [ids[0]] && conflicts.first?.storedVersion == nil
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func unmarkedTheSameSaveGoesThroughAndAMergingPolicyTakesTheStoredValues(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let (coordinator, context, ids) = try await Self.setUp(kind, folder)
        try await Self.changeBehindTheBack(coordinator, ids[0])
        try await context.perform { ctx in
            try ctx.existingObject(with: ids[1], as: Novel.self).pages = 3
            try ctx.save()
            // Marked, under a merging policy: the save goes through and the marked object shows the store's values.
            let dune = try ctx.existingObject(with: ids[0], as: Novel.self)
            #expect(dune.pages == 1)
            ctx.mergePolicy = .mergeByPropertyObjectTrump
            try ctx.detectConflicts(for: dune)
            try ctx.existingObject(with: ids[1], as: Novel.self).pages = 4
            try ctx.save()
            #expect(dune.pages == 99)
        }
    }
}

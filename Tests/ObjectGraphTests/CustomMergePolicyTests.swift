import Foundation
import Testing
import ObjectGraph

/// Merge policies an app writes, as Core Data apps subclass `NSMergePolicy` and override
/// `resolve(optimisticLockingConflicts:)` and `resolve(constraintConflicts:)`: each conflict is settled by the
/// app's rule, with the values on both sides.
@Suite struct CustomMergePolicyTests {
    /// Keeps the larger page count; everything else as the object has it.
    struct KeepMorePages: ConflictResolver {
        func resolve(_ conflict: MergeConflict) throws -> MergeResolution {
            guard case .int(let mine) = conflict.objectValues["pages"], case .int(let theirs) = conflict.storedValues["pages"] else { return .object }
            return .values(["pages": .int(max(mine, theirs)), "title": conflict.objectValues["title"] ?? .null])
        }
    }

    /// The store always wins.
    struct StoreWins: ConflictResolver {
        func resolve(_ conflict: MergeConflict) throws -> MergeResolution { .store }
    }

    /// Names an attribute the entity lacks.
    struct Misspelled: ConflictResolver {
        func resolve(_ conflict: MergeConflict) throws -> MergeResolution { .values(["pagez": .int(1)]) }
    }

    /// A novel saved, read by a context that then loses a race: another context saves `pages` first.
    static func race(_ kind: StoreKind, _ folder: TemporaryFolder) async throws -> (context: ObjectContext, coordinator: PersistentStoreCoordinator, id: ObjectID) {
        let coordinator = try kind.coordinator(try MacroEntityTests.model(), folder)
        let id = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let novel = try ctx.insert(Novel.self)
            novel.title = "Dune"
            novel.isbn = "0-441-17271-7"
            novel.pages = 400
            try ctx.save()
            return novel.objectID
        }
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            ctx.retainsRegisteredObjects = true
            _ = try ctx.existingObject(with: id, as: Novel.self).pages
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.existingObject(with: id, as: Novel.self).pages = 412
            try ctx.save()
        }
        return (context, coordinator, id)
    }

    static func stored(_ coordinator: PersistentStoreCoordinator) async throws -> [String] {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.fetch(Novel.self, sortedBy: ["title"]).map { "\($0.title) \($0.pages) \($0.isbn ?? "-")" }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anUpdateConflictIsSettledByTheAppsRule(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let (context, coordinator, id) = try await Self.race(kind, folder)
        try await context.perform { ctx in
            ctx.mergePolicy = .custom(KeepMorePages())
            let novel = try ctx.existingObject(with: id, as: Novel.self)
            novel.pages = 405
            novel.title = "Dune (revised)"
            try ctx.save()
            // The object shows what was stored: the rule's values.
            #expect(novel.pages == 412 && novel.title == "Dune (revised)")
        }
        #expect(try await Self.stored(coordinator) == ["Dune (revised) 412 0-441-17271-7"])
    }

    @Test(arguments: StoreKind.allCases)
    func theStoreCanWinAnUpdateOrADeletion(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let (context, coordinator, id) = try await Self.race(kind, folder)
        try await context.perform { ctx in
            ctx.mergePolicy = .custom(StoreWins())
            let novel = try ctx.existingObject(with: id, as: Novel.self)
            novel.title = "Mine"
            try ctx.save()
            #expect(novel.title == "Dune" && novel.pages == 412)
        }
        #expect(try await Self.stored(coordinator) == ["Dune 412 0-441-17271-7"])
        // A deletion that meets a changed row is dropped when the store wins.
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.existingObject(with: id, as: Novel.self).pages = 420
            try ctx.save()
        }
        try await context.perform { ctx in
            try ctx.delete(try ctx.existingObject(with: id))
            try ctx.save()
        }
        #expect(try await Self.stored(coordinator) == ["Dune 420 0-441-17271-7"])
    }

    @Test(arguments: StoreKind.allCases)
    func anInsertCollidingOnAUniquenessConstraintUpdatesTheStoredRowByTheRule(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let (context, coordinator, _) = try await Self.race(kind, folder)
        try await context.perform { ctx in
            ctx.mergePolicy = .custom(KeepMorePages())
            let copy = try ctx.insert(Novel.self)
            copy.title = "Dune (copy)"
            copy.isbn = "0-441-17271-7"
            copy.pages = 300
            try ctx.save()
        }
        #expect(try await Self.stored(coordinator) == ["Dune (copy) 412 0-441-17271-7"])
    }

    @Test func aRuleNamingAnUnknownAttributeFailsTheSaveNamingIt() async throws {
        let folder = try TemporaryFolder()
        let (context, _, id) = try await Self.race(.memory, folder)
        await context.perform { ctx in
            ctx.mergePolicy = .custom(Misspelled())
            #expect {
                try ctx.existingObject(with: id, as: Novel.self).pages = 1
                try ctx.save()
            } throws: { "\($0)".contains("pagez") && "\($0)".contains("Novel") }
        }
    }
}

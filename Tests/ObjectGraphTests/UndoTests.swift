import Foundation
import Testing
@testable import ObjectGraph

@Entity final class Draft: ManagedObject {
    var title: String = ""
    var words: Int = 0
    @Relationship(inverse: "draft", deleteRule: .cascade) var paragraphs: [Paragraph]
    @Relationship(inverse: "drafts") var folder: Binder?
}

@Entity final class Paragraph: ManagedObject {
    var text: String = ""
    @Relationship(inverse: "paragraphs") var draft: Draft?
}

@Entity final class Binder: ManagedObject {
    var name: String = ""
    @Relationship(inverse: "folder", deleteRule: .nullify) var drafts: Set<Draft>
}

/// Core Data's undo: "the undo manager … groups changes by event" (each `perform` block here), "undo … reverses
/// the changes of the last group", objects inserted and deleted come and go with their values and relationships, and
/// `rollback()` "removes everything from the undo stack". SwiftData's `isUndoEnabled` gives a context one.
@Suite struct UndoTests {
    static func model() throws -> Model { try Model([Draft.self, Paragraph.self, Binder.self]) }

    static func titles(_ ctx: isolated ObjectContext) throws -> [String] {
        try ctx.fetch(Draft.self, FetchRequest(entityName: "Draft", sortKeys: [SortKey("title")])).map(\.title)
    }

    @Test func eachEventIsOneGroupAndUndoAndRedoWalkThem() async throws {
        let context = ObjectContext(coordinator: .inMemory(model: try Self.model()))
        let id = try await context.perform { ctx in
            ctx.isUndoEnabled = true
            let draft = try ctx.insert(Draft.self)
            draft.title = "One"
            return draft.objectID
        }
        try await context.perform { ctx in
            let draft = try ctx.existingObject(with: id, as: Draft.self)
            draft.title = "Two"
            draft.words = 20
        }
        try await context.perform { ctx in try ctx.existingObject(with: id, as: Draft.self).title = "Three" }
        try await context.perform { ctx in
            let draft = try ctx.existingObject(with: id, as: Draft.self)
            #expect(ctx.undoManager?.canUndo == true && ctx.undoManager?.canRedo == false)
            try ctx.undo()
            #expect(draft.title == "Two" && draft.words == 20)
            try ctx.undo()
            #expect(draft.title == "One" && draft.words == 0)
            #expect(ctx.undoManager?.canRedo == true)
            try ctx.redo()
            #expect(draft.title == "Two" && draft.words == 20)
            // Undoing the first group takes the insert away: the object leaves the context.
            try ctx.undo()
            try ctx.undo()
            let pending = ctx.hasChanges
            #expect(try Self.titles(ctx).isEmpty && !pending)
            #expect(ctx.undoManager?.canUndo == false)
            // Redo brings the same object back, with its ID.
            try ctx.redo()
            #expect(try Self.titles(ctx) == ["One"])
            #expect(try ctx.existingObject(with: id, as: Draft.self) === draft && draft.managedObjectContext != nil)
            // A new change makes the undone groups no longer redoable.
            draft.words = 1
        }
        try await context.perform { ctx in #expect(ctx.undoManager?.canRedo == false) }
    }

    @Test func explicitGroupsSpanEventsAndNest() async throws {
        let context = ObjectContext(coordinator: .inMemory(model: try Self.model()))
        let id = try await context.perform { ctx in
            let draft = try ctx.insert(Draft.self)
            draft.title = "Start"
            try ctx.save()
            ctx.undoManager = ContextUndoManager()
            ctx.undoManager?.beginUndoGrouping()
            draft.title = "A"
            return draft.objectID
        }
        try await context.perform { ctx in
            try ctx.existingObject(with: id, as: Draft.self).words = 5
            ctx.undoManager?.setActionName("Edit")
            ctx.undoManager?.endUndoGrouping()
            #expect(ctx.undoManager?.undoActionName == "Edit" && ctx.undoManager?.groupingLevel == 0)
        }
        try await context.perform { ctx in
            let draft = try ctx.existingObject(with: id, as: Draft.self)
            try ctx.undo()
            let pending = ctx.hasChanges
            #expect(draft.title == "Start" && draft.words == 0 && !pending)
            #expect(ctx.undoManager?.redoActionName == "Edit")
        }
    }

    /// A deletion's rules are in its group: undoing a cascade brings back every object it took, with their order,
    /// and undoing a nullify relinks.
    @Test func undoingADeletionBringsBackWhatItsRulesTook() async throws {
        let context = ObjectContext(coordinator: .inMemory(model: try Self.model()))
        let id = try await context.perform { ctx in
            let binder = try ctx.insert(Binder.self)
            binder.name = "Work"
            let draft = try ctx.insert(Draft.self)
            draft.title = "Essay"
            draft.folder = binder
            for text in ["a", "b", "c"] {
                let paragraph = try ctx.insert(Paragraph.self)
                paragraph.text = text
                draft.paragraphs.append(paragraph)
            }
            try ctx.save()
            ctx.isUndoEnabled = true
            return draft.objectID
        }
        try await context.perform { ctx in try ctx.delete(ctx.existingObject(with: id, as: Draft.self)) }
        try await context.perform { ctx in
            #expect(try ctx.count(for: FetchRequest(entityName: "Paragraph")) == 0)
            let binder = try #require(try ctx.fetch(Binder.self, FetchRequest(entityName: "Binder")).first)
            #expect(binder.drafts.isEmpty)
            try ctx.undo()
            let draft = try ctx.existingObject(with: id, as: Draft.self)
            #expect(!draft.isDeleted && draft.paragraphs.map(\.text) == ["a", "b", "c"])
            #expect(draft.folder === binder && binder.drafts.map(\.objectID) == [id])
            try ctx.redo()
            #expect(draft.isDeleted && binder.drafts.isEmpty)
            try ctx.undo()
            try ctx.save()
        }
        // What the undo left is what the store keeps.
        try await ObjectContext(coordinator: context.coordinator).perform { ctx in
            let draft = try ctx.existingObject(with: id, as: Draft.self)
            #expect(draft.paragraphs.map(\.text) == ["a", "b", "c"] && draft.folder?.name == "Work")
        }
    }

    /// "Undo … across saves": an undone change after a save is a change to save again; a deletion saved and undone
    /// is inserted again with its ID.
    @Test(arguments: StoreKind.allCases)
    func undoReachesBackAcrossSaves(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let model = try Self.model()
        let coordinator = try kind.coordinator(model, folder)
        let context = ObjectContext(coordinator: coordinator)
        let (draftID, binderID) = try await context.perform { ctx in
            ctx.isUndoEnabled = true
            let binder = try ctx.insert(Binder.self)
            binder.name = "Work"
            let draft = try ctx.insert(Draft.self)
            draft.title = "Kept"
            draft.folder = binder
            try ctx.save()
            return (draft.objectID, binder.objectID)
        }
        try await context.perform { ctx in
            try ctx.existingObject(with: draftID, as: Draft.self).title = "Renamed"
            try ctx.save()
        }
        try await context.perform { ctx in
            try ctx.delete(ctx.existingObject(with: draftID, as: Draft.self))
            try ctx.save()
        }
        try await context.perform { ctx in
            try ctx.undo()   // the deletion
            try ctx.undo()   // the rename
            let pending = ctx.hasChanges
            #expect(pending)
            try ctx.save()
        }
        let stored = try await ObjectContext(coordinator: kind == .sqlite ? try kind.coordinator(model, folder) : coordinator).perform { ctx in
            let draft = try ctx.existingObject(with: draftID, as: Draft.self)
            return [draft.title, draft.folder?.objectID == binderID ? "linked" : "unlinked"]
        }
        #expect(stored == ["Kept", "linked"])
    }

    /// Changes another context saved and this one merged are not its own: Core Data's merge registers no undo.
    @Test func mergedChangesAreNotUndoable() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try Self.model())
        let context = ObjectContext(coordinator: coordinator)
        let id = try await context.perform { ctx in
            ctx.automaticallyMergesChangesFromParent = true
            let draft = try ctx.insert(Draft.self)
            draft.title = "Mine"
            try ctx.save()
            ctx.isUndoEnabled = true
            _ = draft.title
            return draft.objectID
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.existingObject(with: id, as: Draft.self).title = "Theirs"
            try ctx.save()
        }
        try await context.perform { ctx in
            let title = try ctx.existingObject(with: id, as: Draft.self).title
            #expect(title == "Theirs")
            #expect(ctx.undoManager?.canUndo == false)
        }
    }

    @Test func rollbackResetLevelsAndDisabledRegistrationForgetGroups() async throws {
        let context = ObjectContext(coordinator: .inMemory(model: try Self.model()))
        try await context.perform { ctx in
            ctx.isUndoEnabled = true
            let draft = try ctx.insert(Draft.self)
            ctx.processPendingChanges()
            draft.words = 1
            ctx.rollback()
            #expect(ctx.undoManager?.canUndo == false)

            let kept = try ctx.insert(Draft.self)
            try ctx.save()
            ctx.undoManager?.levelsOfUndo = 2
            for words in 1...4 {
                kept.words = words
                ctx.processPendingChanges()
            }
            try ctx.undo()
            try ctx.undo()
            #expect(kept.words == 2 && ctx.undoManager?.canUndo == false)

            ctx.undoManager?.disableUndoRegistration()
            kept.title = "Seeded"
            ctx.undoManager?.enableUndoRegistration()
            kept.words = 9
            try ctx.undo()
            #expect(kept.title == "Seeded" && kept.words == 2)
            ctx.reset()
            #expect(ctx.undoManager?.canUndo == false && ctx.undoManager?.canRedo == false)
        }
    }

    @MainActor @Test func theMainContextUndoesToo() throws {
        let stack = DataStack(coordinator: .inMemory(model: try Self.model()))
        try stack.onMain { main in
            main.isUndoEnabled = true
            let draft = try main.insert(Draft.self)
            draft.title = "Main"
            main.processPendingChanges()
            try main.undo()
            #expect(!main.owns(draft) && main.undoManager?.canRedo == true)
        }
    }

    /// Core Data's `changedValuesForCurrentEvent`: "the keys and old values of persistent properties that have
    /// changed since the last posting of NSManagedObjectContextObjectsDidChangeNotification".
    @Test func changedValuesForCurrentEventAreSinceTheLastProcessing() async throws {
        let context = ObjectContext(coordinator: .inMemory(model: try Self.model()))
        try await context.perform { ctx in
            let draft = try ctx.insert(Draft.self)
            draft.title = "First"
            try ctx.save()
            draft.title = "Second"
            #expect(try draft.changedValuesForCurrentEvent() == ["title": .string("First")])
            ctx.processPendingChanges()
            #expect(try draft.changedValuesForCurrentEvent().isEmpty)
            draft.words = 3
            draft.title = "Third"
            #expect(try draft.changedValuesForCurrentEvent() == ["title": .string("Second"), "words": .int(0)])
            #expect(try draft.changedValues() == ["title": .string("Third"), "words": .int(3)])
        }
    }
}

/// The invariant undo promises, checked on random work: after undoing n groups the context shows exactly what it
/// showed n events ago, and redoing them shows each later state again, saves in between or not.
@Suite struct UndoWalkTests {
    /// Everything the context shows, by the unique names the work gives objects (IDs change at a save).
    static func view(_ ctx: isolated ObjectContext) throws -> [String] {
        var lines: [String] = []
        for draft in try ctx.fetch(Draft.self, FetchRequest(entityName: "Draft")) {
            lines.append("draft \(draft.title) words=\(draft.words) folder=\(draft.folder?.name ?? "-") [\(draft.paragraphs.map(\.text).joined(separator: ","))]")
        }
        for paragraph in try ctx.fetch(Paragraph.self, FetchRequest(entityName: "Paragraph")) {
            lines.append("paragraph \(paragraph.text) in \(paragraph.draft?.title ?? "-")")
        }
        for binder in try ctx.fetch(Binder.self, FetchRequest(entityName: "Binder")) {
            lines.append("binder \(binder.name) {\(binder.drafts.map(\.title).sorted().joined(separator: ","))}")
        }
        return lines.sorted()
    }

    /// One random edit: inserts, attribute changes, moves, deletions with their rules, sometimes a save.
    static func edit(_ ctx: isolated ObjectContext, _ random: inout SplitMix, step: Int) throws {
        let drafts = try ctx.fetch(Draft.self, FetchRequest(entityName: "Draft"))
        let paragraphs = try ctx.fetch(Paragraph.self, FetchRequest(entityName: "Paragraph"))
        let binders = try ctx.fetch(Binder.self, FetchRequest(entityName: "Binder"))
        switch Int.random(in: 0..<9, using: &random) {
        case 0, 1:
            let draft = try ctx.insert(Draft.self)
            draft.title = "d\(step)"
            if let binder = binders.randomElement(using: &random) { draft.folder = binder }
        case 2 where !drafts.isEmpty:
            drafts.randomElement(using: &random)!.words = Int.random(in: 0..<100, using: &random)
        case 3 where !drafts.isEmpty:
            let paragraph = try ctx.insert(Paragraph.self)
            paragraph.text = "p\(step)"
            let draft = drafts.randomElement(using: &random)!
            draft.paragraphs.insert(paragraph, at: Int.random(in: 0...draft.paragraphs.count, using: &random))
        case 4 where !paragraphs.isEmpty && !drafts.isEmpty:
            paragraphs.randomElement(using: &random)!.draft = drafts.randomElement(using: &random)!
        case 5 where !drafts.isEmpty:
            try ctx.delete(drafts.randomElement(using: &random)!)
        case 6:
            let binder = try ctx.insert(Binder.self)
            binder.name = "b\(step)"
        case 7 where !binders.isEmpty:
            try ctx.delete(binders.randomElement(using: &random)!)
        case 8 where !drafts.isEmpty:
            drafts.randomElement(using: &random)!.folder = binders.randomElement(using: &random)
        default:
            break
        }
        if Int.random(in: 0..<6, using: &random) == 0 { try ctx.save() }
    }

    @Test(arguments: [StoreKind.memory, .sqlite], 1...12)
    func undoingWalksBackThroughEveryStateAndRedoingForward(_ kind: StoreKind, _ seed: Int) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try UndoTests.model(), folder))
        var random = SplitMix(state: UInt64(seed))
        var views: [[String]] = [try await context.perform { ctx in
            ctx.isUndoEnabled = true
            return try Self.view(ctx)
        }]
        for step in 0..<40 {
            let (view, next) = try await context.perform { [random] ctx in
                var random = random
                try Self.edit(ctx, &random, step: step)
                ctx.processPendingChanges()
                return (try Self.view(ctx), random)
            }
            random = next
            // An event that changed nothing makes no group.
            if view != views.last { views.append(view) }
        }
        try await context.perform { [views] ctx in
            for (depth, expected) in views.reversed().dropFirst().enumerated() {
                try ctx.undo()
                let view = try Self.view(ctx)
                #expect(view == expected, "seed \(seed), undo \(depth + 1): \(view.filter { !expected.contains($0) }) instead of \(expected.filter { !view.contains($0) })")
            }
            #expect(ctx.undoManager?.canUndo == false)
            for expected in views.dropFirst() {
                try ctx.redo()
                #expect(try Self.view(ctx) == expected, "seed \(seed)")
            }
            // What the walk left saves as any change does.
            try ctx.save()
        }
    }
}


/// `fetch(Draft.self, request)` reads as "these objects, selected by this request": it fetches with the request, and
/// arguments given without a format (where a request used to land, selecting everything) are refused.
@Suite struct TypedFetchCallTests {
    @Test func aTypedFetchTakesARequestAndRefusesArgumentsWithoutAFormat() async throws {
        let context = ObjectContext(coordinator: .inMemory(model: try UndoTests.model()))
        try await context.perform { ctx in
            for title in ["a", "b"] { try ctx.insert(Draft.self).title = title }
            #expect(try ctx.fetch(Draft.self, FetchRequest(entityName: "Draft", format: "title == %@", "b")).map(\.title) == ["b"])
            let refusal = #expect(throws: ObjectGraphError.self) { try ctx.fetch(Draft.self, sortedBy: [], where: nil, "b") }
            #expect(refusal?.message.contains("without a format") == true && refusal?.message.contains("Draft") == true, "\(refusal?.message ?? "")")
        }
    }
}

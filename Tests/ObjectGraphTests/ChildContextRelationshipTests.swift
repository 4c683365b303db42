import Foundation
import Testing
@testable import ObjectGraph

/// Relationships across a child's saves into its parent and the parent's saves to the store, and deletions of objects
/// never saved: each case is one that ``GraphConsistencyTests`` once found read, saved or deleted wrongly.
@Suite struct ChildContextRelationshipTests {
    typealias Step = GraphConsistencyTests.Step

    /// A root over a fresh store and a child of it.
    struct Tree {
        let folder: TemporaryFolder
        let root: ObjectContext
        let child: ObjectContext

        init() throws {
            folder = try TemporaryFolder()
            root = ObjectContext(coordinator: try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL), name: "root")
            child = ObjectContext(parent: root, name: "child")
        }

        /// Runs each step in the child (`saveParent` saves the root), each in a call of its own, so that objects
        /// nothing holds are freed between steps as in an app.
        func run(_ steps: [Step]) async throws {
            for step in steps {
                if case .saveParent = step {
                    try await root.perform { ctx in try ctx.save() }
                } else {
                    try await child.perform { ctx in try GraphConsistencyTests.run(step, in: ctx) }
                }
            }
        }

        func graph(_ context: ObjectContext) async throws -> GraphConsistencyTests.Graph {
            try await context.perform { ctx in try GraphConsistencyTests.graph(in: ctx) }
        }
    }

    /// Objects a child inserted and saved live in the parent under their temporary IDs until the root saves; read
    /// again in the child, their to-many relationships come from the parent rather than reading as empty.
    @Test func aChildsSavedInsertsKeepTheirToManyRelationships() async throws {
        let tree = try Tree()
        try await tree.run([.insertBook("000-0001"), .insertTag("tag"), .tag("000-0001", "tag"), .addChapter("000-0001", "one"), .save])
        let graph = try await tree.graph(tree.child)
        #expect(graph.books["000-0001"]?.tags == ["tag"] && graph.books["000-0001"]?.chapters == ["one"])
        #expect(graph.tags["tag"] == ["000-0001"])
    }

    /// Deleting an object never saved applies its delete rules, as deleting a saved one does at the save: a cascade
    /// takes its chapters, and a deny rule with something left refuses the deletion and changes nothing.
    @Test func deletingAnUnsavedInsertFollowsItsDeleteRules() async throws {
        let tree = try Tree()
        try await tree.run([.insertBook("000-0001"), .addChapter("000-0001", "one"), .addChapter("000-0001", "two"), .deleteBook("000-0001"), .save])
        #expect(try await tree.graph(tree.child).chapters.isEmpty)

        try await tree.root.perform { ctx in
            let author = try ctx.insert("Author")
            try author.setValue("Ann", forKey: "name")
            let profile = try ctx.insert("Profile")
            try author.setObject(profile, forKey: "profile")
            #expect {
                try ctx.delete(author)
            } throws: { error in
                guard case ObjectGraphError.deleteDenied("Author", _, "profile", 1) = error else { return false }
                return true
            }
            let kept = try author.object(forKey: "profile")
            #expect(!author.isDeleted && author.isInserted && kept === profile)
        }
    }

    /// A child deletes an object an earlier saved layer linked (its book, or its tag): the root's save leaves the
    /// deleted object out of the lists that layer wrote, where it failed on the join table's foreign keys.
    @Test func aDeletionInALaterLayerLeavesTheListsOfEarlierOnes() async throws {
        let tree = try Tree()
        try await tree.run([.insertTag("tag"), .insertBook("000-0001"), .tag("000-0001", "tag"), .save, .deleteBook("000-0001"), .save, .saveParent])
        #expect(try await tree.graph(tree.root).tags["tag"] == [])

        let stored = try Tree()
        try await stored.run([.insertTag("tag"), .insertBook("000-0001"), .save, .saveParent, .tag("000-0001", "tag"), .save, .deleteTag("tag"), .save,
                              .saveParent])
        #expect(try await stored.graph(stored.root).books["000-0001"]?.tags == [])
    }

    /// A child deletes an object its parent saved meanwhile (the object's ID turned permanent between the deletion
    /// and the child's save): the deletion reaches the store once, where it was sent twice and failed as a conflict.
    @Test func aDeletionPendingAcrossTheRootsSaveIsSavedOnce() async throws {
        let tree = try Tree()
        try await tree.run([.insertTag("tag"), .save, .deleteTag("tag"), .saveParent, .save, .saveParent])
        let count = try await tree.root.perform { ctx in try ctx.count(for: FetchRequest(entityName: "Tag")) }
        #expect(count == 0)
    }

    /// A child's book holds its chapters' temporary IDs when the root's save makes them permanent, the chapters
    /// themselves no longer registered there: the list takes the permanent IDs too, so deleting a chapter later
    /// takes it out of the list.
    @Test func listsTakeThePermanentIDsOfObjectsNoLongerRegistered() async throws {
        let tree = try Tree()
        try await tree.run([.insertBook("000-0001"), .addChapter("000-0001", "one"), .addChapter("000-0001", "two"), .save])
        // The book changes, so the child keeps it (and its loaded chapters) while the chapters' objects are freed.
        try await tree.child.perform { ctx in
            let book = try ctx.fetch(FetchRequest(entityName: "Book"))[0]
            #expect(try book.objects(forKey: "chapters").count == 2)
            try book.setValue("another title", forKey: "title")
        }
        try await tree.run([.saveParent, .deleteChapter("one"), .save])
        #expect(try await tree.graph(tree.child).books["000-0001"]?.chapters == ["two"])
        try await tree.run([.saveParent])
        #expect(try await tree.graph(tree.root).books["000-0001"]?.chapters == ["two"])
    }

    /// A parent that has loaded two books' chapters receives a child's move of a chapter from one to the other, and
    /// a reversal of the other's order (the child had loaded neither list): both lists read as the child left them.
    @Test func aParentsLoadedListsFollowAChildsMovesAndReorders() async throws {
        let tree = try Tree()
        try await tree.root.perform { ctx in
            for step: Step in [.insertBook("000-0001"), .insertBook("000-0002"), .addChapter("000-0001", "one"), .addChapter("000-0002", "two"),
                               .addChapter("000-0002", "three")] {
                try GraphConsistencyTests.run(step, in: ctx)
            }
            try ctx.save()
            // Changed, the books stay registered in the root with their chapters loaded.
            for book in try ctx.fetch(FetchRequest(entityName: "Book")) {
                _ = try book.objects(forKey: "chapters")
                try book.setValue("another title", forKey: "title")
            }
        }
        try await tree.run([.moveChapter("one", to: "000-0002"), .save])
        var graph = try await tree.graph(tree.root)
        #expect(graph.books["000-0001"]?.chapters == [] && graph.books["000-0002"]?.chapters == ["two", "three", "one"])
        try await tree.run([.reverseChapters("000-0002"), .save])
        graph = try await tree.graph(tree.root)
        #expect(graph.books["000-0002"]?.chapters == ["one", "three", "two"])
    }

    /// A parent that has loaded a book's chapters receives a child's deletion of one (the child had not loaded the
    /// book's list, so its layer leaves it alone): the parent's list lets go of the deleted chapter.
    @Test func aParentsLoadedListLetsGoOfWhatAChildDeleted() async throws {
        let tree = try Tree()
        try await tree.root.perform { ctx in
            try GraphConsistencyTests.run(.insertBook("000-0001"), in: ctx)
            try GraphConsistencyTests.run(.addChapter("000-0001", "one"), in: ctx)
            try GraphConsistencyTests.run(.addChapter("000-0001", "two"), in: ctx)
            try ctx.save()
            // Changed, the book stays registered in the root with its chapters loaded.
            let book = try ctx.fetch(FetchRequest(entityName: "Book"))[0]
            #expect(try book.objects(forKey: "chapters").count == 2)
            try book.setValue("another title", forKey: "title")
        }
        try await tree.run([.deleteChapter("one"), .save])
        #expect(try await tree.graph(tree.root).books["000-0001"]?.chapters == ["two"])
        try await tree.run([.saveParent])
        #expect(try await tree.graph(tree.child).books["000-0001"]?.chapters == ["two"])
    }
}

import Foundation
import Synchronization
import Testing
@testable import ObjectGraph

/// Random edits of a graph (books, their tags, their ordered chapters), checked against a plain model of what Core
/// Data does with them: both sides of every relationship agree, an ordered to-many gains a member at its end, a
/// cascade takes a book's chapters, a nullify takes a deleted object out of every list, a rollback returns to the last
/// save. Checked in the context that edits (a root, a child or a grandchild), in the parent it saves into, and in the
/// store after the last save.
@Suite struct GraphConsistencyTests {
    /// What the graph should hold: books by ISBN, with their tags' labels and their chapters' headings in order; tags
    /// with their books; chapters with their book, if any.
    struct Graph: Equatable, CustomStringConvertible {
        var books: [String: (tags: Set<String>, chapters: [String])] = [:]
        var tags: [String: Set<String>] = [:]
        var chapters: [String: String?] = [:]

        static func == (lhs: Graph, rhs: Graph) -> Bool {
            lhs.books.keys.sorted() == rhs.books.keys.sorted()
                && lhs.books.allSatisfy { isbn, book in rhs.books[isbn].map { $0.tags == book.tags && $0.chapters == book.chapters } ?? false }
                && lhs.tags == rhs.tags && lhs.chapters == rhs.chapters
        }

        var description: String {
            let books = self.books.keys.sorted().map { isbn in
                "\(isbn): tags \(self.books[isbn]!.tags.sorted()), chapters \(self.books[isbn]!.chapters)"
            }
            return (books + tags.keys.sorted().map { "\($0): \(tags[$0]!.sorted())" }
                + chapters.keys.sorted().map { "\($0) in \(chapters[$0]! ?? "nothing")" }).joined(separator: "; ")
        }

        /// `heading` out of its book's list, if it has a book.
        mutating func detach(chapter heading: String) {
            guard let book = chapters[heading] ?? nil else { return }
            books[book]?.chapters.removeAll { $0 == heading }
        }
    }

    enum Step: Sendable {
        case insertBook(String), insertTag(String), tag(String, String), untag(String, String)
        case addChapter(String, String), moveChapter(String, to: String?), reverseChapters(String)
        case deleteBook(String), deleteTag(String), deleteChapter(String), save, saveParent, rollback
    }

    /// What the graph should hold, and what it held at the working context's last save (what a rollback returns to).
    struct Expectation {
        var graph = Graph()
        var saved = Graph()
        /// Whether the steps run in a child, where `saveParent` saves the root and not the child.
        let layered: Bool
    }

    /// A script of `count` steps, each valid for the graph the steps before it leave.
    static func script(seed: UInt64, count: Int, layered: Bool) -> [Step] {
        var random = FetchConsistencyTests.SplitMix(seed: seed)
        var expectation = Expectation(layered: layered)
        var graph: Graph { expectation.graph }
        var steps: [Step] = []
        var serial = 0
        var heading = 0
        var label = 0
        func pick<T>(_ items: some Collection<T>) -> T? where T: Comparable {
            let sorted = items.sorted()
            return sorted.isEmpty ? nil : sorted[random.below(sorted.count)]
        }
        while steps.count < count {
            let step: Step?
            switch random.below(17) {
            case 0, 1:
                serial += 1
                step = .insertBook(isbn(serial))
            case 2:
                label += 1
                step = graph.tags.count < 6 ? .insertTag("tag \(label)") : nil
            case 3, 4:
                if let book = pick(graph.books.keys), let tag = pick(graph.tags.keys) { step = .tag(book, tag) } else { step = nil }
            case 5:
                if let tag = pick(graph.tags.keys), let book = pick(graph.tags[tag]!) { step = .untag(book, tag) } else { step = nil }
            case 6, 7, 8:
                heading += 1
                step = pick(graph.books.keys).map { .addChapter($0, "chapter \(heading)") }
            case 9:
                if let chapter = pick(graph.chapters.keys) {
                    let target = random.below(4) == 0 ? nil : pick(graph.books.keys)
                    step = target == graph.chapters[chapter]! ? nil : .moveChapter(chapter, to: target)
                } else {
                    step = nil
                }
            case 10:
                step = pick(graph.books.keys).map { .reverseChapters($0) }
            case 11:
                step = random.below(2) == 0 ? pick(graph.books.keys).map { .deleteBook($0) } : pick(graph.chapters.keys).map { .deleteChapter($0) }
            case 12:
                step = pick(graph.tags.keys).map { .deleteTag($0) }
            case 13, 14:
                step = .save
            case 15:
                step = .saveParent
            default:
                step = random.below(3) == 0 ? .rollback : nil
            }
            guard let step else { continue }
            apply(step, to: &expectation)
            steps.append(step)
        }
        return steps
    }

    /// What `step` does, as Core Data does it.
    static func apply(_ step: Step, to expectation: inout Expectation) {
        switch step {
        case .save: expectation.saved = expectation.graph
        case .saveParent: if !expectation.layered { expectation.saved = expectation.graph }
        case .rollback: expectation.graph = expectation.saved
        default: apply(step, to: &expectation.graph)
        }
    }

    /// What an edit does to `graph`.
    static func apply(_ step: Step, to graph: inout Graph) {
        switch step {
        case .insertBook(let isbn): graph.books[isbn] = ([], [])
        case .insertTag(let label): graph.tags[label] = []
        case .tag(let isbn, let label):
            graph.books[isbn]!.tags.insert(label)
            graph.tags[label]!.insert(isbn)
        case .untag(let isbn, let label):
            graph.books[isbn]!.tags.remove(label)
            graph.tags[label]!.remove(isbn)
        case .addChapter(let isbn, let heading):
            graph.chapters.updateValue(isbn, forKey: heading)
            graph.books[isbn]!.chapters.append(heading)
        case .moveChapter(let heading, let isbn):
            graph.detach(chapter: heading)
            graph.chapters.updateValue(isbn, forKey: heading)
            if let isbn { graph.books[isbn]!.chapters.append(heading) }
        case .reverseChapters(let isbn):
            graph.books[isbn]!.chapters.reverse()
        case .deleteBook(let isbn):
            for label in graph.books[isbn]!.tags { graph.tags[label]!.remove(isbn) }
            for heading in graph.books[isbn]!.chapters { graph.chapters[heading] = nil }
            graph.books[isbn] = nil
        case .deleteTag(let label):
            for isbn in graph.tags[label]! { graph.books[isbn]!.tags.remove(label) }
            graph.tags[label] = nil
        case .deleteChapter(let heading):
            graph.detach(chapter: heading)
            graph.chapters[heading] = nil
        case .save, .saveParent, .rollback: break
        }
    }

    /// At `depth` 0 the steps run in a root context, and `save` and `saveParent` both save it to the store. At 1
    /// they run in a child of the root: `save` pushes them into the root, `saveParent` saves the root to the store. At
    /// 2 they run in a grandchild: `save` pushes them into its parent, `saveParent` saves that parent, then the root.
    @Test(arguments: StoreKind.allCases, [0, 1, 2])
    func randomEditsKeepBothSidesOfEveryRelationshipAsCoreDataDoes(kind: StoreKind, depth: Int) async throws {
        for seed in [11, 28, 144] as [UInt64] { try await check(kind: kind, depth: depth, seed: seed) }
    }

    /// One script of 140 steps, checked after every save and, after a last save, in a new context over the store.
    func check(kind: StoreKind, depth: Int, seed: UInt64) async throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        let coordinator = try kind.coordinator(model, folder)
        let root = ObjectContext(coordinator: coordinator, name: "root")
        // The contexts above the one that edits, nearest first.
        var parents = [root]
        for level in 1..<max(depth, 1) { parents.insert(ObjectContext(parent: parents[0], name: "child \(level)"), at: 0) }
        let layered = depth > 0
        let parent = parents[0]
        let context = layered ? ObjectContext(parent: parent, name: "editor") : root
        var expectation = Expectation(layered: layered)
        var pushed = Graph()
        var checks = 0
        for (index, step) in Self.script(seed: seed, count: 140, layered: layered).enumerated() {
            Self.apply(step, to: &expectation)
            let expected = expectation.graph
            if case .saveParent = step, layered {
                for context in parents { try await context.perform { ctx in try ctx.save() } }
            } else {
                try await context.perform { ctx in try Self.run(step, in: ctx) }
            }
            // Delete rules run when the context saves (as Core Data's run when it processes its pending changes):
            // until then a relationship may still hold a deleted object. So the graph is checked after saves, and
            // after a rollback, which leaves nothing pending.
            switch step {
            case .save: pushed = expected
            case .saveParent where !layered: pushed = expected
            case .rollback: break
            default: continue
            }
            try await Self.expectReads(in: context, of: expected, "seed \(seed), depth \(depth), after step \(index) (\(step))")
            if layered { try await Self.expectReads(in: parent, of: pushed, "seed \(seed), depth \(depth), the parent after step \(index) (\(step))") }
            checks += 1
        }
        let expected = expectation.graph
        try await context.perform { ctx in try ctx.save() }
        if layered { for context in parents { try await context.perform { ctx in try ctx.save() } } }
        // A new context over the same store (a new coordinator for a store that outlives it) reads what was saved.
        let fresh = kind == .memory ? coordinator : try kind.coordinator(model, folder)
        let stored = try await ObjectContext(coordinator: fresh, name: "reader").perform { ctx in try Self.graph(in: ctx) }
        #expect(stored == expected, "seed \(seed), depth \(depth), the store:\nread     \(stored)\nexpected \(expected)")
        #expect(checks >= 15 && expected.books.count >= 3 && expected.chapters.count >= 5 && !expected.tags.isEmpty,
                "seed \(seed): a script too small to check much: \(checks) checks, \(expected)")
    }

    /// A main-queue context on the same store merges each save of the root that edits, holding everything it read
    /// (so the merges change registered objects, loaded lists included): after each merge it reads what was saved.
    @MainActor
    @Test(arguments: StoreKind.allCases)
    func aContextMergingAnotherRootsSavesReadsTheSameGraph(kind: StoreKind) async throws {
        for seed in [11, 28, 144] as [UInt64] {
            let folder = try TemporaryFolder()
            let coordinator = try kind.coordinator(try Fixtures.model(), folder)
            let editor = ObjectContext(coordinator: coordinator, name: "editor")
            let mainContext = ObjectContext(coordinator: coordinator, concurrencyType: .mainQueue, name: "main")
            let main = MainContext(mainContext)
            let saves = Mutex<[ContextNotification]>([])
            let token = editor.addObserver(for: .didSave) { saved in saves.withLock { $0.append(saved) } }
            defer { token.remove() }
            var held: [ManagedObject] = []
            var expectation = Expectation(layered: false)
            var merges = 0
            for (index, step) in Self.script(seed: seed, count: 140, layered: false).enumerated() {
                Self.apply(step, to: &expectation)
                try await editor.perform { ctx in try Self.run(step, in: ctx) }
                switch step {
                case .save, .saveParent: break
                default: continue
                }
                // The observer is called on the editor's queue, after the save: one more call there waits for it.
                await editor.perform { _ in }
                for saved in saves.withLock({ saved in defer { saved = [] }; return saved }) {
                    await mainContext.perform { ctx in ctx.mergeChanges(fromContextDidSave: saved) }
                    merges += 1
                }
                let read = try Self.graph { try main.fetch(FetchRequest(entityName: $0)) }
                #expect(read == expectation.graph, "seed \(seed), after step \(index) (\(step)):\nread     \(read)\nexpected \(expectation.graph)")
                held = try ["Book", "Tag", "Chapter"].flatMap { try main.fetch(FetchRequest(entityName: $0)) }
                for object in held {
                    for relationship in object.entity.relationships {
                        if relationship.isToMany { _ = try object.objects(forKey: relationship.name) } else { _ = try object.object(forKey: relationship.name) }
                    }
                }
            }
            #expect(merges >= 15 && held.count >= 10, "seed \(seed): \(merges) merges, \(held.count) objects held")
        }
    }

    /// Expects `context` to read `graph`, and each of ``queries(_:)`` to fetch and count what it should select there.
    static func expectReads(in context: ObjectContext, of graph: Graph, _ when: String) async throws {
        let read = try await context.perform { ctx in try Self.graph(in: ctx) }
        #expect(read == graph, "\(when):\nread     \(read)\nexpected \(graph)")
        for (entity, format, matches) in queries(graph) {
            let (found, count) = try await context.perform { ctx in
                let request = FetchRequest(entityName: entity, predicate: try FormatPredicate(format))
                return (try Self.keys(ctx.fetch(request)), try ctx.count(for: request))
            }
            #expect(found == matches && count == matches.count, "\(when): \(entity) where \(format)")
        }
    }

    /// Fetches across the relationships, with what each should select in `graph`: a fetch over pending changes
    /// (a parent's layers, a child's own) evaluates them as the store evaluates its rows.
    static func queries(_ graph: Graph) -> [(entity: String, format: String, matches: Set<String>)] {
        let label = graph.tags.keys.sorted().first ?? "none"
        let heading = graph.chapters.keys.sorted().last ?? "none"
        let isbn = graph.books.keys.sorted().first ?? "none"
        func books(_ keep: ((tags: Set<String>, chapters: [String])) -> Bool) -> Set<String> { Set(graph.books.filter { keep($0.value) }.keys) }
        return [
            ("Book", "ANY tags.label == '\(label)'", books { $0.tags.contains(label) }),
            ("Book", "chapters.@count >= 2", books { $0.chapters.count >= 2 }),
            ("Book", "tags.@count == 0", books { $0.tags.isEmpty }),
            ("Book", "ANY chapters.heading == '\(heading)'", books { $0.chapters.contains(heading) }),
            ("Tag", "books.@count >= 1", Set(graph.tags.filter { !$0.value.isEmpty }.keys)),
            ("Chapter", "book == nil", Set(graph.chapters.filter { $0.value == nil }.keys)),
            ("Chapter", "book.isbn == '\(isbn)'", Set(graph.chapters.filter { $0.value == isbn }.keys)),
        ]
    }

    /// Each object's key: a book's ISBN, a tag's label, a chapter's heading.
    static func keys(_ objects: [ManagedObject]) throws -> Set<String> {
        Set(try objects.map { object in
            for key in ["isbn", "label", "heading"] where object.entity.attributeIndex[key] != nil {
                if case .string(let text) = try object.value(forKey: key) { return text }
            }
            return "?"
        })
    }

    static func run(_ step: Step, in ctx: isolated ObjectContext) throws {
        func one(_ entity: String, _ key: String, _ value: String) throws -> ManagedObject {
            let found = try ctx.fetch(FetchRequest(entityName: entity, predicate: try FormatPredicate("%K == %@", key, value)))
            guard found.count == 1 else { throw ObjectGraphError.invalidFetch(entity: entity, reason: "\(found.count) with \(key) \(value)") }
            return found[0]
        }
        switch step {
        case .insertBook(let isbn):
            let book = try ctx.insert("Book")
            try book.setValue(isbn, forKey: "isbn")
            try book.setValue("a title", forKey: "title")
        case .insertTag(let label):
            try ctx.insert("Tag").setValue(label, forKey: "label")
        case .tag(let isbn, let label):
            try one("Book", "isbn", isbn).addObject(try one("Tag", "label", label), forKey: "tags")
        case .untag(let isbn, let label):
            // From the other side: the tag lets go of the book.
            try one("Tag", "label", label).removeObject(try one("Book", "isbn", isbn), forKey: "books")
        case .addChapter(let isbn, let heading):
            let chapter = try ctx.insert("Chapter")
            try chapter.setValue(heading, forKey: "heading")
            try chapter.setObject(try one("Book", "isbn", isbn), forKey: "book")
        case .moveChapter(let heading, let isbn):
            try one("Chapter", "heading", heading).setObject(try isbn.map { try one("Book", "isbn", $0) }, forKey: "book")
        case .reverseChapters(let isbn):
            let book = try one("Book", "isbn", isbn)
            try book.setObjects(try book.objects(forKey: "chapters").reversed(), forKey: "chapters")
        case .deleteBook(let isbn): try ctx.delete(try one("Book", "isbn", isbn))
        case .deleteTag(let label): try ctx.delete(try one("Tag", "label", label))
        case .deleteChapter(let heading): try ctx.delete(try one("Chapter", "heading", heading))
        case .save, .saveParent: try ctx.save()
        case .rollback: ctx.rollback()
        }
    }

    /// The graph as `ctx` reads it, every relationship from both sides.
    static func graph(in ctx: isolated ObjectContext) throws -> Graph {
        try graph { try ctx.fetch(FetchRequest(entityName: $0)) }
    }

    /// The graph as `fetch` (every object of an entity) and the objects it returns read it.
    static func graph(fetching fetch: (String) throws -> [ManagedObject]) throws -> Graph {
        func text(_ object: ManagedObject, _ key: String) throws -> String {
            guard case .string(let value) = try object.value(forKey: key) else { return "-" }
            return value
        }
        var graph = Graph()
        for book in try fetch("Book") {
            graph.books[try text(book, "isbn")] = (Set(try book.objects(forKey: "tags").map { try text($0, "label") }),
                                                   try book.objects(forKey: "chapters").map { try text($0, "heading") })
        }
        for tag in try fetch("Tag") {
            graph.tags[try text(tag, "label")] = Set(try tag.objects(forKey: "books").map { try text($0, "isbn") })
        }
        for chapter in try fetch("Chapter") {
            // Kept with no book too: assigning a nil `String?` through the subscript would remove the entry.
            let book: String? = try chapter.object(forKey: "book").map { try text($0, "isbn") }
            graph.chapters.updateValue(book, forKey: try text(chapter, "heading"))
        }
        return graph
    }
}

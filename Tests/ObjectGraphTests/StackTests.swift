import Foundation
import Testing
@testable import ObjectGraph

/// The seeds' example entity: a book with a name and an author.
@Entity
final class Book: ManagedObject {
    @Attribute(minLength: 1) var name: String = "Untitled"
    var author: String?
}

/// Counts calls, to check completions run exactly once.
@MainActor final class CallCounter {
    var calls = 0
    var errors: [String] = []
}

@MainActor
func waitFor<T: Sendable>(_ start: (@escaping @MainActor (T) -> Void) -> Void) async -> T {
    await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
}

@MainActor
@Suite struct StackTests {
    static let model: Model = try! Model([Book.self])

    func makeStack(_ layout: DataStack.Layout, _ folder: TemporaryFolder) throws -> DataStack {
        try DataStack(databaseFileName: "db.sqlite", directory: folder.url, model: Self.model, layout: layout)
    }

    /// Reads the file through a coordinator of its own: what is on disk.
    func onDisk(_ folder: TemporaryFolder, _ format: String = "TRUEPREDICATE") async throws -> [String] {
        let coordinator = try PersistentStoreCoordinator(model: Self.model, storeURL: folder.url.appendingPathComponent("db.sqlite"))
        return try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.fetch(Book.self, sortedBy: ["name"], where: format).map(\.name)
        }
    }

    @Test(arguments: DataStack.Layout.allCases)
    func theMainThreadHelpersAsTheSeedsUseThem(_ layout: DataStack.Layout) async throws {
        let folder = try TemporaryFolder()
        let stack = try makeStack(layout, folder)
        let napoleon = try Book.insert(into: stack) { $0.name = "拿破仑"; $0.author = "约翰史蒂芬" }
        try Book.insert(into: stack) { $0.name = "滑铁卢"; $0.author = "约翰史蒂芬" }
        try Book.insert(into: stack) { $0.name = "Other"; $0.author = "Someone" }
        #expect(napoleon.name == "拿破仑")
        let books = try Book.items(in: stack, where: "author = %@", "约翰史蒂芬")
        #expect(books.map(\.name) == ["拿破仑", "滑铁卢"])
        let found = try Book.last(in: stack, where: "name = %@ && author = %@", "拿破仑", "约翰史蒂芬")
        #expect(found === napoleon)
        #expect(try Book.first(in: stack, where: "author = %@", "约翰史蒂芬")?.name == "拿破仑")
        #expect(try Book.last(in: stack, where: "author = %@", "约翰史蒂芬")?.name == "滑铁卢")
        #expect(try Book.one(in: stack, where: "name = %@", "Nobody") == nil)
        #expect(try Book.filter(in: stack, orderBy: ["-name"], offset: 1, limit: 1).map(\.name) == ["拿破仑"])
        #expect(try await onDisk(folder).isEmpty)
        try await stack.save()
        #expect(try await onDisk(folder) == ["Other", "拿破仑", "滑铁卢"])
        try napoleon.delete(in: stack)
        try Book.delete(try Book.items(in: stack, where: "author = %@", "Someone"), in: stack)
        try await stack.save()
        #expect(try await onDisk(folder) == ["滑铁卢"])
        #expect(try Book.items(in: stack, where: "TRUEPREDICATE").map(\.name) == ["滑铁卢"])
    }

    @Test(arguments: DataStack.Layout.allCases)
    func saveCompletionsRunExactlyOnceOnTheMainActorWithTheFirstError(_ layout: DataStack.Layout) async throws {
        let folder = try TemporaryFolder()
        let stack = try makeStack(layout, folder)
        let counter = CallCounter()
        // Nothing to save: still exactly one call, without an error.
        let empty: String? = await waitFor { done in
            stack.save { error in
                MainActor.assertIsolated()
                counter.calls += 1
                done(error.map { "\($0)" })
            }
        }
        #expect(empty == nil && counter.calls == 1)
        try Book.insert(into: stack) { $0.name = "" }
        let failure: String? = await waitFor { done in
            stack.save { error in
                counter.calls += 1
                done(error.map { "\($0)" })
            }
        }
        #expect(counter.calls == 2)
        #expect(failure?.contains("Book.name") == true && failure?.contains("length 0 is shorter than 1") == true, "\(failure ?? "no error")")
        #expect(try await onDisk(folder).isEmpty)
        await stack.main.perform { _ in }
        #expect(counter.calls == 2)
    }

    @Test(arguments: DataStack.Layout.allCases)
    func backgroundWorkSavesToDiskAndReportsErrors(_ layout: DataStack.Layout) async throws {
        let folder = try TemporaryFolder()
        let stack = try makeStack(layout, folder)
        let id = try await stack.background { db in
            let book = try db.insert(Book.self)
            book.name = "拿破仑"
            book.author = "约翰史蒂芬"
            return book.objectID
        }
        #expect(try await onDisk(folder) == ["拿破仑"])
        // The main context finds it, by ID and by fetch.
        let name = try stack.onMain { ctx in try ctx.existingObject(with: id, as: Book.self).name }
        #expect(name == "拿破仑")
        #expect(try Book.items(in: stack, where: "author = %@", "约翰史蒂芬").count == 1)
        let counter = CallCounter()
        let failure: String? = await waitFor { done in
            stack.asyncBackground({ db in
                try db.insert(Book.self).name = "Kept?"
                throw ObjectGraphError.invalidFetch(entity: "Book", reason: "the block failed on purpose")
            }, completion: { error in
                counter.calls += 1
                done(error.map { "\($0)" })
            })
        }
        #expect(failure?.contains("the block failed on purpose") == true && counter.calls == 1)
        #expect(try await onDisk(folder) == ["拿破仑"])
        let success: String? = await waitFor { done in
            stack.asyncBackground({ db in try db.insert(Book.self).name = "Second" }, completion: { done($0.map { "\($0)" }) })
        }
        #expect(success == nil)
        #expect(try await onDisk(folder) == ["Second", "拿破仑"])
        let viaMain: String? = await waitFor { done in
            stack.asyncMain({ db in try db.insert(Book.self).name = "From main" }, completion: { done($0.map { "\($0)" }) })
        }
        #expect(viaMain == nil)
        try await stack.save()
        #expect(try await onDisk(folder) == ["From main", "Second", "拿破仑"])
        let count = try await stack.onMainContext { ctx in try ctx.count(for: Book.fetchRequest()) }
        #expect(count == 3)
        let worker = stack.newContext()
        let seen = try await worker.perform { ctx in try ctx.count(for: Book.fetchRequest()) }
        #expect(seen == 3)
    }

    @Test(arguments: DataStack.Layout.allCases)
    func theAsynchronousFilterCompletesExactlyOnceWithMainContextObjects(_ layout: DataStack.Layout) async throws {
        let folder = try TemporaryFolder()
        let stack = try makeStack(layout, folder)
        try await stack.background { db in
            for name in ["拿破仑", "滑铁卢", "厄尔巴岛"] {
                let book = try db.insert(Book.self)
                book.name = name
                book.author = "约翰史蒂芬"
            }
        }
        let books = try await stack.filter(Book.self, where: "author = %@", "约翰史蒂芬", orderBy: ["-name"], limit: 2)
        #expect(books.count == 2)
        let inMain = stack.onMain { ctx in books.allSatisfy { ctx.owns($0) } }
        #expect(inMain)
        let counter = CallCounter()
        let (none, noError): ([String], String?) = await waitFor { done in
            stack.filter(Book.self, where: "author = %@", "Nobody") { results, error in
                counter.calls += 1
                done((results.map(\.name), error.map { "\($0)" }))
            }
        }
        #expect(none.isEmpty && noError == nil)
        let (_, badFormat): ([String], String?) = await waitFor { done in
            stack.filter(Book.self, where: "author = = %@", "x") { results, error in
                counter.calls += 1
                done((results.map(\.name), error.map { "\($0)" }))
            }
        }
        #expect(badFormat?.contains("expected a value after '='") == true)
        let (_, badKey): ([String], String?) = await waitFor { done in
            stack.filter(Book.self, where: "nmae = %@", "x") { results, error in
                counter.calls += 1
                done((results.map(\.name), error.map { "\($0)" }))
            }
        }
        #expect(badKey?.contains("no property 'nmae'") == true)
        await stack.main.perform { _ in }
        #expect(counter.calls == 3)
    }

    @Test func bothLayoutsGiveTheSameResultsForTheSameScript() async throws {
        var results: [[String]] = []
        for layout in DataStack.Layout.allCases {
            let folder = try TemporaryFolder()
            let stack = try makeStack(layout, folder)
            var log: [String] = []
            try Book.insert(into: stack) { $0.name = "拿破仑"; $0.author = "约翰史蒂芬" }
            try await stack.background { db in
                for index in 0..<20 {
                    let book = try db.insert(Book.self)
                    book.name = "Book \(index)"
                    book.author = index % 2 == 0 ? "约翰史蒂芬" : "Other"
                }
            }
            try await stack.save()
            log.append("\(try Book.items(in: stack, where: "author = %@", "约翰史蒂芬").count)")
            try Book.delete(try Book.filter(in: stack, where: "author = %@", "Other", orderBy: ["name"], limit: 3), in: stack)
            try await stack.background { db in
                for book in try db.fetch(Book.self, where: "name BEGINSWITH %@", "Book 1") { book.author = "Renamed" }
            }
            try await stack.save()
            log.append(try Book.filter(in: stack, orderBy: ["author", "-name"]).map { "\($0.name)|\($0.author ?? "-")" }.joined(separator: ","))
            log.append(try await onDisk(folder).joined(separator: ","))
            log.append(try await stack.filter(Book.self, where: "author != %@", "Renamed", orderBy: ["name"]).map(\.name).joined(separator: ","))
            results.append(log)
        }
        #expect(results[0] == results[1])
        #expect(results[0][0] == "11")
    }

    /// A context that merges other contexts' saves goes when nothing else holds it, and stops hearing them: the
    /// sibling layout makes one such context per background call, and each one left behind would merge every later
    /// save.
    @Test func aMergingContextIsFreedWhenNothingHoldsIt() throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: Self.model)
        let hub = coordinator.hub
        let before = hub.subscriberCount
        weak var released: ObjectContext?
        do {
            let context = ObjectContext(coordinator: coordinator, name: "worker")
            context.performAndWait { ctx in ctx.automaticallyMergesChangesFromParent = true }
            #expect(hub.subscriberCount == before + 1)
            released = context
        }
        #expect(released == nil)
        #expect(hub.subscriberCount == before)
    }

    /// A stack's background context goes once its work is saved, in either layout: each background call makes one.
    @Test(arguments: DataStack.Layout.allCases)
    func aBackgroundContextIsFreedOnceItsWorkIsSaved(_ layout: DataStack.Layout) async throws {
        let folder = try TemporaryFolder()
        let stack = try makeStack(layout, folder)
        let hubs = [stack.coordinator.hub, stack.main.hub, stack.writer.hub]
        // The stack sets up main's and the writer's merging on their queues: let that run first.
        _ = try await stack.main.perform { ctx in try ctx.count(for: Book.fetchRequest()) }
        _ = try await stack.writer.perform { ctx in try ctx.count(for: Book.fetchRequest()) }
        let before = hubs.map(\.subscriberCount)
        weak var released: ObjectContext?
        do {
            let worker = stack.newContext()
            released = worker
            try await worker.perform { ctx in
                let book = try ctx.insert(Book.self)
                book.name = "Dune"
                _ = try ctx.fetch(Book.fetchRequest(), as: Book.self)
                try ctx.save()
            }
        }
        // The layout's own merges of that save run on main and the writer; wait for them. The worker's queue may
        // still be letting go of the job that ran the save: wait for the worker itself to go, a bounded number of
        // turns.
        _ = try await stack.main.perform { ctx in try ctx.count(for: Book.fetchRequest()) }
        _ = try await stack.writer.perform { ctx in try ctx.count(for: Book.fetchRequest()) }
        for _ in 0..<10_000 where released != nil { await Task.yield() }
        #expect(released == nil)
        #expect(hubs.map(\.subscriberCount) == before)
    }

    @Test func aStackIsRegisteredOnceAndTheHelpersUseIt() async throws {
        let folder = try TemporaryFolder()
        let previous = DataStack.shared
        defer { DataStack.shared = previous }
        DataStack.shared = nil
        #expect(throws: ObjectGraphError.self) { try Book.items(where: "TRUEPREDICATE") }
        let stack = try DataStack.register(databaseFileName: "registered.sqlite", directory: folder.url, model: Self.model)
        #expect(DataStack.shared === stack)
        try Book.insert { $0.name = "拿破仑"; $0.author = "约翰史蒂芬" }
        #expect(try Book.one(where: "author = %@", "约翰史蒂芬")?.name == "拿破仑")
    }
}

import Foundation
import PredicateFormat
import Testing
@testable import ObjectGraph

/// One step of the generated script, replayable in any context: books are named by their ISBN serial.
enum ScriptStep: Sendable {
    case insert(serial: Int, title: String, pages: Int, author: String?)
    case update(serial: Int, title: String?, pages: Int?, author: String??)
    case delete(serial: Int)
    case save
    case fetch(format: String, sortKeys: [String], caseInsensitive: Bool, offset: Int, limit: Int?)
}

func isbn(_ serial: Int) -> String { String(format: "%03d-%04d", serial / 10_000, serial % 10_000) }

extension ObjectContext {
    func apply(_ step: ScriptStep) throws {
        func book(_ serial: Int) throws -> ManagedObject {
            let found = try fetch(FetchRequest(entityName: "Book", predicate: try FormatPredicate("isbn == %@", isbn(serial))))
            guard let book = found.first else { throw ObjectGraphError.invalidFetch(entity: "Book", reason: "no book \(serial)") }
            return book
        }
        func author(_ name: String?) throws -> ManagedObject? {
            guard let name else { return nil }
            return try fetch(FetchRequest(entityName: "Author", predicate: try FormatPredicate("name == %@", name))).first
        }
        switch step {
        case let .insert(serial, title, pages, authorName):
            let book = try insert("Book")
            try book.setValue(isbn(serial), forKey: "isbn")
            try book.setValue(title, forKey: "title")
            try book.setValue(pages, forKey: "pages")
            try book.setObject(try author(authorName), forKey: "author")
        case let .update(serial, title, pages, authorName):
            let book = try book(serial)
            if let title { try book.setValue(title, forKey: "title") }
            if let pages { try book.setValue(pages, forKey: "pages") }
            if let authorName { try book.setObject(try author(authorName), forKey: "author") }
        case .delete(let serial):
            try delete(try book(serial))
        case .save:
            try save()
        case .fetch:
            break
        }
    }

    func run(_ step: ScriptStep) throws -> [String] {
        guard let request = try request(for: step) else { return [] }
        return try codes(fetch(request))
    }

    /// The fetch step's request.
    func request(for step: ScriptStep) throws -> FetchRequest? {
        guard case let .fetch(format, sortKeys, caseInsensitive, offset, limit) = step else { return nil }
        var request = FetchRequest(entityName: "Book", predicate: try FormatPredicate(format))
        request.sortKeys = sortKeys.map { SortKey($0, comparison: caseInsensitive ? .caseInsensitive : .standard) }
        request.fetchOffset = offset
        request.fetchLimit = limit
        return request
    }

    /// Each book's ISBN, with its author's name when `withAuthors`.
    func codes(_ books: some Sequence<ManagedObject>, withAuthors: Bool = false) throws -> [String] {
        try books.map { book in
            guard case .string(let code) = try book.value(forKey: "isbn") else { return "?" }
            guard withAuthors else { return code }
            guard let author = try book.object(forKey: "author") else { return code + " by nobody" }
            return code + " by \(try author.value(forKey: "name"))"
        }
    }

    /// The fetch step's results read every way a request can be read: as faults, with relationships prefetched, in
    /// batches, as IDs and as a count. Each way's results, by way.
    func runEveryWay(_ step: ScriptStep) throws -> [String: [String]] {
        guard let plain = try request(for: step) else { return [:] }
        var results: [String: [String]] = [:]
        results["plain"] = try codes(fetch(plain), withAuthors: true)
        var faults = plain
        faults.returnsObjectsAsFaults = true
        results["faults"] = try codes(fetch(faults), withAuthors: true)
        var prefetching = plain
        prefetching.relationshipKeyPathsForPrefetching = ["author", "author.books", "chapters"]
        results["prefetching"] = try codes(fetch(prefetching), withAuthors: true)
        prefetching.returnsObjectsAsFaults = true
        results["prefetching faults"] = try codes(fetch(prefetching), withAuthors: true)
        var batched = prefetching
        batched.fetchBatchSize = 2
        results["batched"] = try codes(fetchResults(batched), withAuthors: true)
        let ids = try fetchObjectIDs(plain)
        results["IDs"] = try codes(ids.map { try existingObject(with: $0) }, withAuthors: true)
        results["count"] = ["\(try count(for: plain))"]
        return results
    }
}

@Suite struct FetchConsistencyTests {
    static let authors = ["Émile", "anna", "Bruno"]
    static let titles = ["alpha", "Alpha", "beta", "Gamma", "delta", "Éclair", "zeta"]
    static let formats = [
        "pages > 20", "pages <= 10 OR title BEGINSWITH[c] 'a'", "author.name == 'anna'", "author == nil", "title IN {'beta', 'zeta', 'Alpha'}",
        "NOT author.name BEGINSWITH 'B' AND pages BETWEEN {5, 40}", "TRUEPREDICATE", "title CONTAINS[cd] 'E'", "pages != 13",
        // Equalities on attributes: pending layers answer these from an index.
        "title == 'beta'", "pages == 13 OR pages == 14", "title == 'Alpha' AND pages > 10",
    ]
    static let sorts: [[String]] = [["pages"], ["-pages"], ["title", "-pages"], ["author.name", "pages"], ["-title"], []]

    static func script(seed: UInt64, steps: Int) -> [ScriptStep] {
        var random = SplitMix(seed: seed)
        var alive: [Int] = Array(0..<30)
        var next = 30
        var script: [ScriptStep] = []
        for _ in 0..<steps {
            switch random.below(10) {
            case 0, 1, 2:
                script.append(.insert(serial: next, title: titles[random.below(titles.count)], pages: 1 + random.below(50),
                                      author: random.below(4) == 0 ? nil : authors[random.below(authors.count)]))
                alive.append(next)
                next += 1
            case 3, 4:
                guard !alive.isEmpty else { continue }
                let author: String?? = random.below(2) == 0 ? .none : .some(random.below(3) == 0 ? nil : authors[random.below(authors.count)])
                script.append(.update(serial: alive[random.below(alive.count)], title: random.below(2) == 0 ? titles[random.below(titles.count)] : nil,
                                      pages: random.below(2) == 0 ? 1 + random.below(50) : nil, author: author))
            case 5:
                guard !alive.isEmpty else { continue }
                script.append(.delete(serial: alive.remove(at: random.below(alive.count))))
            case 6:
                script.append(.save)
            default:
                script.append(.fetch(format: formats[random.below(formats.count)], sortKeys: sorts[random.below(sorts.count)],
                                     caseInsensitive: random.below(3) == 0, offset: random.below(3) == 0 ? random.below(5) : 0,
                                     limit: random.below(2) == 0 ? 1 + random.below(8) : nil))
            }
        }
        return script
    }

    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func below(_ n: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(n))
        }
    }

    /// Faults, prefetching, batches, IDs and counts read the same books, with the same authors, as a plain fetch,
    /// over stored rows, unsaved changes and a parent's unsaved layers.
    @Test(arguments: [2026, 7] as [UInt64], [false, true])
    func everyWayOfReadingAFetchReadsTheSameBooks(seed: UInt64, layered: Bool) async throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        let root = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL), name: "root")
        try await root.perform { ctx in
            for name in Self.authors { try ctx.insert("Author").setValue(name, forKey: "name") }
            try ctx.save()
            for serial in 0..<30 {
                try ctx.apply(.insert(serial: serial, title: Self.titles[serial % Self.titles.count], pages: 1 + (serial * 7) % 50,
                                      author: serial % 4 == 0 ? nil : Self.authors[serial % 3]))
            }
            try ctx.save()
        }
        let context = layered ? ObjectContext(parent: root, name: "child") : root
        var fetches = 0
        for (index, step) in Self.script(seed: seed, steps: 160).enumerated() {
            guard case .fetch = step else {
                try await context.perform { ctx in try ctx.apply(step) }
                continue
            }
            let results = try await context.perform { ctx in try ctx.runEveryWay(step) }
            let plain = try #require(results["plain"])
            for (way, books) in results.sorted(by: { $0.key < $1.key }) where way != "plain" {
                #expect(books == (way == "count" ? ["\(plain.count)"] : plain), "step \(index), \(way): \(step)")
            }
            fetches += 1
        }
        #expect(fetches >= 40)
    }

    /// With `layered`, the script runs in a child whose saves become layers in a root that never saves: fetches
    /// then read through the root's published view or its layers, with the child's own unsaved changes on top.
    @Test(arguments: [2026, 7] as [UInt64], [false, true])
    func fetchesOverUnsavedChangesMatchTheSameFetchAfterSavingThemToACopy(seed: UInt64, layered: Bool) async throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        let base = folder.url.appendingPathComponent("base.sqlite")
        do {
            let coordinator = try PersistentStoreCoordinator(model: model, storeURL: base)
            try await ObjectContext(coordinator: coordinator).perform { ctx in
                for name in Self.authors {
                    try ctx.insert("Author").setValue(name, forKey: "name")
                }
                try ctx.save()
                for serial in 0..<30 {
                    try ctx.apply(.insert(serial: serial, title: Self.titles[serial % Self.titles.count], pages: 1 + (serial * 7) % 50,
                                          author: serial % 4 == 0 ? nil : Self.authors[serial % 3]))
                }
                try ctx.save()
            }
            _ = try await (coordinator.store as! SQLiteStore).writer.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        }
        let working = folder.url.appendingPathComponent("working.sqlite")
        try FileManager.default.copyItem(at: base, to: working)
        let script = Self.script(seed: seed, steps: 160)
        let root = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: working), name: "root")
        let context = layered ? ObjectContext(parent: root, name: "child") : root
        var fetches = 0
        var nonEmpty = 0
        for (index, step) in script.enumerated() {
            guard case .fetch = step else {
                try await context.perform { ctx in try ctx.apply(step) }
                continue
            }
            let pending = try await context.perform { ctx in try ctx.run(step) }
            // The same changes, saved into a fresh copy of the starting store, then the same fetch.
            let copy = folder.url.appendingPathComponent("copy-\(index).sqlite")
            try FileManager.default.copyItem(at: base, to: copy)
            let replay = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: copy))
            let saved = try await replay.perform { ctx in
                for earlier in script[..<index] { try ctx.apply(earlier) }
                try ctx.save()
                return try ctx.run(step)
            }
            #expect(pending == saved, "step \(index): \(step)")
            fetches += 1
            if !pending.isEmpty { nonEmpty += 1 }
        }
        #expect(fetches >= 40 && nonEmpty >= 30, "\(fetches) fetches, \(nonEmpty) non-empty")
    }
}

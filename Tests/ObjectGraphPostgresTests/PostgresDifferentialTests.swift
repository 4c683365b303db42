import Foundation
import ObjectGraph
import PredicateFormat
import Testing

/// The PostgreSQL dialect against the evaluator: the same random library in the in-memory store (which filters
/// with the evaluator) and in PostgreSQL, and the same random predicates, must select the same objects.
@Suite struct PostgresDifferentialTests {
    static let words = ["Émile", "émile", "EMILE", "Straße", "STRASSE", "ZOË", "zoë", "Zoe", "ann", "Ann*", "O'Brien",
                        "拿破仑", "", "a", "ab", "abc", "Σίσυφος", "ΣΊΣΥΦΟΣ", "naïve", "naive", "x-y", "x_y", "50%", "a\\b"]

    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &self)! }
        mutating func chance(_ n: Int) -> Bool { Int.random(in: 0..<n, using: &self) == 0 }

        mutating func word() -> FormatExpression { .constant(.string(pick(PostgresDifferentialTests.words))) }
        mutating func options() -> Comparison.Options { pick([[], [.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive]]) }

        mutating func stringComparison(_ key: FormatExpression, modifier: Comparison.Modifier = .direct) -> FormatPredicate {
            let op = pick([Comparison.Operator.equal, .notEqual, .less, .greater, .beginsWith, .endsWith, .contains, .like, .matches, .in])
            var right = word()
            switch op {
            case .like:
                if case .constant(.string(let text)) = right { right = .constant(.string(pick(["*", "?", ""]) + text.prefix(2) + pick(["*", "?", ""]))) }
            case .matches: right = .constant(.string(pick([".*", "[a-zé]+", "Z.*", "(ann|zoë)", "..", "x[-_]y", "a.*"])))
            case .in: right = .aggregate((0..<Int.random(in: 0...3, using: &self)).map { _ in word() })
            default: break
            }
            return .comparison(Comparison(key, op, right, modifier: modifier, options: options()))
        }

        mutating func number(_ range: ClosedRange<Int>) -> FormatExpression {
            let value = Int.random(in: range, using: &self)
            return chance(3) ? .constant(.double(Double(value) + 0.5)) : .constant(.int(Int64(value)))
        }

        mutating func numberComparison(_ key: FormatExpression, _ range: ClosedRange<Int>, modifier: Comparison.Modifier = .direct) -> FormatPredicate {
            let op = pick([Comparison.Operator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .in])
            let right: FormatExpression = switch op {
            case .between: .aggregate([number(range), number(range)])
            case .in: .aggregate((0..<Int.random(in: 0...3, using: &self)).map { _ in number(range) })
            default: number(range)
            }
            return .comparison(Comparison(key, op, right, modifier: modifier))
        }

        mutating func comparison() -> FormatPredicate {
            switch Int.random(in: 0..<11, using: &self) {
            case 0: return stringComparison(.keyPath(["title"]))
            case 1: return stringComparison(.keyPath(["isbn"]))
            case 2: return stringComparison(.keyPath(["author", "name"]))
            case 3: return numberComparison(.keyPath(["pages"]), 0...90)
            case 4: return numberComparison(.keyPath(["price"]), -5...5)
            case 5: return .comparison(Comparison(.keyPath(["inPrint"]), pick([.equal, .notEqual]), .constant(pick([.bool(true), .bool(false)]))))
            case 6: return .comparison(Comparison(.keyPath([pick(["isbn", "author"])]), pick([.equal, .notEqual]), .constant(.null)))
            case 7: return stringComparison(.keyPath(["tags", "label"]), modifier: pick([.any, .all, .none]))
            case 8: return numberComparison(.collection(.count, of: .keyPath(["tags"]), key: []), 0...3)
            case 9: return stringComparison(.keyPath(["chapters", "heading"]), modifier: pick([.any, .all, .none]))
            default: return .constant(chance(2))
            }
        }

        mutating func predicate(depth: Int = 0) -> FormatPredicate {
            guard depth < 3, !chance(3) else { return comparison() }
            switch Int.random(in: 0..<3, using: &self) {
            case 0: return .and((0..<Int.random(in: 2...3, using: &self)).map { _ in predicate(depth: depth + 1) })
            case 1: return .or((0..<Int.random(in: 2...3, using: &self)).map { _ in predicate(depth: depth + 1) })
            default: return .not(predicate(depth: depth + 1))
            }
        }
    }

    /// The same objects, inserted in the same order (so with the same keys) into `coordinator`.
    func fill(_ coordinator: PersistentStoreCoordinator) async throws {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            var random = Generator(state: 2026)
            var authors: [ManagedObject] = []
            for _ in 0..<6 {
                let author = try ctx.insert("Author")
                try author.setValue(random.pick(Self.words), forKey: "name")
                authors.append(author)
            }
            var tags: [ManagedObject] = []
            for _ in 0..<8 {
                let tag = try ctx.insert("Tag")
                try tag.setValue(random.pick(Self.words), forKey: "label")
                tags.append(tag)
            }
            for index in 0..<60 {
                let book = try ctx.insert("Book")
                try book.setValue(random.pick(Self.words), forKey: "title")
                try book.setValue(random.chance(2) ? nil : random.pick(Self.words) + "\(index)", forKey: "isbn")
                try book.setValue(Int.random(in: 0...90, using: &random), forKey: "pages")
                try book.setValue(Double(Int.random(in: -20...20, using: &random)) / 4, forKey: "price")
                try book.setValue(random.chance(2), forKey: "inPrint")
                if !random.chance(6) { try book.setObject(random.pick(authors), forKey: "author") }
                try book.setObjects(tags.filter { _ in random.chance(4) }, forKey: "tags")
                for _ in 0..<Int.random(in: 0...3, using: &random) {
                    let chapter = try ctx.insert("Chapter")
                    try chapter.setValue(random.pick(Self.words), forKey: "heading")
                    try chapter.setObject(book, forKey: "book")
                }
            }
            try ctx.save()
        }
    }

    @Test(arguments: [42, 7] as [UInt64])
    func postgresAndTheEvaluatorAgreeOn300GeneratedPredicates(seed: UInt64) async throws {
        let model = try Library.model()
        let memory = PersistentStoreCoordinator.inMemory(model: model)
        let postgres = try await TestStore.make(.postgres, model: model)
        defer { Task { await postgres.remove() } }
        try await fill(memory)
        try await fill(postgres.coordinator)
        var generator = Generator(state: seed)
        var splitting = 0
        for _ in 0..<300 {
            let predicate = generator.predicate()
            let request = FetchRequest(entityName: "Book", predicate: predicate)
            let expected = try memory.store.fetchIDs(StoreFetchRequest(request)).map(\.rawKey)
            let actual: [Int64]
            do {
                actual = try postgres.coordinator.store.fetchIDs(StoreFetchRequest(request)).map(\.rawKey)
            } catch {
                Issue.record("\(predicate): \(error)")
                continue
            }
            #expect(Set(actual) == Set(expected), "\(predicate)\n  PostgreSQL only: \(Set(actual).subtracting(expected).sorted())\n  evaluator only: \(Set(expected).subtracting(actual).sorted())")
            if !expected.isEmpty && expected.count < 60 { splitting += 1 }
        }
        // Most predicates must split the books, or agreement would prove little.
        #expect(splitting > 120, "only \(splitting) predicates selected a proper subset")
    }
}

extension StoreFetchRequest {
    init(_ request: FetchRequest) {
        self.init(entityName: request.entityName)
        predicate = request.predicate
    }
}

import Foundation
import Testing
@testable import PredicateFormat

/// A resolved predicate is the evaluator reading keys by position: on every predicate that resolves, it selects the
/// rows the evaluator selects and throws what it throws; a predicate reading anything but a row's own values does
/// not resolve.
@Suite struct ResolvedPredicateTests {
    /// A person's own values, by position; `team`, `pets` and `tags` are relationships, which no row holds.
    static let positions = ["name": 0, "nick": 1, "age": 2, "score": 3, "active": 4, "born": 5]

    static func row(_ person: Library.Person) -> [PredicateValue] {
        [.string(person.name), person.nick.map(PredicateValue.string) ?? .null, .int(person.age), .double(person.score),
         .bool(person.active), .date(person.born)]
    }

    static func outcome(_ body: () throws(FormatPredicateError) -> Bool) -> String {
        do { return try body() ? "match" : "no match" } catch { return "throws \(error)" }
    }

    /// Judges every person both ways; returns whether the predicate resolved, and how many people it selected.
    static func check(_ predicate: FormatPredicate, in library: Library) -> (resolved: Bool, selected: Int) {
        guard let resolved = ResolvedPredicate(predicate, position: { positions[$0] }) else { return (false, 0) }
        var selected = 0
        for person in library.people {
            let source = Library.Source(library: library, entity: "Person", id: person.id)
            let expected = outcome { () throws(FormatPredicateError) in try predicate.evaluate(with: source) }
            let row = row(person)
            let actual = outcome { () throws(FormatPredicateError) in try resolved.evaluate { row[$0] } }
            #expect(actual == expected, "\(predicate) on person \(person.id)")
            if actual == "match" { selected += 1 }
        }
        return (true, selected)
    }

    @Test(arguments: [3, 11] as [UInt64])
    func generatedPredicatesSelectWhatTheEvaluatorSelects(seed: UInt64) {
        let library = Library(seed: 2026)
        var comparisons = PredicateGenerator(random: SeededGenerator(seed: seed))
        var expressions = ExpressionGenerator(seed: seed)
        var resolvedCount = 0, splitting = 0
        for index in 0..<3_000 {
            let predicate = index.isMultiple(of: 2) ? comparisons.predicate() : expressions.predicate()
            let (resolved, selected) = Self.check(predicate, in: library)
            if resolved { resolvedCount += 1 }
            if selected > 0 && selected < library.people.count { splitting += 1 }
        }
        // Enough resolve, and split the people, for the agreement to say something.
        #expect(resolvedCount > 600, "only \(resolvedCount) of 3,000 predicates resolved")
        #expect(splitting > 300, "only \(splitting) resolved predicates selected a proper subset")
    }

    @Test func functionsOfValuesResolveAndRelationshipsDoNot() throws {
        let library = Library(seed: 2026)
        for format in ["modulus:by:(age, 10) == 0", "age * 2 > 90 AND name BEGINSWITH[cd] 'e'", "nick == nil OR score IN {0.5, -1.25}",
                       "age BETWEEN {10, 40}", "NOT (active == YES)", "born < CAST(1000000, 'NSDate')"] {
            let predicate = try FormatPredicate(format: format, argumentArray: [])
            #expect(Self.check(predicate, in: library).resolved, "\(format)")
        }
        for format in ["team.title == 'a'", "ANY pets.legs > 2", "SELF == 3", "age == $limit", "pets.@count > 1",
                       "SUBQUERY(pets, $p, $p.legs > 2).@count > 0", "TERNARY(active == YES, age, 0) > 3", "shoeSize == 3",
                       "age IN {1, {2, 3}}"] {
            let predicate = try FormatPredicate(format: format, argumentArray: [])
            #expect(ResolvedPredicate(predicate, position: { Self.positions[$0] }) == nil, "\(format)")
        }
    }

    @Test func aTypeErrorIsTheEvaluatorsError() throws {
        let predicate = try FormatPredicate(format: "name > 3", argumentArray: [])
        let library = Library(seed: 2026)
        let resolved = try #require(ResolvedPredicate(predicate, position: { Self.positions[$0] }))
        let row = Self.row(library.people[0])
        let actual = Self.outcome { () throws(FormatPredicateError) in try resolved.evaluate { row[$0] } }
        #expect(actual.hasPrefix("throws"))
        #expect(Self.check(predicate, in: library).resolved)
    }
}

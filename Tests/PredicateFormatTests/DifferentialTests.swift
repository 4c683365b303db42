import Foundation
import GRDB
import Testing
@testable import PredicateFormat

/// Builds random predicates over the library's keys: every operator, option, modifier and aggregate.
struct PredicateGenerator {
    var random: SeededGenerator

    mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &random)! }
    mutating func chance(_ n: Int) -> Bool { Int.random(in: 0..<n, using: &random) == 0 }

    mutating func word() -> FormatExpression {
        var text = pick(Library.words)
        if chance(4) { text = String(text.prefix(Int.random(in: 0...2, using: &random))) }
        return .constant(.string(text))
    }

    mutating func number(_ range: ClosedRange<Int>) -> FormatExpression {
        let value = Int.random(in: range, using: &random)
        return chance(3) ? .constant(.double(Double(value) + (chance(2) ? 0.5 : 0))) : .constant(.int(Int64(value)))
    }

    mutating func options() -> Comparison.Options { pick([[], [.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive]]) }

    mutating func stringComparison(_ key: FormatExpression, modifier: Comparison.Modifier = .direct) -> FormatPredicate {
        let op = pick([Comparison.Operator.equal, .notEqual, .less, .greater, .beginsWith, .endsWith, .contains, .like, .matches, .in])
        var right = word()
        switch op {
        case .like:
            if case .constant(.string(let text)) = right { right = .constant(.string(pick(["*", "?", ""]) + text.prefix(2) + pick(["*", "?", ""]))) }
        case .matches:
            right = .constant(.string(pick([".*", "[a-zé]+", "Z.*", "(ann|zoë)", "..", "\\w*ß\\w*", "x[-_]y"])))
        case .in:
            right = chance(5) ? word() : .aggregate((0..<Int.random(in: 0...3, using: &random)).map { _ in word() })
        default:
            break
        }
        return .comparison(Comparison(key, op, right, modifier: modifier, options: op == .in || op == .equal || op == .notEqual || op == .less || op == .greater || op == .beginsWith || op == .endsWith || op == .contains || op == .like || op == .matches ? options() : []))
    }

    mutating func numberComparison(_ key: FormatExpression, _ range: ClosedRange<Int>, modifier: Comparison.Modifier = .direct) -> FormatPredicate {
        let op = pick([Comparison.Operator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .in])
        let right: FormatExpression = switch op {
        case .between: .aggregate([number(range), number(range)])
        case .in: .aggregate((0..<Int.random(in: 0...3, using: &random)).map { _ in number(range) })
        default: number(range)
        }
        return .comparison(Comparison(key, op, right, modifier: modifier))
    }

    mutating func comparison() -> FormatPredicate {
        switch Int.random(in: 0..<16, using: &random) {
        case 0: return stringComparison(.keyPath(["name"]))
        case 1: return stringComparison(.keyPath(["nick"]))
        case 2: return stringComparison(.keyPath(["team", "title"]))
        case 3: return numberComparison(.keyPath(["age"]), 0...90)
        case 4: return numberComparison(.keyPath(["score"]), -5...5)
        case 5: return numberComparison(.keyPath(["team", "rank"]), 0...5)
        case 6: return .comparison(Comparison(.keyPath(["active"]), pick([.equal, .notEqual]), .constant(pick([.bool(true), .bool(false), .int(1), .int(0)]))))
        case 7:
            let date = PredicateValue.date(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...100, using: &random)) * 1_000_000))
            return .comparison(Comparison(.keyPath(["born"]), pick([.equal, .less, .greaterOrEqual, .notEqual]), .constant(date)))
        case 8: return .comparison(Comparison(.keyPath([pick(["nick", "team"])]), pick([.equal, .notEqual]), .constant(.null)))
        case 9: return stringComparison(.keyPath(["pets", "name"]), modifier: pick([.direct, .any, .all, .none]))
        case 10: return numberComparison(.keyPath(["pets", "legs"]), 0...8, modifier: pick([.direct, .any, .all, .none]))
        case 11: return stringComparison(.keyPath(["tags", "label"]), modifier: pick([.direct, .any, .all, .none]))
        case 12:
            let op = pick(CollectionOperator.allCases)
            let base = FormatExpression.collection(op, of: .keyPath(["pets"]), key: op == .count ? [] : ["legs"])
            return numberComparison(base, 0...8)
        case 13:
            let sub = FormatExpression.subquery(collection: .keyPath(["pets"]), variable: "p",
                                                predicate: numberComparison(.member(.variable("p"), ["legs"]), 0...8))
            return numberComparison(.collection(.count, of: sub, key: []), 0...3)
        case 14: return .comparison(Comparison(word(), .in, .keyPath(["tags", "label"]), options: options()))
        default: return .constant(chance(2))
        }
    }

    mutating func predicate(depth: Int = 0) -> FormatPredicate {
        guard depth < 3, !chance(3) else { return comparison() }
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return .and((0..<Int.random(in: 2...3, using: &random)).map { _ in predicate(depth: depth + 1) })
        case 1: return .or((0..<Int.random(in: 2...3, using: &random)).map { _ in predicate(depth: depth + 1) })
        default: return .not(predicate(depth: depth + 1))
        }
    }
}

@Suite struct DifferentialTests {
    @Test(arguments: [42, 7] as [UInt64]) func evaluatorAndSQLiteAgreeOn600GeneratedPredicates(seed: UInt64) throws {
        let library = Library(seed: 2026)
        let (queue, url) = try openLibrary(library)
        defer { try? FileManager.default.removeItem(at: url) }
        var generator = PredicateGenerator(random: SeededGenerator(seed: seed))
        var nonTrivial = 0
        try queue.read { db in
            for _ in 0..<600 {
                let predicate = generator.predicate()
                let reparsed = try FormatPredicate(format: predicate.description, argumentArray: [])
                #expect(reparsed == predicate, "printing changed the tree: \(predicate)")
                let expected = try evaluatorMatches(predicate, in: library)
                let actual: Set<Int64>
                do {
                    actual = try sqlMatches(predicate, in: db)
                } catch {
                    Issue.record("\(predicate): \(error)")
                    continue
                }
                #expect(actual == expected, "\(predicate)\n  SQL only: \(actual.subtracting(expected).sorted())\n  evaluator only: \(expected.subtracting(actual).sorted())")
                if !expected.isEmpty && expected.count < library.people.count { nonTrivial += 1 }
            }
        }
        // Most predicates must split the data set, or agreement would prove little.
        #expect(nonTrivial > 250, "only \(nonTrivial) predicates selected a proper subset")
    }
}

import Foundation
import GRDB
import Testing
@testable import PredicateFormat

/// Builds random expressions over the library's keys (arithmetic, functions, aggregates, subscripts, TERNARY,
/// CAST) and predicates comparing them, each well typed, so both back ends must answer rather than refuse.
struct ExpressionGenerator {
    var base: PredicateGenerator

    init(seed: UInt64) { base = PredicateGenerator(random: SeededGenerator(seed: seed)) }

    mutating func pick<T>(_ items: [T]) -> T { base.pick(items) }
    mutating func chance(_ n: Int) -> Bool { base.chance(n) }
    mutating func integer(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &base.random) }

    mutating func numberConstant() -> FormatExpression {
        switch integer(0...9) {
        case 0: return .constant(.int(pick([Int64.max, Int64.min, Int64.max - 1, 9_007_199_254_740_993])))
        case 1: return .constant(.double(pick([0.5, -0.25, 1e10, 9_007_199_254_740_992.0, .infinity, -.infinity])))
        case 2: return .constant(.double(Double(integer(-40...40)) / 4))
        case 3: return .constant(.null)
        default: return .constant(.int(integer(-5...90)))
        }
    }

    /// An integer-valued leaf, for bitwise functions.
    mutating func integerLeaf() -> FormatExpression {
        pick([.keyPath(["age"]), .keyPath(["team", "rank"]), .constant(.int(integer(-3...70))), .collection(.count, of: .keyPath(["pets"]), key: [])])
    }

    mutating func numberLeaf() -> FormatExpression {
        switch integer(0...11) {
        case 0, 1: return .keyPath(["age"])
        case 2: return .keyPath(["score"])
        case 3: return .keyPath(["team", "rank"])
        case 4: return .collection(pick([.sum, .avg, .min, .max]), of: .keyPath(["pets"]), key: ["legs"])
        case 5: return .collection(.count, of: .keyPath(["pets"]), key: [])
        case 6: return .function(pick([.sum, .count, .min, .max, .average, .median, .stddev]), [.keyPath(["pets", "legs"])])
        case 7: return .function(pick([.sum, .max, .median, .average]), [.aggregate([.keyPath(["age"]), numberConstant(), .keyPath(["score"])])])
        case 8: return .subscripted(.keyPath(["pets"]), .size)
        case 9: return .subscripted(.aggregate([.keyPath(["age"]), .keyPath(["score"]), numberConstant()]), pick([.first, .last, .index(.constant(.int(integer(-1...3))))]))
        default: return numberConstant()
        }
    }

    mutating func numberExpression(depth: Int = 0) -> FormatExpression {
        guard depth < 3, !chance(3) else { return numberLeaf() }
        let next = depth + 1
        switch integer(0...12) {
        case 0, 1: return .function(pick([.add, .subtract, .multiply]), [numberExpression(depth: next), numberExpression(depth: next)])
        case 2: return .function(.divide, [numberExpression(depth: next), numberExpression(depth: next)])
        case 3: return .function(.modulus, [numberExpression(depth: next), pick([.constant(.int(integer(-4...7))), numberExpression(depth: next)])])
        case 4: return .function(.power, [numberExpression(depth: next), .constant(.int(integer(0...3)))])
        case 5: return .function(pick([.abs, .floor, .ceiling, .trunc, .sqrt, .ln, .log]), [numberExpression(depth: next)])
        case 6: return .function(.exp, [.function(.divide, [numberExpression(depth: next), .constant(.int(50))])])
        case 7: return .function(.subtract, [.constant(.int(0)), numberExpression(depth: next)])
        case 8: return .function(pick([.bitwiseAnd, .bitwiseOr, .bitwiseXor, .leftShift, .rightShift]), [integerLeaf(), pick([integerLeaf(), .constant(.int(integer(0...66)))])])
        case 9: return .function(.onesComplement, [integerLeaf()])
        case 10: return .ternary(base.predicate(depth: 2), numberExpression(depth: next), numberExpression(depth: next))
        case 11: return .function(.cast, [pick([.keyPath(["name"]), .keyPath(["nick"])]), .constant(.string("NSNumber"))])
        default: return .function(.cast, [.keyPath(["born"]), .constant(.string("NSNumber"))])
        }
    }

    /// A number expression that is not a constant: the parser folds a CAST of a constant into the constant.
    mutating func variableNumber() -> FormatExpression {
        let expression = numberExpression(depth: 2)
        if case .constant = expression { return .keyPath(["age"]) }
        return expression
    }

    mutating func stringExpression() -> FormatExpression {
        switch integer(0...5) {
        case 0: return .function(pick([.uppercase, .lowercase]), [pick([.keyPath(["name"]), .keyPath(["nick"]), .keyPath(["team", "title"])])])
        case 1: return .function(.cast, [variableNumber(), .constant(.string("NSString"))])
        case 2: return .ternary(base.predicate(depth: 2), .keyPath(["name"]), .keyPath(["nick"]))
        case 3: return .subscripted(.aggregate([.keyPath(["name"]), base.word()]), pick([.first, .last, .index(.keyPath(["team", "rank"]))]))
        default: return .function(pick([.min, .max]), [.keyPath(["tags", "label"])])
        }
    }

    mutating func dateExpression() -> FormatExpression {
        switch integer(0...2) {
        case 0: return .function(pick([.add, .subtract]), [.keyPath(["born"]), numberExpression(depth: 2)])
        case 1: return .function(.cast, [.function(.multiply, [.keyPath(["age"]), .constant(.int(1_000_000))]), .constant(.string("NSDate"))])
        default: return .function(pick([.min, .max]), [.aggregate([.keyPath(["born"]), .constant(.date(Date(timeIntervalSinceReferenceDate: 50_000_000)))])])
        }
    }

    mutating func comparison() -> FormatPredicate {
        switch integer(0...9) {
        case 0, 1, 2, 3:
            let op = pick([Comparison.Operator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
            return .comparison(Comparison(numberExpression(), op, chance(2) ? numberConstant() : numberExpression()))
        case 4:
            return .comparison(Comparison(numberExpression(), .between, .aggregate([numberConstant(), numberExpression(depth: 2)])))
        case 5:
            let op = pick([Comparison.Operator.equal, .notEqual, .less, .greater, .beginsWith, .contains, .like])
            return .comparison(Comparison(stringExpression(), op, base.word(), options: base.options()))
        case 6:
            let op = pick([Comparison.Operator.equal, .less, .greaterOrEqual])
            let date = PredicateValue.date(Date(timeIntervalSinceReferenceDate: Double(integer(0...100)) * 1_000_000))
            return .comparison(Comparison(dateExpression(), op, .constant(date)))
        case 7:
            let collection = pick([FormatExpression.collection(.distinctUnionOfObjects, of: .keyPath(["pets"]), key: ["legs"]),
                                   .function(.mode, [.keyPath(["pets", "legs"])]), .aggregate([.keyPath(["age"]), numberConstant()])])
            if chance(2) { return .comparison(Comparison(numberLeaf(), .in, collection)) }
            return .comparison(Comparison(collection, pick([.equal, .greater, .less]), numberConstant(), modifier: pick([.any, .all, .none])))
        case 8:
            return .comparison(Comparison(.function(.cast, [variableNumber(), .constant(.string("NSString"))]), .equal, .constant(.string(String(integer(0...9))))))
        default:
            return base.comparison()
        }
    }

    mutating func predicate(depth: Int = 0) -> FormatPredicate {
        guard depth < 2, !chance(2) else { return comparison() }
        switch integer(0...2) {
        case 0: return .and([predicate(depth: depth + 1), predicate(depth: depth + 1)])
        case 1: return .or([predicate(depth: depth + 1), predicate(depth: depth + 1)])
        default: return .not(predicate(depth: depth + 1))
        }
    }
}

@Suite struct ExpressionDifferentialTests {
    /// 3,000 predicates with arithmetic and functions, over two random libraries: the evaluator and SQLite select
    /// the same people, or both refuse with the same kind of error, and every predicate prints and parses back.
    @Test(arguments: [(2027, 11), (31, 5)] as [(UInt64, UInt64)])
    func evaluatorAndSQLiteAgreeOn1500Expressions(dataSeed: UInt64, seed: UInt64) throws {
        let library = Library(seed: dataSeed)
        let (queue, url) = try openLibrary(library)
        defer { try? FileManager.default.removeItem(at: url) }
        var generator = ExpressionGenerator(seed: seed)
        var nonTrivial = 0
        var refusedByBoth = 0
        try queue.read { db in
            for _ in 0..<1_500 {
                let predicate = generator.predicate()
                let reparsed = try FormatPredicate(format: predicate.description, argumentArray: [])
                #expect(reparsed == predicate, "printing changed the tree: \(predicate)")
                let expected: Result<Set<Int64>, any Error> = Result { try evaluatorMatches(predicate, in: library) }
                let actual: Result<Set<Int64>, any Error> = Result { try sqlMatches(predicate, in: db) }
                switch (expected, actual) {
                case (.success(let expected), .success(let actual)):
                    #expect(actual == expected, "\(predicate)\n  SQL only: \(actual.subtracting(expected).sorted())\n  evaluator only: \(expected.subtracting(actual).sorted())")
                    if !expected.isEmpty && expected.count < library.people.count { nonTrivial += 1 }
                case (.failure(let error), .failure(let sqlError)):
                    // Type errors: both refuse (SQL at compile time, the evaluator on the first row it reads).
                    #expect(sqlError is FormatPredicateError, "\(predicate): SQL failed at run time: \(sqlError)")
                    #expect(error is FormatPredicateError, "\(predicate): \(error)")
                    refusedByBoth += 1
                case (.failure(let error), .success):
                    Issue.record("\(predicate): only the evaluator refused: \(error)")
                case (.success, .failure(let error)):
                    Issue.record("\(predicate): only SQL refused: \(error)")
                }
            }
        }
        #expect(nonTrivial > 500, "only \(nonTrivial) predicates selected a proper subset")
        #expect(refusedByBoth < 150, "\(refusedByBoth) predicates were refused: the generator should make well-typed ones")
    }
}

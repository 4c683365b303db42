import Foundation
import GRDB
import Testing
@testable import PredicateFormat

/// The semantics both back ends must share, case by case: each format selects the same people in memory and in
/// SQLite, and the expected set is stated.
@Suite struct ExpressionSemanticsTests {
    static let library = Library(seed: 2026)

    /// The people each back end selects, which must be the same.
    func agreed(_ format: String, _ arguments: Any?...) throws -> Set<Int64> {
        let predicate = try FormatPredicate(format: format, argumentArray: arguments)
        let (queue, url) = try openLibrary(Self.library)
        defer { try? FileManager.default.removeItem(at: url) }
        let expected = try evaluatorMatches(predicate, in: Self.library)
        let actual = try queue.read { db in try sqlMatches(predicate, in: db) }
        #expect(actual == expected, "\(format)")
        return expected
    }

    var everyone: Set<Int64> { Set(Self.library.people.map(\.id)) }

    @Test func nanEqualsNothingAndOrdersWithNothing() throws {
        #expect(try agreed("score == %@", Double.nan).isEmpty)
        #expect(try agreed("score != %@", Double.nan) == everyone)
        #expect(try agreed("score > %@ OR score < %@ OR score >= %@", Double.nan, Double.nan, Double.nan).isEmpty)
        #expect(try agreed("NOT score > %@", Double.nan) == everyone)
        #expect(try agreed("score IN %@", [Double.nan]).isEmpty)
        // `== NaN` is not `== nil`: people without a team have a nil rank, and are not selected.
        #expect(try agreed("team.rank == %@", Double.nan).isEmpty)
        #expect(!(try agreed("team.rank == nil")).isEmpty)
        // NaN computed (0/0, √-1) is nil, as SQLite holds it.
        #expect(try agreed("age / 0 == nil") == everyone)
        #expect(try agreed("sqrt:(-1 - age) == nil") == everyone)
    }

    @Test func integersAndDoublesCompareExactly() throws {
        #expect(try agreed("9007199254740993 == 9007199254740992.0").isEmpty)
        #expect(try agreed("9007199254740993 > 9007199254740992.0") == everyone)
        #expect(try agreed("age + 9007199254740992 > 9007199254740992.0") == Set(Self.library.people.filter { $0.age > 0 }.map(\.id)))
        #expect(try agreed("9223372036854775807 < 9223372036854775808.0") == everyone)
    }

    @Test func integerArithmeticIsExactUntilItOverflowsToDouble() throws {
        #expect(try agreed("age * 2 == age + age") == everyone)
        #expect(try agreed("age - age == 0") == everyone)
        // Int64.max + 1 overflows to the Double 2^63, which is greater than Int64.max.
        #expect(try agreed("9223372036854775807 + 1 > 9223372036854775807") == everyone)
        // Int64.min - 1 overflows to the Double nearest -2^63 - 1, which is -2^63 itself.
        #expect(try agreed("-9223372036854775808 - 1 == -9223372036854775808") == everyone)
        #expect(try agreed("7 / 2 == 3.5") == everyone)
        #expect(try agreed("modulus:by:(-7, 2) == -1 AND modulus:by:(7.5, 2) == 1.5 AND modulus:by:(1, 0) == nil") == everyone)
        #expect(try agreed("abs:(-9223372036854775808) == 9223372036854775808.0") == everyone)
        #expect(try agreed("2 ** 10 == 1024 AND 2 ** 3 ** 2 == 512 AND -2 ** 2 == 4") == everyone)
        #expect(try agreed("leftshift:by:(1, 62) == 4611686018427387904 AND leftshift:by:(1, 64) == 0") == everyone)
    }

    @Test func aggregatesSkipNilAndCountEverything() throws {
        #expect(try agreed("sum:({}) == 0 AND average:({}) == nil AND count:({1, nil}) == 2 AND max:({1, nil, 3}) == 3") == everyone)
        #expect(try agreed("median:({1, 2, 3, 10}) == 2.5 AND stddev:({2, 4, 4, 4, 5, 5, 7, 9}) == 2") == everyone)
        #expect(try agreed("sum:({9223372036854775807, 1}) > 9223372036854775807") == everyone)
        let withPets = Set(Self.library.pets.map(\.owner))
        #expect(try agreed("count:(pets) > 0") == withPets)
        #expect(try agreed("pets[SIZE] == pets.@count AND count:(pets.legs) == pets.@count") == everyone)
        let modes = try agreed("ANY mode:(pets.legs) >= 0")
        #expect(modes == withPets)
    }

    @Test func datesCompareWithDatesAndMoveBySeconds() throws {
        let born = Self.library.people[0].born
        #expect(try agreed("born == %@", born).contains(1))
        #expect(try agreed("born + 60 - 60 == %@", born).contains(1))
        #expect(try agreed("born - CAST(0, 'NSDate') == %@", born.timeIntervalSinceReferenceDate).contains(1))
        #expect(try agreed("CAST(CAST(born, 'NSNumber'), 'NSDate') == born") == everyone)
    }

    @Test func valuesOfTwoFamiliesAreRefusedByBoth() throws {
        let (queue, url) = try openLibrary(Self.library)
        defer { try? FileManager.default.removeItem(at: url) }
        for format in ["born > 5", "name == 1", "age == 'x'", "name + 1 > 2", "uppercase:(age) == 'A'", "born * 2 > %@", "sum:(pets.name) > 1",
                       "abs:(name) > 1", "age IN {'a'}", "born BETWEEN {1, 2}"] {
            let predicate = try FormatPredicate(format: format, argumentArray: format.contains("%@") ? [Date()] : [])
            #expect(throws: FormatPredicateError.self, "\(format) in memory") { try evaluatorMatches(predicate, in: Self.library) }
            #expect(throws: FormatPredicateError.self, "\(format) in SQL") { try queue.read { db in try sqlMatches(predicate, in: db) } }
        }
    }

    @Test func substitutionReachesEveryExpression() throws {
        let template = try FormatPredicate("age * $factor > $limit AND TERNARY(active == $flag, 1, 0) == 1")
        #expect(template.unboundVariables == ["factor", "limit", "flag"])
        let bound = try template.withSubstitutionVariables(["factor": 2, "limit": 100, "flag": true])
        #expect(bound.unboundVariables.isEmpty)
        #expect(bound.description == "age * 2 > 100 AND TERNARY(active == TRUE, 1, 0) == 1")
        let expression = try FormatExpression("sum:(pets.legs) * $k").withSubstitutionVariables(["k": 3])
        #expect(expression.description == "sum:(pets.legs) * 3")
    }
}

import Foundation
import Testing
@testable import PredicateFormat

/// Parses are kept by format and arguments; a kept parse must only ever stand for exactly its own format and
/// arguments, whatever else shares its slot.
@Suite struct ParseCacheTests {
    /// The tree a format with one integer argument must give.
    func comparison(_ key: String, _ value: PredicateValue) -> FormatPredicate {
        .comparison(Comparison(.keyPath([key]), .equal, .constant(value)))
    }

    /// Far more formats and arguments than the cache has slots, twice over: every parse, fresh or kept, is its own.
    @Test func manyParsesSharingSlotsEachGiveTheirOwnTree() throws {
        for _ in 0..<2 {
            for number in 0..<3_000 {
                let key = "k\(number % 7)"
                #expect(try FormatPredicate("\(key) == %@", number) == comparison(key, .int(Int64(number))))
                #expect(try FormatPredicate("\(key) == %@", "v\(number)") == comparison(key, .string("v\(number)")))
            }
        }
    }

    /// Values equal in Swift but different to SQLite (or to the predicate's types) are different parses.
    @Test func argumentsThatDifferInTypeOrBytesAreDifferentParses() throws {
        let precomposed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        for _ in 0..<2 {
            // Swift's == on the trees would call both equal: the bytes are what must differ.
            for text in [precomposed, decomposed] {
                let parsed = try FormatPredicate("name == %@", text)
                guard case .comparison(let found) = parsed, case .constant(.string(let kept)) = found.right else {
                    Issue.record("\(parsed) is not a comparison with a string")
                    continue
                }
                #expect(Array(kept.utf8) == Array(text.utf8))
            }
            #expect(try FormatPredicate("n == %@", 1) == comparison("n", .int(1)))
            #expect(try FormatPredicate("n == %@", 1.0) == comparison("n", .double(1)))
            #expect(try FormatPredicate("n == %@", true) == comparison("n", .bool(true)))
            #expect(try FormatPredicate("n == %@", nil as Int?) == comparison("n", .null))
        }
    }

    /// A format parsed once and then with other arguments of the same kinds gives the tree a parse of those
    /// arguments gives, wherever the arguments land: key paths (`%K`), folded or converted constants, Booleans,
    /// nil, NaN, strings with a NUL, literals equal to an argument, subqueries.
    @Test func aFormatWithOtherArgumentsOfTheSameKindsParsesAsAFreshParse() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1_000)
        let uuid = UUID()
        let cases: [(String, [[Any?]])] = [
            ("a0 == %lld", [[1], [2], [Int64.max], [-7]]),
            ("%K == %@", [["title", "Dune"], ["author", "Le Guin"], ["title", "title"]]),
            ("name BEGINSWITH[cd] %@ AND pages > %d", [["na", 3], ["", -1], ["\u{0}x", 4]]),
            ("pages BETWEEN {%d, %d}", [[1, 5], [5, 5], [9, 2]]),
            ("pages == -%d OR pages == %d", [[3, 3], [4, 9]]),
            ("a == %@ AND b == %@", [[true, true], [false, true], [true, false]]),
            ("n == %f", [[2], [3]]),
            ("x == %@ OR y == 5", [[Double.nan], [5.0], [2.5], [nil as Double?], [Double.nan]]),
            ("when > %@ AND id == %@", [[date, uuid], [date.addingTimeInterval(5), UUID()]]),
            ("SUBQUERY(books, $b, $b.title == %@ AND $b.pages > %d).@count > 0", [["a", 1], ["b", 2]]),
            ("label == %@", [["Caf\u{E9}"], ["Cafe\u{301}"], ["Caf\u{E9}"]]),
            ("n == 12 OR m == %lld", [[5], [12], [0x7E57_0100_0000_0000]]),
        ]
        for (format, argumentLists) in cases {
            for _ in 0..<2 {
                for arguments in argumentLists {
                    var parser = try Parser(format, arguments: arguments)
                    let fresh = try parser.parse()
                    let parsed = try FormatPredicate(format: format, argumentArray: arguments)
                    #expect(parsed.isIdentical(to: fresh), "\(format) with \(arguments): \(parsed), fresh \(fresh)")
                }
            }
        }
    }

    /// Where a probe went is where a constant goes; work that treats a constant by its value matches nothing.
    @Test func slotsAreFoundOnlyWhereTheProbesAloneDiffer() {
        let same: (PredicateValue, PredicateValue) -> Bool = { $0.isIdentical(to: $1) }
        let constants: [PredicateValue] = [.int(5), .string("a")]
        let probes = constants.indices.map { constants[$0].probe($0) }
        // The constants went to positions 2 and 0; position 1 is the work's own.
        let slots = ConstantSlots.match(
            actual: [.string("a"), .int(9), .int(5)], probed: [probes[1], .int(9), probes[0]], constants: constants,
            probes: probes, same: same)
        let result: [PredicateValue] = [.string("a"), .int(9), .int(5)]
        let others: [PredicateValue] = [.int(6), .string("b")]
        let filled = slots?.filling(result, from: others)
        let expected: [PredicateValue] = [.string("b"), .int(9), .int(6)]
        #expect(filled == expected)
        // A constant that came out changed (negated, escaped) matches nothing.
        #expect(ConstantSlots.match(actual: [.int(-5)], probed: [probes[0]], constants: constants, probes: probes, same: same) == nil)
        // A difference no probe explains matches nothing.
        #expect(ConstantSlots.match(actual: [.int(1)], probed: [.int(2)], constants: constants, probes: probes, same: same) == nil)
        let kinds: [PredicateValue] = [.int(.max), .double(2.5), .string(""), .decimal(1), .date(Date()), .data(Data([1])), .uuid(UUID()), .url(URL(string: "x:a")!)]
        for value in kinds {
            #expect(!value.probe(0).isIdentical(to: value) && !value.probe(0).isIdentical(to: value.probe(1)))
            #expect(value.isSlottable && value.kindRepresentative.isIdentical(to: value.probe(3).kindRepresentative))
        }
        let decidedByValue: [PredicateValue] = [.null, .double(.nan), .string("a\u{0}b")]
        for value in decidedByValue { #expect(!value.isSlottable) }
    }

    /// Arguments that are not constants (collections) are parsed every time, and still correctly.
    @Test func collectionArgumentsAreParsedEveryTime() throws {
        for values in [[1, 2], [3], [1, 2]] {
            let parsed = try FormatPredicate("n IN %@", values)
            #expect(parsed == .comparison(Comparison(.keyPath(["n"]), .in, .aggregate(values.map { .constant(.int(Int64($0))) }))))
        }
    }

    /// Identity for caches of compiled requests: `==`, except that string constants compare by their bytes, at any
    /// depth of the tree.
    @Test func identityComparesStringConstantsByTheirBytesAtAnyDepth() throws {
        let precomposed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        let formats = [
            "name == %@", "NOT (name == %@)", "pages > 3 AND (name == %@ OR pages < 2)", "name IN {'a', %@}",
            "SUBQUERY(books, $b, $b.title == %@).@count > 0", "ANY books.title BEGINSWITH[cd] %@",
        ]
        for format in formats {
            let a = try FormatPredicate(format, precomposed)
            let b = try FormatPredicate(format, decomposed)
            #expect(a == b, "Swift calls \(format)'s two trees equal")
            #expect(!a.isIdentical(to: b), "\(format)")
            #expect(a.isIdentical(to: try FormatPredicate(format, precomposed)), "\(format)")
        }
        #expect(!(try FormatPredicate("n == 1")).isIdentical(to: try FormatPredicate("n == 2")))
        #expect(!(try FormatPredicate("n == 1")).isIdentical(to: try FormatPredicate("m == 1")))
        #expect(!(try FormatPredicate("n == 1")).isIdentical(to: try FormatPredicate("n != 1")))
        #expect(!(try FormatPredicate("n == 1 AND m == 2")).isIdentical(to: try FormatPredicate("n == 1 OR m == 2")))
    }

    /// Comparing and hashing a tree as its shape, without building the shape, agrees with building it: a tree has
    /// the shape of every tree that differs from it only in slottable constants of the same kinds, and of no other,
    /// and feeds the words its shape feeds.
    @Test func aTreeComparedAsItsShapeAgreesWithItsBuiltShape() throws {
        let cases: [(String, [[Any?]])] = [
            ("a0 == %lld", [[1], [2], [Int64.max]]),
            ("name BEGINSWITH[cd] %@ AND pages > %@", [["na", 3], ["", -1], ["\u{0}x", 4], ["na", 3.5]]),
            ("x == %@ OR y == 5", [[Double.nan], [5.0], [nil as Double?], ["5"]]),
            ("SUBQUERY(books, $b, $b.title == %@ AND $b.pages > %@).@count > 0", [["a", 1], ["b", 2], ["b", true]]),
            ("ANY tags.label IN {%@, 'x'} AND NOT (lowercase:(name) == %@)", [["a", "b"], ["c", "d"], [1, "d"]]),
            ("TERNARY(pages > %@, 1, 0) == 1 AND stamps[FIRST] == %@", [[1, "a"], [2, "b"], ["1", "b"]]),
            ("n == 12 OR m == %lld", [[5], [12]]),
        ]
        let predicates = try cases.flatMap { format, lists in try lists.map { try FormatPredicate(format: format, argumentArray: $0) } }
        func hash(_ predicate: FormatPredicate, asShape: Bool) -> UInt64 {
            var hash = FNV1a()
            hash.combine(predicate, asShape: asShape)
            return hash.value
        }
        for predicate in predicates {
            #expect(hash(predicate, asShape: true) == hash(predicate.shape, asShape: false), "\(predicate)")
            for other in predicates {
                #expect(predicate.hasShape(other.shape) == predicate.shape.isIdentical(to: other.shape), "\(predicate) against \(other)")
            }
        }
        // Two lookups by key share a shape; where a number was, a nil or a string makes another shape.
        #expect(predicates[0].hasShape(predicates[1].shape) && predicates[1].hasShape(predicates[0].shape))
        #expect(!predicates[8].hasShape(predicates[9].shape) && !predicates[8].hasShape(predicates[10].shape))
    }

    /// The common argument types are recognized by their exact type, before any cast; other types still convert.
    @Test func commonArgumentsAreRecognizedByTheirExactType() {
        let arguments: [Any?] = [Int64(-5), 7, "text", 2.5, true]
        let expected: [PredicateValue] = [.int(-5), .int(7), .string("text"), .double(2.5), .bool(true)]
        for (argument, value) in zip(arguments, expected) {
            #expect(argument.flatMap(ArgumentConversion.exactConstant) == value)
            #expect(ArgumentConversion.constant(argument) == value)
        }
        #expect(ArgumentConversion.exactConstant(Int32(3)) == nil)
        #expect(ArgumentConversion.constant(Int32(3)) == .int(3))
        #expect(ArgumentConversion.constant(Optional<Int64>.some(4) as Any?) == .int(4))
        #expect(ArgumentConversion.constant(Optional<Int64>.none as Any?) == .null)
    }
}

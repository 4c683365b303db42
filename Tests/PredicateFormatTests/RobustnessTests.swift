import Foundation
import Testing
@testable import PredicateFormat

@Suite struct RobustnessTests {
    static let fragments = [
        "a", "b.c", " ", "=", "==", "!=", "<", ">=", "=<", "<>", "(", ")", "{", "}", "[c]", "[", "]", ",", ".", "@count", "@", "'x'",
        "\"y\"", "'", "\"", "\\", "1", "-2", "0x", "0x1F", "1e", "1.5e3", "AND", "OR", "NOT", "!", "&&", "||", "IN", "BETWEEN",
        "ANY", "ALL", "NONE", "SOME", "LIKE", "MATCHES", "BEGINSWITH", "CONTAINS", "ENDSWITH", "SUBQUERY(", "$x", "$", "%@", "%K",
        "%d", "%", "#", "#and", "TRUEPREDICATE", "NIL", "YES", "SELF", "CAST(", "拿破仑", "é", "\n", ";", "--", "/*",
        "+", "-", "*", "/", "**", "sum:(", "add:to:(", "sqrt:", "FUNCTION(SELF, ", "'sqrt:'", "TERNARY(", "[FIRST]", "[LAST]",
        "[SIZE]", "[0]", "[", "now()", "random()", "'NSNumber')", "'NSDate')", "#'a b'", "@distinctUnionOfObjects", ":", "(1 + 2)",
    ]

    /// 100,000 random and mutated inputs: each parses or fails with an error carrying an offset inside the input.
    @Test func randomAndMutatedInputsNeverCrashAndAlwaysSayWhere() {
        var random = SeededGenerator(seed: 7)
        let seeds = canonicalCorpus.map(\.2) + treeCorpus.map(\.0) + expressionCorpus.map(\.2)
        var parsed = 0
        var problems: [String] = []
        for round in 0..<100_000 {
            var input: String
            if round % 2 == 0 {
                input = (0..<Int.random(in: 1...12, using: &random)).map { _ in Self.fragments.randomElement(using: &random)! }
                    .joined(separator: Bool.random(using: &random) ? " " : "")
            } else {
                var characters = Array(seeds.randomElement(using: &random)!)
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let position = characters.isEmpty ? 0 : Int.random(in: 0..<characters.count, using: &random)
                    let replacement = Array(Self.fragments.randomElement(using: &random)!)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0 where !characters.isEmpty: characters.remove(at: position)
                    case 1: characters.insert(contentsOf: replacement, at: position)
                    default: if !characters.isEmpty { characters.replaceSubrange(position...position, with: replacement) }
                    }
                }
                input = String(characters)
            }
            let arguments: [Any?] = (0..<Int.random(in: 0...2, using: &random)).map { _ in ["k", 1, nil, 2.5, ["a"]].randomElement(using: &random)! }
            do {
                let predicate = try FormatPredicate(format: input, argumentArray: arguments)
                parsed += 1
                // Whatever parses prints to a form that parses to the same tree.
                if (try? FormatPredicate(format: predicate.description, argumentArray: [])) != predicate {
                    problems.append("round trip failed for \(input.debugDescription) -> \(predicate)")
                }
            } catch {
                guard let offset = error.offset, offset >= 0, offset <= input.count else {
                    problems.append("no offset inside the input for \(input.debugDescription): \(error)")
                    continue
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(parsed > 1_000, "only \(parsed) inputs parsed; the mutations are too destructive to exercise the parser")
    }

    /// A key path of 100,000 components parses to one key path and prints back: the parser appends each
    /// component once (copying the path per component took 30 s).
    @Test func aHundredThousandComponentKeyPathParsesAndPrintsBack() throws {
        let components = (0..<100_000).map { "k\($0 % 7)" }
        let predicate = try FormatPredicate(format: components.joined(separator: ".") + " == 1", argumentArray: [])
        #expect(predicate == .comparison(Comparison(.keyPath(components), .equal, .constant(.int(1)))))
        #expect(try FormatPredicate(format: predicate.description, argumentArray: []) == predicate)
    }
}

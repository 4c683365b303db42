import Foundation
import Testing
@testable import PredicateFormat

@Suite struct StringMatchingTests {
    /// LIKE by dynamic programming over every prefix pair: slow, and obviously right.
    static func referenceLike(_ text: [Character], _ pattern: [StringMatching.PatternElement?]) -> Bool {
        // nil stands for `*`.
        var table = Array(repeating: Array(repeating: false, count: pattern.count + 1), count: text.count + 1)
        table[0][0] = true
        for j in pattern.indices where pattern[j] == nil { table[0][j + 1] = table[0][j] }
        for i in 1...max(text.count, 1) where i <= text.count {
            for j in pattern.indices {
                if let element = pattern[j] {
                    table[i][j + 1] = table[i - 1][j] && element.matches(text[i - 1])
                } else {
                    table[i][j + 1] = table[i][j] || table[i - 1][j + 1]
                }
            }
        }
        return table[text.count][pattern.count]
    }

    @Test func likeAgreesWithTheReferenceOn20000RandomPatterns() {
        var random = SeededGenerator(seed: 99)
        let alphabet: [Character] = ["a", "b", "é", "*", "?"]
        for _ in 0..<20_000 {
            let text = String((0..<Int.random(in: 0...8, using: &random)).map { _ in ["a", "b", "é"].randomElement(using: &random)! as Character })
            let patternCharacters = (0..<Int.random(in: 0...6, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            let elements: [StringMatching.PatternElement?] = patternCharacters.map { c in
                c == "*" ? nil : (c == "?" ? .any : .character(c))
            }
            let expected = Self.referenceLike(Array(text), elements)
            #expect(StringMatching.like(text, String(patternCharacters)) == expected, "\(text) LIKE \(String(patternCharacters))")
        }
    }

    @Test func containsFindsEveryPlacementOfAPart() {
        var random = SeededGenerator(seed: 5)
        for _ in 0..<20_000 {
            let text = String((0..<Int.random(in: 0...10, using: &random)).map { _ in ["a", "b"].randomElement(using: &random)! as Character })
            let part = String((0..<Int.random(in: 0...4, using: &random)).map { _ in ["a", "b"].randomElement(using: &random)! as Character })
            #expect(StringMatching.contains(text, part) == text.contains(part) || part.isEmpty, "\(text) CONTAINS \(part)")
        }
    }

    /// A 1 MB value against a pattern that made the old search restart at every character: it now reads the value
    /// a bounded number of times per piece (a quadratic search took about a minute here).
    @Test func aMegabyteValueMatchesLongPatterns() {
        let value = String(repeating: "a", count: 1_000_000)
        let part = String(repeating: "a", count: 1_000) + "b"
        #expect(!StringMatching.contains(value, part))
        #expect(!StringMatching.like(value, "*" + part + "*"))
        #expect(StringMatching.like(value + "b", "*" + part))
        #expect(StringMatching.contains(value + "b", part))
    }
}

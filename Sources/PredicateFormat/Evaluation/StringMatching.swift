import Foundation

/// The string semantics of the language, shared by the evaluator and the SQL functions so both back ends agree.
public enum StringMatching {
    /// Applies `[c]` (full Unicode case folding) and `[d]` (diacritic removal).
    public static func fold(_ text: String, _ options: Comparison.Options) -> String {
        guard !options.isEmpty else { return text }
        var foldOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foldOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foldOptions.insert(.diacriticInsensitive) }
        var folded = text.folding(options: foldOptions, locale: nil)
        // Folding leaves some case pairs (ß, ﬁ) as they are; lowercasing with full mappings finishes the job.
        if options.contains(.caseInsensitive) { folded = folded.lowercased() }
        return folded
    }

    /// Exact equality of Unicode scalars, as SQLite's binary collation sees it.
    public static func equal(_ a: String, _ b: String) -> Bool { a.hasSameUTF8(as: b) }

    /// Byte order of UTF-8, as SQLite's binary collation sorts.
    public static func order(_ a: String, _ b: String) -> ComparisonResult {
        if equal(a, b) { return .orderedSame }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? .orderedAscending : .orderedDescending
    }

    public static func beginsWith(_ text: String, _ prefix: String) -> Bool { text.utf8.starts(with: prefix.utf8) }

    public static func endsWith(_ text: String, _ suffix: String) -> Bool { text.utf8.reversed().starts(with: suffix.utf8.reversed()) }

    public static func contains(_ text: String, _ part: String) -> Bool {
        part.isEmpty || Array(text.utf8).firstRange(of: Array(part.utf8)) != nil
    }

    /// LIKE: `*` matches any run of characters, `?` exactly one, over the whole string; `\` escapes either.
    public static func like(_ text: String, _ pattern: String) -> Bool {
        var tokens: [(Character, isWildcard: Bool)] = []
        var escaping = false
        for c in pattern {
            if escaping {
                tokens.append((c, false))
                escaping = false
            } else if c == "\\" {
                escaping = true
            } else {
                tokens.append((c, c == "*" || c == "?"))
            }
        }
        let chars = Array(text)
        // Greedy matching with one backtrack point: linear in practice, O(n·m) at worst, never exponential.
        var t = 0, p = 0, starP = -1, starT = 0
        while t < chars.count {
            if p < tokens.count, tokens[p].isWildcard, tokens[p].0 == "*" {
                starP = p
                starT = t
                p += 1
            } else if p < tokens.count, tokens[p].isWildcard ? tokens[p].0 == "?" : tokens[p].0 == chars[t] {
                t += 1
                p += 1
            } else if starP >= 0 {
                p = starP + 1
                starT += 1
                t = starT
            } else {
                return false
            }
        }
        while p < tokens.count, tokens[p].isWildcard, tokens[p].0 == "*" { p += 1 }
        return p == tokens.count
    }

    private static let regexCache = Protected<[String: NSRegularExpression]>([:])

    /// MATCHES: an ICU regular expression that must match the whole string.
    public static func matches(_ text: String, _ pattern: String, caseInsensitive: Bool) throws(FormatPredicateError) -> Bool {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        let cached = regexCache.withLock { $0[key] }
        let regex: NSRegularExpression
        if let cached {
            regex = cached
        } else {
            do {
                regex = try NSRegularExpression(pattern: "^(?:\(pattern))$", options: caseInsensitive ? [.caseInsensitive] : [])
            } catch {
                throw .evaluation("MATCHES has an invalid regular expression '\(pattern)'")
            }
            regexCache.withLock { cache in
                if cache.count > 256 { cache.removeAll() }
                cache[key] = regex
            }
        }
        return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
}

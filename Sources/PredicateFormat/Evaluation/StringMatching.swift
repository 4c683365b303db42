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

    /// Whether `part` occurs in `text`, by their UTF-8 bytes, in time linear in both lengths.
    public static func contains(_ text: String, _ part: String) -> Bool {
        part.isEmpty || firstOccurrence(of: Array(part.utf8), in: Array(text.utf8)[...]) != nil
    }

    /// One element of a LIKE pattern between stars: a character, or `?`.
    enum PatternElement: Equatable {
        case character(Character)
        case any

        func matches(_ c: Character) -> Bool {
            switch self {
            case .character(let expected): expected == c
            case .any: true
            }
        }
    }

    /// LIKE: `*` matches any run of characters, `?` exactly one, over the whole string; `\` escapes either.
    ///
    /// The pattern is split at its stars; the first piece must match at the start, the last at the end, and each
    /// one between at its leftmost place after the one before (which leaves the most room for the rest), so the
    /// text is read once per piece: linear in its length, never exponential, whatever the pattern.
    public static func like(_ text: String, _ pattern: String) -> Bool {
        var pieces: [[PatternElement]] = [[]]
        var escaping = false
        for c in pattern {
            if escaping {
                pieces[pieces.count - 1].append(.character(c))
                escaping = false
            } else if c == "\\" {
                escaping = true
            } else if c == "*" {
                pieces.append([])
            } else {
                pieces[pieces.count - 1].append(c == "?" ? .any : .character(c))
            }
        }
        let characters = Array(text)
        func matches(_ piece: [PatternElement], at start: Int) -> Bool {
            piece.indices.allSatisfy { piece[$0].matches(characters[start + $0]) }
        }
        guard pieces.count > 1 else { return characters.count == pieces[0].count && matches(pieces[0], at: 0) }
        let first = pieces[0], last = pieces[pieces.count - 1]
        guard first.count + last.count <= characters.count, matches(first, at: 0), matches(last, at: characters.count - last.count) else {
            return false
        }
        var position = first.count
        let end = characters.count - last.count
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            let window = characters[position..<end]
            let found: Int?
            if piece.contains(.any) {
                // `?` defeats the prefix table; the plain search costs the text's length times the piece's.
                found = window.count < piece.count ? nil : (position...(end - piece.count)).first { matches(piece, at: $0) }
            } else {
                found = firstOccurrence(of: piece.compactMap { if case .character(let c) = $0 { c } else { nil } }, in: window)
            }
            guard let found else { return false }
            position = found + piece.count
        }
        return true
    }

    /// The index where `pattern` first occurs in `text` (Knuth–Morris–Pratt: each element of the text is compared
    /// a bounded number of times).
    static func firstOccurrence<Element: Equatable>(of pattern: [Element], in text: ArraySlice<Element>) -> Int? {
        guard !pattern.isEmpty else { return text.startIndex }
        var fallback = [0]
        fallback.reserveCapacity(pattern.count)
        var matched = 0
        for index in pattern.indices.dropFirst() {
            while matched > 0 && pattern[index] != pattern[matched] { matched = fallback[matched - 1] }
            if pattern[index] == pattern[matched] { matched += 1 }
            fallback.append(matched)
        }
        matched = 0
        for index in text.indices {
            while matched > 0 && text[index] != pattern[matched] { matched = fallback[matched - 1] }
            if text[index] == pattern[matched] { matched += 1 }
            if matched == pattern.count { return index - pattern.count + 1 }
        }
        return nil
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

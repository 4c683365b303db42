import Foundation

/// Equality and order of constants, the same as SQLite's on the values the stores bind: integers and Doubles
/// compare exactly (2^53 + 1 is not 2^53), NaN equals and orders with nothing, strings compare by their UTF-8 bytes
/// after `[c]` and `[d]` folding, and values of two families (a date and a number) do not compare at all.
public enum ValueOrder {
    /// Whether `a` equals `b`; nil equals only nil.
    ///
    /// - Throws: ``FormatPredicateError/typeMismatch(expression:expected:found:)`` for values of two families.
    public static func equal(_ a: PredicateValue, _ b: PredicateValue, _ options: Comparison.Options, in context: @autoclosure () -> String) throws(FormatPredicateError) -> Bool {
        guard let family = a.family, let other = b.family else { return a.isNull && b.isNull }
        guard family == other else { throw mismatch(a, b, context()) }
        switch (a, b) {
        case (.string(let x), .string(let y)):
            return StringMatching.equal(StringMatching.fold(x, options), StringMatching.fold(y, options))
        default:
            return try order(a, b, options, in: context()) == .orderedSame
        }
    }

    /// The order of `a` and `b`, or nil where one is nil or NaN.
    ///
    /// - Throws: ``FormatPredicateError/typeMismatch(expression:expected:found:)`` for values of two families.
    public static func order(_ a: PredicateValue, _ b: PredicateValue, _ options: Comparison.Options, in context: @autoclosure () -> String) throws(FormatPredicateError) -> ComparisonResult? {
        guard let family = a.family, let other = b.family else { return nil }
        guard family == other else { throw mismatch(a, b, context()) }
        switch (a, b) {
        case (.int(let x), .int(let y)): return compare(x, y)
        case (.string(let x), .string(let y)): return StringMatching.order(StringMatching.fold(x, options), StringMatching.fold(y, options))
        case (.date(let x), .date(let y)): return compare(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
        case (.data(let x), .data(let y)): return x == y ? .orderedSame : (x.lexicographicallyPrecedes(y) ? .orderedAscending : .orderedDescending)
        case (.uuid(let x), .uuid(let y)): return StringMatching.order(x.uuidString, y.uuidString)
        case (.url(let x), .url(let y)): return StringMatching.order(x.absoluteString, y.absoluteString)
        default:
            switch (Arithmetic.Number(a), Arithmetic.Number(b)) {
            case (.int(let x), .double(let y)): return compare(x, y)
            case (.double(let x), .int(let y)): return compare(y, x).map(reversed)
            default: return compare(a.number ?? .nan, b.number ?? .nan)
            }
        }
    }

    /// A value with equal numbers made one (`1`, `1.0` and `TRUE` are `1`), for counting equal values.
    static func canonical(_ value: PredicateValue) -> PredicateValue {
        switch Arithmetic.Number(value) {
        case .int(let v)?: return .int(v)
        case .double(let v)?: return Int64(exactly: v).map(PredicateValue.int) ?? .double(v)
        case nil: return value
        }
    }

    static func mismatch(_ a: PredicateValue, _ b: PredicateValue, _ context: String) -> FormatPredicateError {
        .typeMismatch(expression: context, expected: "values of one kind (\(a.family?.rawValue ?? "nil") on the left)", found: "\(b.kindName) \(b.formatLiteral)")
    }

    private static func reversed(_ order: ComparisonResult) -> ComparisonResult {
        switch order {
        case .orderedAscending: .orderedDescending
        case .orderedDescending: .orderedAscending
        case .orderedSame: .orderedSame
        }
    }

    static func compare<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult? {
        if x == y { return .orderedSame }
        if x < y { return .orderedAscending }
        if x > y { return .orderedDescending }
        return nil
    }

    /// An integer against a Double, exactly: as SQLite compares them, with no rounding of the integer.
    static func compare(_ integer: Int64, _ double: Double) -> ComparisonResult? {
        if double.isNaN { return nil }
        if double >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
        if double < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        let whole = double.rounded(.towardZero)
        let wholeInteger = Int64(whole)
        if integer != wholeInteger { return integer < wholeInteger ? .orderedAscending : .orderedDescending }
        let fraction = double - whole
        return fraction > 0 ? .orderedAscending : (fraction < 0 ? .orderedDescending : .orderedSame)
    }
}

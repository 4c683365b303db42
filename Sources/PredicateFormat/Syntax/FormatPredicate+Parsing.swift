extension FormatPredicate {
    /// Parses a format string, substituting `%@`, `%K`, `%d`... with `arguments` in order.
    ///
    /// ```swift
    /// let p = try FormatPredicate("name BEGINSWITH[cd] %@ AND ANY tags.label IN %@", "na", ["a", "b"])
    /// ```
    ///
    /// - Throws: ``FormatPredicateError/syntax(offset:message:)`` or ``FormatPredicateError/argument(offset:message:)``,
    ///   naming what was expected where.
    public init(_ format: String, _ arguments: Any?...) throws(FormatPredicateError) {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses a format string with an array of arguments.
    ///
    /// Apps parse the same few formats with the same arguments again and again (a screen's query on every
    /// refresh), so successful parses are kept, by format and arguments, when every argument is a constant.
    public init(format: String, argumentArray: [Any?]) throws(FormatPredicateError) {
        self = try ParseCache.shared.predicate(format: format, argumentArray) { () throws(FormatPredicateError) in
            var parser = try Parser(format, arguments: argumentArray)
            return try parser.parse()
        }
    }
}

extension FormatExpression {
    /// Parses an expression of the format language: a key path, arithmetic, a function, a constant.
    ///
    /// ```swift
    /// let total = try FormatExpression("sum:(books.pages) * %d", 2)
    /// ```
    public init(_ format: String, _ arguments: Any?...) throws(FormatPredicateError) {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses an expression with an array of arguments.
    public init(format: String, argumentArray: [Any?]) throws(FormatPredicateError) {
        var parser = try Parser(format, arguments: argumentArray)
        self = try parser.parseExpression()
    }
}

/// Recent successful parses, by format and arguments, when every argument is a constant (an array for `IN %@` is
/// not: those parses are not kept).
///
/// A dictionary keyed by format and an array of converted arguments cost an array per call and the general hasher
/// over both, a fifth of a small query when the caches are cold (the main actor's query beside an import); a
/// ``SlotTable`` finds a screen's parse with one hash, one lock and one comparison.
struct ParseCache: Sendable {
    static let shared = ParseCache()

    private let table = SlotTable(count: 512)

    /// One kept parse.
    private final class Entry: Sendable {
        let format: String
        let arguments: [PredicateValue]
        let predicate: FormatPredicate

        init(format: String, arguments: [PredicateValue], predicate: FormatPredicate) {
            (self.format, self.arguments, self.predicate) = (format, arguments, predicate)
        }
    }

    /// The kept parse of exactly this format and these arguments, or what `parse` returns, kept when every
    /// argument is a constant.
    ///
    /// Each argument is converted once, into a buffer on the stack, for both the hash and the comparison with the
    /// kept parse: converting it for each (opening the `Any`, copying it through its value witnesses) was 7% of a
    /// screen's query beside an import.
    func predicate(
        format: String, _ arguments: [Any?], parse: () throws(FormatPredicateError) -> FormatPredicate
    ) throws(FormatPredicateError) -> FormatPredicate {
        try withUnsafeTemporaryAllocation(of: PredicateValue.self, capacity: arguments.count) { values throws(FormatPredicateError) in
            var converted = 0
            defer { if converted > 0 { values.baseAddress.unsafelyUnwrapped.deinitialize(count: converted) } }
            var hash = FNV1a()
            hash.combine(bytesOf: format)
            // By index: a `for in` over `[Any?]` copied each argument out through the runtime's value witnesses.
            for index in arguments.indices {
                guard let value = ArgumentConversion.constant(arguments[index]) else { return try parse() }
                values.initializeElement(at: index, to: value)
                converted += 1
                hash.combine(value)
            }
            if let entry = table.entry(for: hash) as? Entry, entry.arguments.count == converted, entry.format.hasSameUTF8(as: format),
               entry.arguments.indices.allSatisfy({ entry.arguments[$0].isIdentical(to: values[$0]) }) {
                return entry.predicate
            }
            let predicate = try parse()
            table.keep(Entry(format: format, arguments: Array(values.prefix(converted)), predicate: predicate), for: hash)
            return predicate
        }
    }
}

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
        let hash = ParseCache.shared.hash(format: format, argumentArray)
        if let hash, let parsed = ParseCache.shared.predicate(at: hash, format: format, argumentArray) {
            self = parsed
            return
        }
        var parser = try Parser(format, arguments: argumentArray)
        self = try parser.parse()
        if let hash { ParseCache.shared.keep(self, at: hash, format: format, argumentArray) }
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

    /// The hash of a format and its arguments; nil when an argument is not a constant.
    func hash(format: String, _ arguments: [Any?]) -> FNV1a? {
        var hash = FNV1a()
        hash.combine(bytesOf: format)
        // By index: a `for in` over `[Any?]` copied each argument out through the runtime's value witnesses.
        for index in arguments.indices {
            guard let value = ArgumentConversion.constant(arguments[index]) else { return nil }
            hash.combine(value)
        }
        return hash
    }

    /// The parse kept in the slot of `hash`, if it is of exactly this format and these arguments.
    func predicate(at hash: FNV1a, format: String, _ arguments: [Any?]) -> FormatPredicate? {
        guard let entry = table.entry(for: hash) as? Entry, entry.arguments.count == arguments.count,
              entry.format.hasSameUTF8(as: format) else { return nil }
        for index in arguments.indices {
            guard let value = ArgumentConversion.constant(arguments[index]), entry.arguments[index].isIdentical(to: value) else {
                return nil
            }
        }
        return entry.predicate
    }

    /// Keeps a parse in the slot of `hash`.
    func keep(_ predicate: FormatPredicate, at hash: FNV1a, format: String, _ arguments: [Any?]) {
        let values = arguments.compactMap(ArgumentConversion.constant)
        guard values.count == arguments.count else { return }
        table.keep(Entry(format: format, arguments: values, predicate: predicate), for: hash)
    }
}

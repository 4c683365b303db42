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
        self = try ParseCache.shared.predicate(format: format, argumentArray) { arguments throws(FormatPredicateError) in
            var parser = try Parser(format, arguments: arguments)
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
///
/// A format parsed with other constants of the same kinds (a lookup by each of many keys) is not parsed again either:
/// the parse of one is kept with where its arguments went (``ConstantSlots``), and the new ones are put there.
struct ParseCache: Sendable {
    static let shared = ParseCache()

    private let table = SlotTable(count: 512)
    private let templates = SlotTable(count: 256)

    /// A format's parse for arguments of some kinds, and where each argument's constant sits in it; no slots when
    /// the parse depends on the arguments' values (a `%K`), so that the format is not matched again.
    private final class Template: Sendable {
        let format: String
        let kinds: [PredicateValue]
        let predicate: FormatPredicate
        let constants: [PredicateValue]
        let slots: ConstantSlots?

        init(format: String, kinds: [PredicateValue], predicate: FormatPredicate, slots: ConstantSlots?) {
            (self.format, self.kinds, self.predicate, self.slots) = (format, kinds, predicate, slots)
            constants = predicate.constants
        }
    }

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
        format: String, _ arguments: [Any?], parse: ([Any?]) throws(FormatPredicateError) -> FormatPredicate
    ) throws(FormatPredicateError) -> FormatPredicate {
        try withUnsafeTemporaryAllocation(of: PredicateValue.self, capacity: arguments.count) { values throws(FormatPredicateError) in
            var converted = 0
            defer { if converted > 0 { values.baseAddress.unsafelyUnwrapped.deinitialize(count: converted) } }
            var hash = FNV1a(), kindHash = FNV1a()
            hash.combine(bytesOf: format)
            kindHash.combine(bytesOf: format)
            var slottable = true
            // By index: a `for in` over `[Any?]` copied each argument out through the runtime's value witnesses.
            for index in arguments.indices {
                guard let value = ArgumentConversion.constant(arguments[index]) else { return try parse(arguments) }
                values.initializeElement(at: index, to: value)
                converted += 1
                hash.combine(value)
                slottable = slottable && value.isSlottable
                kindHash.combine(value.kindRepresentative)
            }
            if let entry = table.entry(for: hash) as? Entry, entry.arguments.count == converted, entry.format.hasSameUTF8(as: format),
               entry.arguments.indices.allSatisfy({ entry.arguments[$0].isIdentical(to: values[$0]) }) {
                return entry.predicate
            }
            let constants = Array(values.prefix(converted))
            guard slottable, !constants.isEmpty else { return try parseAndKeep(format, arguments, constants, hash, parse) }
            if let template = templates.entry(for: kindHash) as? Template, template.kinds.count == converted,
               template.format.hasSameUTF8(as: format),
               template.kinds.indices.allSatisfy({ template.kinds[$0].isIdentical(to: values[$0].kindRepresentative) }) {
                guard let slots = template.slots else { return try parseAndKeep(format, arguments, constants, hash, parse) }
                let filled = slots.filling(template.constants, from: constants)
                return template.predicate.replacingConstants { position, _ in filled[position] }
            }
            let predicate = try parseAndKeep(format, arguments, constants, hash, parse)
            // Parsed again with probes in place of the constants: where the probes went, any constants of these kinds go.
            let probes = constants.indices.map { constants[$0].probe($0) }
            let probed = try? parse(probes.map(\.argument))
            var slots: ConstantSlots?
            if let probed, probed.shape.isIdentical(to: predicate.shape) {
                slots = ConstantSlots.match(actual: predicate.constants, probed: probed.constants, constants: constants, probes: probes) {
                    $0.isIdentical(to: $1)
                }
            }
            templates.keep(Template(format: format, kinds: constants.map(\.kindRepresentative), predicate: predicate, slots: slots), for: kindHash)
            return predicate
        }
    }

    /// Parses with `arguments` (their `constants`) and keeps the parse for exactly these.
    private func parseAndKeep(
        _ format: String, _ arguments: [Any?], _ constants: [PredicateValue], _ hash: FNV1a,
        _ parse: ([Any?]) throws(FormatPredicateError) -> FormatPredicate
    ) throws(FormatPredicateError) -> FormatPredicate {
        let predicate = try parse(arguments)
        table.keep(Entry(format: format, arguments: constants, predicate: predicate), for: hash)
        return predicate
    }
}

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
        let key = ParseKey(format: format, argumentArray)
        if let key, let parsed = ParseKey.parsed.withLock({ $0[key] }) {
            self = parsed
            return
        }
        var parser = try Parser(format, arguments: argumentArray)
        self = try parser.parse()
        if let key {
            let parsed = self
            ParseKey.parsed.withLock { cache in
                if cache.count >= 512 { cache = [:] }
                cache[key] = parsed
            }
        }
    }
}

/// What decides a parse: the format and its arguments as constants (nil when an argument is not a constant, such
/// as an array for `IN %@`: those parses are not kept).
struct ParseKey: Hashable, Sendable {
    let format: String
    let arguments: [PredicateValue]

    init?(format: String, _ arguments: [Any?]) {
        var values: [PredicateValue] = []
        values.reserveCapacity(arguments.count)
        for argument in arguments {
            guard let value = ArgumentConversion.constant(argument) else { return nil }
            values.append(value)
        }
        self.format = format
        self.arguments = values
    }

    /// Recent successful parses.
    static let parsed = Protected<[ParseKey: FormatPredicate]>([:])

    // Strings compare by their UTF-8 bytes, not by Swift's canonical equivalence: "é" precomposed and decomposed
    // are equal Swift strings but different SQLite values, so one must not stand for the other.
    static func == (lhs: ParseKey, rhs: ParseKey) -> Bool {
        guard lhs.format.utf8.elementsEqual(rhs.format.utf8), lhs.arguments.count == rhs.arguments.count else { return false }
        return zip(lhs.arguments, rhs.arguments).allSatisfy { pair in
            switch pair {
            case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
            default: pair.0 == pair.1
            }
        }
    }

    func hash(into hasher: inout Hasher) {
        Self.combineBytes(of: format, into: &hasher)
        for argument in arguments {
            if case .string(let string) = argument {
                Self.combineBytes(of: string, into: &hasher)
            } else {
                hasher.combine(argument)
            }
        }
    }

    /// Feeds a string's UTF-8 bytes (the identity `==` uses) to `hasher`, in one call where the string is stored
    /// contiguously: hashing byte by byte was a tenth of a small cached fetch.
    private static func combineBytes(of string: String, into hasher: inout Hasher) {
        hasher.combine(string.utf8.count)
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if done == nil {
            for byte in string.utf8 { hasher.combine(byte) }
        }
    }
}

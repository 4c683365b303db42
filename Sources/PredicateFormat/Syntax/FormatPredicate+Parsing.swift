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
        let slot = ParseCache.shared.slot(format: format, argumentArray)
        if let slot, let parsed = ParseCache.shared.predicate(at: slot, format: format, argumentArray) {
            self = parsed
            return
        }
        var parser = try Parser(format, arguments: argumentArray)
        self = try parser.parse()
        if let slot { ParseCache.shared.keep(self, at: slot, format: format, argumentArray) }
    }
}

/// Recent successful parses, by format and arguments, when every argument is a constant (an array for `IN %@` is
/// not: those parses are not kept).
///
/// A table of slots chosen by a hash of the format's bytes and the arguments, one parse per slot (a newer parse
/// takes the slot of an older one with the same hash): a screen's query finds its parse with one hash, one lock and
/// one comparison. A dictionary keyed by format and an array of converted arguments cost an array per call and the
/// general hasher over both, a fifth of a small query when the caches are cold (the main actor's query beside an
/// import).
final class ParseCache: Sendable {
    static let shared = ParseCache()

    private static let slotCount = 512
    private let slots = Protected<[Entry?]>(Array(repeating: nil, count: ParseCache.slotCount))

    /// One kept parse.
    private final class Entry: Sendable {
        let format: String
        let arguments: [PredicateValue]
        let predicate: FormatPredicate

        init(format: String, arguments: [PredicateValue], predicate: FormatPredicate) {
            (self.format, self.arguments, self.predicate) = (format, arguments, predicate)
        }
    }

    /// The slot of a format and its arguments; nil when an argument is not a constant.
    func slot(format: String, _ arguments: [Any?]) -> Int? {
        var hash = FNV1a()
        hash.combine(bytesOf: format)
        for argument in arguments {
            guard let value = ArgumentConversion.constant(argument) else { return nil }
            hash.combine(value)
        }
        return Int(truncatingIfNeeded: hash.value % UInt64(Self.slotCount))
    }

    /// The parse kept in `slot`, if it is of exactly this format and these arguments.
    func predicate(at slot: Int, format: String, _ arguments: [Any?]) -> FormatPredicate? {
        guard let entry = slots.withLock({ $0[slot] }), entry.arguments.count == arguments.count,
              entry.format.utf8.elementsEqual(format.utf8) else { return nil }
        for (kept, argument) in zip(entry.arguments, arguments) {
            guard let value = ArgumentConversion.constant(argument), Self.identical(kept, value) else { return nil }
        }
        return entry.predicate
    }

    /// Keeps a parse in `slot`, in place of the one there.
    func keep(_ predicate: FormatPredicate, at slot: Int, format: String, _ arguments: [Any?]) {
        let values = arguments.compactMap(ArgumentConversion.constant)
        guard values.count == arguments.count else { return }
        let entry = Entry(format: format, arguments: values, predicate: predicate)
        let replaced = slots.withLock { slots in
            defer { slots[slot] = entry }
            return slots[slot]
        }
        withExtendedLifetime(replaced) {}
    }

    // Strings compare by their UTF-8 bytes, not by Swift's canonical equivalence: "é" precomposed and decomposed
    // are equal Swift strings but different SQLite values, so one must not stand for the other.
    private static func identical(_ a: PredicateValue, _ b: PredicateValue) -> Bool {
        switch (a, b) {
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        default: a == b
        }
    }
}

/// FNV-1a over bytes: a few instructions per byte, which suits the short formats and arguments of a parse (the
/// general hasher's set-up and finalization cost more than the bytes).
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func combine(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    mutating func combine(_ word: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { combine(byte: UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    mutating func combine(bytesOf string: String) {
        combine(UInt64(string.utf8.count))
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes { combine(byte: byte) }
        }
        if done == nil {
            for byte in string.utf8 { combine(byte: byte) }
        }
    }

    /// Equal values (strings by their bytes) feed equal words.
    mutating func combine(_ value: PredicateValue) {
        switch value {
        case .null: combine(byte: 0)
        case .bool(let v): combine(byte: v ? 1 : 2)
        case .int(let v): combine(byte: 3); combine(UInt64(bitPattern: v))
        case .double(let v): combine(byte: 4); combine(v.bitPattern)
        case .string(let v): combine(byte: 5); combine(bytesOf: v)
        default: combine(byte: 6); combine(UInt64(bitPattern: Int64(value.hashValue)))
        }
    }
}

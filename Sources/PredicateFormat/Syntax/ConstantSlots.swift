import Foundation

/// Where the constants an app passes to a predicate end up, so that work done for one set of constants serves
/// every other set of the same kinds.
///
/// An app looks objects up by key after key: `a0 == %lld` with a new number each time. The parse and the SQL of
/// such a fetch do not depend on the number, but caches kept by exact value found nothing, so every lookup parsed
/// its format and compiled its SQL again: four fifths of a lookup's time.
///
/// The mapping is found, not assumed: the work is done twice, once with the app's constants and once with probe
/// constants of the same kinds, each different from every other value. Where both results agree except exactly at
/// the probes, each probe shows where its constant went, and a later set of constants of the same kinds is put
/// there. Any other difference (a constant read as a key path, folded, escaped or decided on) leaves the work
/// uncached for those kinds. Values whose handling is decided by the value itself (nil, NaN, a string holding a
/// NUL character) are never slots.
package struct ConstantSlots: Sendable {
    /// For each slot, the position of the value it is filled from (in the constants it was matched against) and
    /// where it goes in the result.
    package let slots: [(source: Int, target: Int)]

    /// Matches two results of the same work: `actual`, done with `constants`, and `probed`, done with `probes`
    /// (one per constant, each unlike any other value; nil for a constant that was not replaced). Nil when they
    /// differ anywhere else, or where a probe cannot be told from another value. `same` compares two values
    /// exactly (strings by their bytes).
    package static func match<Value>(
        actual: [Value], probed: [Value], constants: [Value], probes: [Value?], same: (Value, Value) -> Bool
    ) -> ConstantSlots? {
        guard actual.count == probed.count, constants.count == probes.count else { return nil }
        var slots: [(source: Int, target: Int)] = []
        for position in actual.indices where !same(actual[position], probed[position]) {
            let sources = probes.indices.filter { probes[$0].map { same($0, probed[position]) } ?? false }
            guard sources.count == 1, let source = sources.first, same(constants[source], actual[position]) else { return nil }
            slots.append((source, position))
        }
        return ConstantSlots(slots: slots)
    }

    /// `values` (the result with the matched constants) with every slot filled from `constants`.
    ///
    /// Inlinable, so that a caller in another module fills its own type's array directly: unspecialized, each call
    /// looked up the array's generic metadata at run time.
    @inlinable
    package func filling<Value>(_ values: [Value], from constants: [Value]) -> [Value] {
        var filled = values
        for (source, target) in slots { filled[target] = constants[source] }
        return filled
    }
}

extension PredicateValue {
    /// Whether a cache may put this value where another value of its kind was: not nil, NaN, or a string holding a
    /// NUL character, which parsing and compiling treat by value.
    package var isSlottable: Bool {
        switch self {
        case .null: false
        case .double(let number): !number.isNaN
        case .date(let date): !date.timeIntervalSinceReferenceDate.isNaN
        case .string(let text): !text.utf8.contains(0)
        default: true
        }
    }

    /// A value of the same kind standing for every value of it in a cache's key, or the value itself where it is not
    /// slottable.
    package var kindRepresentative: PredicateValue {
        guard isSlottable else { return self }
        return switch self {
        case .null: .null
        case .bool: .bool(false)
        case .int: .int(0)
        case .double: .double(0)
        case .decimal: .decimal(0)
        case .string: .string("")
        case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
        case .data: .data(Data())
        case .uuid: .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .url: .url(URL(string: "x:")!)
        }
    }

    /// The value as an app would pass it to a format's `%@` (or `%d`, `%f`, `%s`).
    package var argument: Any? {
        switch self {
        case .null: nil
        case .bool(let v): v
        case .int(let v): v
        case .double(let v): v
        case .decimal(let v): v
        case .string(let v): v
        case .date(let v): v
        case .data(let v): v
        case .uuid(let v): v
        case .url(let v): v
        }
    }

    /// A value of the same kind unlike this one, unlike any value an app plausibly uses, and unlike the probes of
    /// other positions (`position` tells them apart). Booleans have one other value only; two Boolean probes of
    /// equal constants are equal, and such work is matched to nothing.
    package func probe(_ position: Int) -> PredicateValue {
        if case .bool(let flag) = self { return .bool(!flag) }
        let first = probe(position, variant: 1)
        return first.isIdentical(to: self) ? probe(position, variant: 2) : first
    }

    private func probe(_ position: Int, variant: Int) -> PredicateValue {
        let tag = UInt64(truncatingIfNeeded: position) & 0xFF_FFFF_FFFF
        return switch self {
        case .null, .bool: self
        case .int: .int(Int64(bitPattern: 0x7E57_0000_0000_0000 | UInt64(variant) << 40 | tag))
        case .double: .double(Double(bitPattern: 0x7FE7_0000_0000_0000 | UInt64(variant) << 40 | tag))
        case .decimal: .decimal(Decimal(string: "7\(variant)57.\(position)1")!)
        case .string: .string("\u{1}probe \(variant) \(position)")
        case .date: .date(Date(timeIntervalSinceReferenceDate: 1e15 * Double(variant) + Double(position)))
        case .data: .data(Data([0x7E, UInt8(variant)]) + Data("\(position)".utf8))
        case .uuid: .uuid(UUID())
        case .url: .url(URL(string: "x-probe:\(variant)/\(position)")!)
        }
    }
}

extension FormatPredicate {
    /// The constants of the tree, in the order of a walk of it.
    package var constants: [PredicateValue] {
        var found: [PredicateValue] = []
        _ = rewritten { expression, _ in
            if case .constant(let value) = expression { found.append(value) }
            return nil
        }
        return found
    }

    /// The tree with its constants replaced, in the order ``constants`` lists them, by what `replace` answers for
    /// each (its position and value).
    package func replacingConstants(_ replace: (Int, PredicateValue) -> PredicateValue) -> FormatPredicate {
        var position = 0
        return rewritten { expression, _ in
            guard case .constant(let value) = expression else { return nil }
            defer { position += 1 }
            return .constant(replace(position, value))
        }
    }

    /// The tree with every slottable constant replaced by its kind's representative: equal for predicates that
    /// differ only in such constants.
    package var shape: FormatPredicate {
        replacingConstants { $1.kindRepresentative }
    }
}

/// A cache of immutable entries in a fixed table of slots, one entry per slot, chosen by a hash the caller computes:
/// a newer entry takes the slot of an older one with the same slot. The caller checks that the entry it finds is
/// the one it wants (a slot is shared by every key whose hash lands there).
///
/// A look-up is one lock and one load, with no general hasher and no dictionary: what a screen's small query pays
/// for each of its caches when it runs with cold caches (beside an import) is the code and memory it touches. The
/// table holds its entries as objects, not as a generic parameter: a generic table used from another module of the
/// package was not specialized there, and built generic metadata on every look-up.
package final class SlotTable: Sendable {
    private let slots: Protected<[(any AnyObject & Sendable)?]>

    /// A table of `count` empty slots.
    package init(count: Int) {
        slots = Protected(Array(repeating: nil, count: count))
    }

    /// The entry in the slot of `hash`, if any.
    package func entry(for hash: FNV1a) -> (any AnyObject & Sendable)? {
        slots.withLock { $0[Self.slot(hash, $0.count)] }
    }

    /// Keeps `entry` in the slot of `hash`, in place of the one there (released after the lock).
    package func keep(_ entry: any AnyObject & Sendable, for hash: FNV1a) {
        let replaced = slots.withLock { slots in
            let slot = Self.slot(hash, slots.count)
            defer { slots[slot] = entry }
            return slots[slot]
        }
        withExtendedLifetime(replaced) {}
    }

    private static func slot(_ hash: FNV1a, _ count: Int) -> Int {
        Int(truncatingIfNeeded: hash.value % UInt64(count))
    }
}

/// FNV-1a over bytes: a few instructions per byte, which suits the short keys of the request caches (the general
/// hasher's set-up and finalization cost more than their bytes).
package struct FNV1a {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func combine(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    package mutating func combine(_ word: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { combine(byte: UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    /// Feeds the string's UTF-8 bytes and their count.
    package mutating func combine(bytesOf string: String) {
        combine(UInt64(string.utf8.count))
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes { combine(byte: byte) }
        }
        if done == nil {
            for byte in string.utf8 { combine(byte: byte) }
        }
    }

    /// Equal values (strings by their bytes) feed equal words.
    package mutating func combine(_ value: PredicateValue) {
        switch value {
        case .null: combine(byte: 0)
        case .bool(let v): combine(byte: v ? 1 : 2)
        case .int(let v): combine(byte: 3); combine(UInt64(bitPattern: v))
        case .double(let v): combine(byte: 4); combine(v.bitPattern)
        case .string(let v): combine(byte: 5); combine(bytesOf: v)
        default: combine(byte: 6); combine(UInt64(bitPattern: Int64(value.hashValue)))
        }
    }

    /// Feeds what tells predicates apart: their operators, key paths and constants. Rarer expressions feed only
    /// their kind (equal predicates still feed equal words; different ones that feed the same merely share a slot).
    package mutating func combine(_ predicate: FormatPredicate) {
        switch predicate {
        case .constant(let value): combine(byte: value ? 1 : 2)
        case .not(let inner): combine(byte: 3); combine(inner)
        case .and(let parts): combine(byte: 4); for part in parts { combine(part) }
        case .or(let parts): combine(byte: 5); for part in parts { combine(part) }
        case .comparison(let comparison):
            combine(byte: 6)
            combine(comparison.left)
            combine(bytesOf: comparison.op.rawValue)
            combine(bytesOf: comparison.modifier.rawValue)
            combine(UInt64(truncatingIfNeeded: comparison.options.rawValue))
            combine(comparison.right)
        }
    }

    package mutating func combine(_ expression: FormatExpression) {
        switch expression {
        case .constant(let value): combine(byte: 1); combine(value)
        case .keyPath(let path): combine(byte: 2); for key in path { combine(bytesOf: key) }
        case .variable(let name): combine(byte: 3); combine(bytesOf: name)
        case .evaluatedObject: combine(byte: 4)
        case .member: combine(byte: 5)
        case .aggregate(let items): combine(byte: 6); combine(UInt64(items.count))
        case .collection: combine(byte: 7)
        case .subquery: combine(byte: 8)
        }
    }
}

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

/// A context's map from IDs to live objects. It does not keep objects alive (unless asked, ``retainsObjects``), as
/// Core Data's does not: an unchanged object lives as long as the app holds it (changed ones are held by the
/// context's change sets), so reading a million objects in batches never keeps a million objects alive. Uniquing
/// holds: while an object lives, its ID leads to it.
///
/// Entries are unretained references rather than `weak` ones: a weak reference gives every object a side table,
/// which makes each retain and release of it take the slow path, and a registry of weak entries keeps an entry for
/// every object that has died until it is swept. Instead each object removes its own entry when it is deallocated
/// (``ManagedObject``'s `deinit`, which runs on its context's executor because objects never leave it), and every
/// path that detaches an object from its context removes the entry first, so an entry never outlives its object.
///
/// The table is its own open-addressing hash table rather than a `Dictionary`: every fetched row registers an object
/// and every object's end removes one, and a `Dictionary` hashed each ID with a seeded SipHash and shifted entries
/// back on every removal (a fifth of a large fetch's cost went to it). Here keys hash by one multiplication per
/// group of 64 (see `home(_:)`), an object's removal probes for its address (slots hold the key beside the
/// reference, so no other object is read), and removals leave tombstones that the next resize clears. Objects do
/// not remember their slots: a resize would then write to every registered object, a cache miss each while a large
/// fetch grows the table. Keys are row keys and process-wide counters, not input an attacker chooses.
struct ObjectRegistry {
    /// Sixteen bytes: the key's tag and the object's address, where 0 is an empty slot and 1 a tombstone (an
    /// emptied slot that lookups must probe past). A table of a million objects is then 16 MB rather than 24.
    private struct Slot {
        /// The entry's hash key (see `tag(of:)`): compared before the object's ID is read.
        var tag: UInt64 = 0
        var address: UInt = 0

        static let tombstone: UInt = 1

        init() {}

        init(tag: UInt64, object: ManagedObject) {
            self.tag = tag
            self.address = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
        }

        /// The object, for a slot that holds one (neither empty nor a tombstone).
        var object: ManagedObject? {
            guard address > Self.tombstone, let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
            return Unmanaged<ManagedObject>.fromOpaque(pointer).takeUnretainedValue()
        }

        var isEmpty: Bool { address == 0 }
    }

    private var slots: [Slot] = []
    /// The number of live entries.
    private(set) var count = 0
    /// With Core Data's `retainsRegisteredObjects`, every registered object, held; nil (the default) holds none.
    private var held: [ObjectIdentifier: ManagedObject]?

    /// Whether the registry keeps its objects alive (``ObjectContext/retainsRegisteredObjects``): turned on, it
    /// holds every object registered now and later; turned off, it lets go of them.
    var retainsObjects: Bool {
        get { held != nil }
        set {
            guard newValue != (held != nil) else { return }
            held = newValue ? Dictionary(objects.map { (ObjectIdentifier($0), $0) }, uniquingKeysWith: { first, _ in first }) : nil
        }
    }
    /// Live entries plus tombstones: what decides a resize.
    private var used = 0
    /// 64 minus the number of bits that pick a group of ``groupSize`` slots.
    private var shift = 64
    /// Consecutive keys that share a group of slots, a power of two: a kilobyte of table (see `home(_:)`).
    static let groupSize = 64
    /// The last entity name salted, and its salt: rows arrive in runs of one entity.
    private let lastSalt = SaltMemo()

    private final class SaltMemo {
        var name = ""
        var salt: UInt64 = 0
    }

    /// The key and the entity in one word: the row key, with a salt from the entity's name in bits 40 to 62
    /// (row keys of one table stay far below 2⁴⁰). Keys repeat across inheritance trees (each table numbers its
    /// rows); the salt keeps Book 5 and Author 5 in different groups, and the full ID decides. The top bit is the
    /// key's sign alone, so a slot tells a temporary ID without its object being read (see ``temporaryObjects``).
    @inline(__always)
    private func tag(of id: ObjectID) -> UInt64 { tag(key: id.rawKey, entityName: id.entityName) }

    @inline(__always)
    private func tag(key: Int64, entityName: String) -> UInt64 {
        if entityName != lastSalt.name {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in entityName.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            lastSalt.name = entityName
            lastSalt.salt = (hash << 40) & ~(1 << 63)
        }
        return UInt64(bitPattern: key) ^ lastSalt.salt
    }

    /// The first slot to probe for `tag`. Consecutive keys share a group of ``groupSize`` slots, and groups are
    /// scattered by Fibonacci hashing (the top bits of the group number times 2⁶⁴/φ, which spreads consecutive group
    /// numbers evenly): a fetch registers rows in key order and their objects are freed in that order, so
    /// consecutive entries are neighbours in the table, where a hash of each key sent every registration and removal
    /// to a different line of a table larger than the cache. A group is a kilobyte, which the processor fetches
    /// ahead when it is read in order, and a new page (a missed address translation) comes every 64 entries: with
    /// groups of 8 instead, W2's fetch of 200,000 objects took 0.24–0.31 s rather than 0.19–0.26 s (medians of eight,
    /// alternating runs), and freeing its objects up to a third longer.
    @inline(__always)
    private func home(_ tag: UInt64) -> Int {
        let offset = tag & UInt64(Self.groupSize - 1)
        guard shift < 64 else { return Int(truncatingIfNeeded: offset) }
        let group = (tag >> UInt64(Self.groupSize.trailingZeroBitCount)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: (group >> UInt64(shift)) << UInt64(Self.groupSize.trailingZeroBitCount) | offset)
    }

    /// The slot holding `id`, if any.
    private func find(_ id: ObjectID) -> Int? {
        guard !slots.isEmpty else { return nil }
        let (index, found, _) = probe(id)
        return found ? index : nil
    }

    /// Where `id`'s entry is, or else where a new entry for it goes: the first tombstone on its probe sequence, or
    /// the empty slot that ends the sequence (there is always one: the table is at most 5/8 full, tombstones
    /// included), with the key's tag. Reusing tombstones matters: objects of a few keys made and freed over and over
    /// (a to-many's members on each of many owners) would otherwise lengthen one run of slots with every round.
    @inline(__always)
    private func probe(_ id: ObjectID) -> (index: Int, found: Bool, tag: UInt64) {
        let mask = slots.count - 1
        let tag = tag(of: id)
        var index = home(tag)
        var firstTombstone: Int?
        while true {
            let slot = slots[index]
            if slot.isEmpty { return (firstTombstone ?? index, false, tag) }
            if slot.address == Slot.tombstone {
                if firstTombstone == nil { firstTombstone = index }
            } else if slot.tag == tag, let object = slot.object, object.storedKey == id.rawKey, object.entity.name == id.entityName {
                return (index, true, tag)
            }
            index = (index + 1) & mask
        }
    }

    subscript(id: ObjectID) -> ManagedObject? {
        get { find(id).flatMap { slots[$0].object } }
        set {
            if let index = find(id) {
                if held != nil, let old = slots[index].object { held![ObjectIdentifier(old)] = nil }
                if let newValue {
                    slots[index] = Slot(tag: slots[index].tag, object: newValue)
                    if held != nil { held![ObjectIdentifier(newValue)] = newValue }
                } else {
                    clear(index)
                }
            } else if let newValue {
                insert(newValue, for: id)
            }
        }
    }

    /// Registers `object` under `id`, which no entry holds (a new temporary ID): one probe sequence, where the
    /// subscript's setter looks for an entry to replace first.
    @inline(__always)
    mutating func registerNew(_ object: ManagedObject, for id: ObjectID) {
        assert(find(id) == nil, "\(id) is registered already")
        insert(object, for: id)
    }

    /// The object registered for `id`, or the one `make` creates, registered: one probe sequence either way (a
    /// large fetch registers every row it reads).
    @inline(__always)
    mutating func object(for id: ObjectID, orRegister make: () -> ManagedObject) -> (object: ManagedObject, isNew: Bool) {
        if (used + 1) * 8 > slots.count * 5 {
            if let index = find(id), let object = slots[index].object { return (object, false) }
            let object = make()
            insert(object, for: id)
            return (object, true)
        }
        // Room for one more: the probe that finds no entry ends at the empty slot the new entry takes.
        let (index, found, tag) = probe(id)
        if found, let object = slots[index].object { return (object, false) }
        let object = make()
        // `make` runs no registry code; should the table have changed meanwhile all the same, the slot found is not
        // trusted and the general insert is taken.
        guard slots.indices.contains(index), slots[index].address <= Slot.tombstone else {
            insert(object, for: id)
            return (object, true)
        }
        if slots[index].isEmpty { used += 1 }
        slots[index] = Slot(tag: tag, object: object)
        count += 1
        if held != nil { held![ObjectIdentifier(object)] = object }
        return (object, true)
    }

    /// Removes `object`'s entry, found under its ID's key by address; nothing happens when no slot holds it (the
    /// object was unregistered, or another took its ID since). Reads no other object, so it is safe to call from
    /// `object`'s `deinit`.
    mutating func remove(_ object: ManagedObject) {
        if held != nil { held![ObjectIdentifier(object)] = nil }
        guard !slots.isEmpty else { return }
        let address = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
        let mask = slots.count - 1
        var index = home(tag(key: object.storedKey, entityName: object.entity.name))
        while true {
            let slot = slots[index]
            if slot.address == address { return clear(index) }
            if slot.isEmpty { return }
            index = (index + 1) & mask
        }
    }

    /// Registers `object`, registered under its current ID, under `id` instead (a save's permanent ID for an
    /// insert): the old entry is found by address and the new one placed by a single probe, where a removal and an
    /// insert by ID probed three times.
    mutating func rekey(_ object: ManagedObject, to id: ObjectID) {
        remove(object)
        makeRoomForOne()
        let (index, found, tag) = probe(id)
        if !found {
            if slots[index].isEmpty { used += 1 }
            count += 1
        } else if held != nil, let replaced = slots[index].object, replaced !== object {
            // Another object held the ID (an insert a merge policy made an existing row): it is no longer registered.
            held![ObjectIdentifier(replaced)] = nil
        }
        slots[index] = Slot(tag: tag, object: object)
        if held != nil { held![ObjectIdentifier(object)] = object }
    }

    /// Every object the registry holds alive (see ``retainsObjects``): the registered ones, which a context detaches
    /// before it lets go of them (released elsewhere, still attached, one would trap off its queue).
    var heldObjects: [ManagedObject] { held.map { Array($0.values) } ?? [] }

    /// Every registered object.
    var objects: [ManagedObject] {
        var result: [ManagedObject] = []
        result.reserveCapacity(count)
        for slot in slots { if let object = slot.object { result.append(object) } }
        return result
    }

    /// Calls `body` with every registered object, without gathering them: a context's per-save passes over its
    /// objects (rewriting temporary IDs, dropping unchanged lists) each built an array of thousands and retained
    /// every object in it. The objects are not retained, so `body` must not free, register or unregister any: it
    /// may not run app code (an observer's callback could let go of an object that only the app held).
    func forEachObject(_ body: (ManagedObject) throws -> Void) rethrows {
        for slot in slots { if let object = slot.object { try body(object) } }
    }

    /// Every object registered under a temporary ID, found by the slots' tags alone: a context adopting the
    /// permanent IDs of a save reads these, not each of its registered objects (a main context of thousands of
    /// objects did so after every save below).
    var temporaryObjects: [ManagedObject] {
        var result: [ManagedObject] = []
        for slot in slots where slot.tag >> 63 == 1 { if let object = slot.object { result.append(object) } }
        return result
    }

    /// The number of emptied slots that lookups still probe past.
    var tombstoneCount: Int { used - count }

    /// The number of slots (what the table's memory holds, 16 bytes each; at least ``groupSize`` once it holds any).
    var capacity: Int { slots.count }

    /// Makes room for `count` entries without resizing on the way.
    mutating func reserveCapacity(_ count: Int) {
        let capacity = Self.capacity(for: count)
        if capacity > slots.count { resize(to: capacity) }
    }

    /// Empties the table. With `keepingCapacity`, the emptied table keeps its slots, cleared where they are: a
    /// context reset after a large fetch usually fetches as much again, and a table rebuilt smaller would be grown
    /// again during that fetch, each time into freshly mapped memory (a tenth of a large fetch went to faulting in
    /// such pages). A context's table therefore stays as large as its largest fetch needed, 16 bytes per slot.
    mutating func removeAll(keepingCapacity: Bool = false) {
        count = 0
        used = 0
        if held != nil { held = [:] }
        guard keepingCapacity, slots.count > Self.groupSize else {
            slots = []
            shift = 64
            return
        }
        clearSlots()
    }

    // MARK: Storage

    /// The table size for `count` entries: a power of two, at most 5/8 full.
    private static func capacity(for count: Int) -> Int {
        var capacity = groupSize
        while count * 8 > capacity * 5 { capacity *= 2 }
        return capacity
    }

    /// Empties every slot, keeping the table's memory.
    private mutating func clearSlots() {
        slots.withUnsafeMutableBufferPointer { $0.update(repeating: Slot()) }
    }

    /// Empties slot `index`. A probe sequence ends at an empty slot, so a slot followed by an empty one is emptied
    /// rather than left a tombstone, and so are the tombstones before it: when a run of neighbours goes (a save's
    /// temporary IDs, a fetch's objects freed in order), its last removal clears the whole run, and the table does
    /// not fill with tombstones to be swept by a rebuild.
    private mutating func clear(_ index: Int) {
        count -= 1
        let mask = slots.count - 1
        guard slots[(index + 1) & mask].isEmpty else {
            slots[index].address = Slot.tombstone
            return
        }
        var emptied = index
        slots[emptied] = Slot()
        used -= 1
        while true {
            emptied = (emptied - 1) & mask
            guard slots[emptied].address == Slot.tombstone else { return }
            slots[emptied] = Slot()
            used -= 1
        }
    }

    /// Rebuilds the table if one more entry would fill it past 5/8. Full of tombstones after a large fetch's objects
    /// went, the table keeps its size (see ``removeAll(keepingCapacity:)``) and is rebuilt where it is, so the next
    /// fetch of that size grows nothing; it doubles only when the live entries need it.
    private mutating func makeRoomForOne() {
        if (used + 1) * 8 > slots.count * 5 { resize(to: Swift.max(Self.capacity(for: count + 1), slots.count)) }
    }

    /// Adds an entry for `id`, which has none.
    private mutating func insert(_ object: ManagedObject, for id: ObjectID) {
        makeRoomForOne()
        let (index, _, tag) = probe(id)
        if slots[index].isEmpty { used += 1 }
        slots[index] = Slot(tag: tag, object: object)
        count += 1
        if held != nil { held![ObjectIdentifier(object)] = object }
    }

    /// Rebuilds the table at `capacity` slots (dropping tombstones), from the slots alone. At the same size the
    /// live entries are set aside and the slots cleared in place: no new memory to fault in.
    private mutating func resize(to capacity: Int) {
        let old: [Slot]
        if capacity == slots.count {
            old = slots.filter { $0.address > Slot.tombstone }
            clearSlots()
        } else {
            old = slots
            slots = Array(repeating: Slot(), count: capacity)
        }
        shift = 64 - (capacity.trailingZeroBitCount - Self.groupSize.trailingZeroBitCount)
        used = count
        let mask = capacity - 1
        for slot in old where slot.address > Slot.tombstone {
            var index = home(slot.tag)
            while !slots[index].isEmpty { index = (index + 1) & mask }
            slots[index] = slot
        }
    }
}

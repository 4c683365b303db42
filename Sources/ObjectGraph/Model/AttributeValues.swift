/// The attribute values of one row, in the entity's attribute order: what objects, snapshots and change sets hold.
///
/// A collection of ``AttributeValue`` with value semantics, like `[AttributeValue]`, stored compactly: each value
/// takes one 8-byte word and one tag byte, and only values that do not fit a word (strings, data, decimals, UUIDs,
/// URLs) are kept aside as ``AttributeValue``s. A row of numbers is therefore a single allocation with nothing to
/// release in it, and the rows a fetch reads share blocks of storage, short strings included (see
/// `AttributeValues.RowAllocator`): a large fetch allocates and frees a block per 128 rows instead of an array per
/// row, which was a third of its time.
///
/// ```swift
/// var values: AttributeValues = [.string("Dune"), .int(412)]
/// values[1] = .int(604)
/// ```
///
/// `@unchecked Sendable` is sound for the same reason `Array` is Sendable: a row's words are written only while the
/// row is being filled, before any collection holding it can be shared, or after `isKnownUniquelyReferenced` proved
/// that one collection alone holds the storage (`makeUnique()`); a shared row is only read. A block's later rows
/// are filled while its earlier ones are already out, on the reading thread only: their words are other words, and
/// the block's side list of short values, which grows meanwhile, is sealed before any of its rows reaches another
/// thread (a large fetch reads ahead on a thread of its own, and seals each batch's blocks before handing it over).
/// (`ManagedBuffer`, which the storage is, cannot be declared Sendable itself.)
public struct AttributeValues: @unchecked Sendable {
    /// The words, shared with every row of the same block and with copies of this collection until one changes;
    /// nil for no values, so an empty collection (every fault's) retains nothing. Nil exactly when `count` is 0:
    /// every access past the bounds check unwraps it unchecked.
    var storage: AttributeStorage?
    /// Where this row's tag words start in the storage, and the number of values: 32 bits each, so the collection
    /// is two words (objects hold two of them).
    private let base32: Int32, count32: Int32

    /// Where this row's tag words start in the storage.
    var base: Int { Int(base32) }
    /// The number of values.
    public var count: Int { Int(count32) }

    init(storage: AttributeStorage?, base: Int, count: Int) {
        self.storage = storage
        self.base32 = Int32(base)
        self.count32 = Int32(count)
    }

    /// No values: what an object holds while it is a fault.
    static var empty: AttributeValues { AttributeValues(storage: nil, base: 0, count: 0) }

    /// Creates values from a sequence of attribute values.
    public init<S: Sequence<AttributeValue>>(_ values: S) {
        let array = Array(values)
        self.init(count: array.count) { row in
            for (index, value) in array.enumerated() { row.set(value, at: index) }
        }
    }

    /// Creates `count` values written by `body` into storage of their own; every value starts as ``AttributeValue/null``.
    init(count: Int, othersCapacity: Int = 0, _ body: (inout RowWriter) -> Void) {
        guard count > 0 else {
            self = .empty
            return
        }
        let storage = AttributeStorage.make(wordCount: AttributeStorage.wordCount(forValues: count), othersCapacity: othersCapacity)
        self.init(storage: storage, base: 0, count: count)
        var writer = RowWriter(storage: storage, base: 0, count: count)
        body(&writer)
    }
}

extension AttributeValues: RandomAccessCollection, MutableCollection {
    /// The first position, always 0.
    public var startIndex: Int { 0 }
    /// One past the last position: ``count``.
    public var endIndex: Int { count }

    /// The value at `position`; setting copies the storage first when it is shared.
    public subscript(position: Int) -> AttributeValue {
        get {
            precondition(position >= 0 && position < count, "AttributeValues index \(position) out of range 0..<\(count)")
            return storage.unsafelyUnwrapped.value(base: base, count: count, at: position)
        }
        set { write(at: position) { $0.set(newValue, at: position) } }
    }

    /// Gives this collection storage of its own before a write, copying only its own row out of a shared block.
    /// The test is inlined and the copy is not: every typed setter asks, and only an object's first write copies.
    @inline(__always)
    mutating func makeUnique() {
        if count == 0 || isKnownUniquelyReferenced(&storage) { return }
        copyOwnRow()
    }

    @inline(never)
    private mutating func copyOwnRow() {
        let copy = AttributeStorage.make(wordCount: AttributeStorage.wordCount(forValues: count))
        copy.copyRow(from: storage.unsafelyUnwrapped, base: base, count: count)
        self = AttributeValues(storage: copy, base: 0, count: count)
    }

    /// Writes the integer `value` at `position`, copying the storage first when it is shared: the typed setters'
    /// path, which builds no ``AttributeValue``.
    @inline(__always)
    mutating func setInt(_ value: Int64, at position: Int) {
        write(at: position) { $0.setInt(value, at: position) }
    }

    /// Writes at `position` through `body`, after checking the position and copying the storage when it is shared.
    @inline(__always)
    private mutating func write(at position: Int, _ body: (inout RowWriter) -> Void) {
        precondition(position >= 0 && position < count, "AttributeValues index \(position) out of range 0..<\(count)")
        makeUnique()
        var writer = RowWriter(storage: storage.unsafelyUnwrapped, base: base, count: count)
        body(&writer)
    }

    /// Whether the value at `position` differs from `other`'s there (`other` holding as many values): what a
    /// save asks of every attribute of every updated object, compared without building values where words decide.
    @inline(__always)
    func differs(from other: AttributeValues, at position: Int) -> Bool {
        precondition(other.count == count, "AttributeValues of \(count) values compared with \(other.count)")
        precondition(position >= 0 && position < count, "AttributeValues index \(position) out of range 0..<\(count)")
        return !storage.unsafelyUnwrapped.valuesEqual(base, other.storage.unsafelyUnwrapped, other.base, count: count, at: position)
    }

    /// Whether the value at `position` is ``AttributeValue/null``, read from its tag: a save checks every required
    /// attribute of every changed object so, without building a value.
    @inline(__always)
    func isNull(at position: Int) -> Bool {
        precondition(position >= 0 && position < count, "AttributeValues index \(position) out of range 0..<\(count)")
        return storage.unsafelyUnwrapped.isNull(base: base, count: count, at: position)
    }

    /// The integer at `position` when it holds one: the typed getters' path, which builds no ``AttributeValue``.
    @inline(__always)
    func int64(at position: Int) -> Int64? {
        guard position >= 0 && position < count else { return nil }
        return storage.unsafelyUnwrapped.int64(base: base, count: count, at: position)
    }
}

extension AttributeValues: ExpressibleByArrayLiteral {
    /// Creates values from a literal: `[.string("Dune"), .null]`.
    public init(arrayLiteral elements: AttributeValue...) {
        self.init(elements)
    }
}

extension AttributeValues: Hashable {
    /// Equal when they hold equal values in the same order (as arrays of ``AttributeValue`` compare).
    public static func == (lhs: AttributeValues, rhs: AttributeValues) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.storage === rhs.storage && lhs.base == rhs.base { return true }
        return lhs.storage.unsafelyUnwrapped.rowsEqual(lhs.base, rhs.storage.unsafelyUnwrapped, rhs.base, count: lhs.count)
    }

    /// Hashes the values in order, consistently with ``==(_:_:)`` whatever the storage.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for value in self { hasher.combine(value) }
    }
}

extension AttributeValues: CustomStringConvertible {
    /// The values as an array literal would print.
    public var description: String { "[" + map(\.description).joined(separator: ", ") + "]" }
}

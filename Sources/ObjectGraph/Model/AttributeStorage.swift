import Foundation

/// The words behind ``AttributeValues``: for a row of `n` values, `n` tag bytes (packed eight to a word), then `n`
/// payload words. Values that do not fit a word are kept in the header's `others`, the payload holding their index.
/// One storage holds one row, or a block of the rows of one read (`AttributeValues.RowAllocator`), each at its base;
/// a block's `others` holds the short values of all its rows.
///
/// A value's slot keeps its kind of home: once a position holds an `others` entry, later values at that position are
/// written to that entry, so changing a string back and forth never grows `others`.
final class AttributeStorage: ManagedBuffer<AttributeStorage.Header, UInt64> {
    struct Header {
        var others: [AttributeValue]
    }

    /// What a slot's payload word holds. A struct of constants rather than an enum: the tag byte is read for every
    /// value, and an enum's initializer would validate it each time.
    struct Tag: Equatable {
        let rawValue: UInt8
        static let null = Tag(rawValue: 0), bool = Tag(rawValue: 1), int = Tag(rawValue: 2), double = Tag(rawValue: 3)
        static let date = Tag(rawValue: 4), other = Tag(rawValue: 5)
    }

    static func tagWordCount(_ count: Int) -> Int { (count + 7) >> 3 }

    static func wordCount(forValues count: Int) -> Int { tagWordCount(count) + count }

    /// New storage of `wordCount` zeroed words (every tag ``Tag/null``), with room for `othersCapacity` values set
    /// aside (a row of strings then fills its side list without growing it value by value).
    static func make(wordCount: Int, othersCapacity: Int = 0) -> AttributeStorage {
        let buffer = create(minimumCapacity: wordCount) { _ in
            var others: [AttributeValue] = []
            others.reserveCapacity(othersCapacity)
            return Header(others: others)
        }
        let storage = unsafeDowncast(buffer, to: AttributeStorage.self)
        storage.withUnsafeMutablePointerToElements { $0.initialize(repeating: 0, count: wordCount) }
        return storage
    }

    /// The value set aside at `index`, read through the header's address: reading `header` itself is checked for
    /// exclusive access at run time, which reading every string of a walk through 200,000 rows paid for. Sound: a
    /// storage is written only while one row holds it uniquely (rows copy shared storage before writing), and no
    /// write to the side list is in progress while a value is read from it.
    @inline(__always)
    func setAside(_ index: Int) -> AttributeValue {
        withUnsafeMutablePointerToHeader { $0.pointee.others[index] }
    }

    @inline(__always)
    static func tag(_ words: UnsafeMutablePointer<UInt64>, _ position: Int) -> Tag {
        Tag(rawValue: UInt8(truncatingIfNeeded: words[position >> 3] >> UInt64((position & 7) << 3)))
    }

    @inline(__always)
    static func setTag(_ tag: Tag, _ words: UnsafeMutablePointer<UInt64>, _ position: Int) {
        let shift = UInt64((position & 7) << 3)
        let word = words[position >> 3] & ~(0xFF << shift)
        words[position >> 3] = word | (UInt64(tag.rawValue) << shift)
    }

    @inline(__always)
    func value(base: Int, count: Int, at position: Int) -> AttributeValue {
        withUnsafeMutablePointerToElements { elements in
            let row = elements + base
            let payload = row[Self.tagWordCount(count) + position]
            switch Self.tag(row, position) {
            case .null: return .null
            case .bool: return .bool(payload != 0)
            case .int: return .int(Int64(bitPattern: payload))
            case .double: return .double(Double(bitPattern: payload))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: payload)))
            default: return setAside(Int(payload))
            }
        }
    }

    @inline(__always)
    func int64(base: Int, count: Int, at position: Int) -> Int64? {
        withUnsafeMutablePointerToElements { elements in
            let row = elements + base
            guard Self.tag(row, position) == .int else { return nil }
            return Int64(bitPattern: row[Self.tagWordCount(count) + position])
        }
    }

    /// Whether the value at `position` is null: a null tag, or a value kept aside that is null (a position that
    /// keeps its entry aside holds null there once its string is set to nil).
    @inline(__always)
    func isNull(base: Int, count: Int, at position: Int) -> Bool {
        withUnsafeMutablePointerToElements { elements in
            let row = elements + base
            switch Self.tag(row, position) {
            case .null: return true
            case .other: return setAside(Int(row[Self.tagWordCount(count) + position])).isNull
            default: return false
            }
        }
    }

    /// Copies one row of `source` into this empty storage at base 0, taking along only the row's own `others`.
    func copyRow(from source: AttributeStorage, base: Int, count: Int) {
        let words = Self.wordCount(forValues: count)
        withUnsafeMutablePointerToElements { target in
            source.withUnsafeMutablePointerToElements { from in
                target.update(from: from + base, count: words)
                let tagWords = Self.tagWordCount(count)
                let asides = (0..<count).reduce(0) { $0 + (Self.tag(target, $1) == .other ? 1 : 0) }
                if asides == 0 { return }
                // A row alone in its storage refers to every value set aside there, each once (rows in shared blocks
                // set nothing aside): the copy shares that list, at the same positions, until either side writes
                // one. Building a list of its own was an allocation per fetched object's first change.
                if base == 0 && asides == source.header.others.count {
                    header.others = source.header.others
                    return
                }
                header.others.reserveCapacity(asides)
                for position in 0..<count where Self.tag(target, position) == .other {
                    header.others.append(source.header.others[Int(target[tagWords + position])])
                    target[tagWords + position] = UInt64(header.others.count - 1)
                }
            }
        }
    }

    /// Whether `other` holds the very list of set-aside values this storage holds (not an equal one).
    private func sharesSetAsideValues(with other: AttributeStorage) -> Bool {
        withUnsafeMutablePointerToHeader { mine in
            other.withUnsafeMutablePointerToHeader { theirs in
                mine.pointee.others.withUnsafeBufferPointer { left in
                    theirs.pointee.others.withUnsafeBufferPointer { right in left.baseAddress == right.baseAddress && left.count == right.count }
                }
            }
        }
    }

    /// Whether two rows hold equal values, comparing words where that is exact (nulls, Booleans, integers).
    func rowsEqual(_ base: Int, _ other: AttributeStorage, _ otherBase: Int, count: Int) -> Bool {
        (0..<count).allSatisfy { valuesEqual(base, other, otherBase, count: count, at: $0) }
    }

    /// Whether two rows hold equal values at `position`: compared by word where that is exact (nulls, Booleans,
    /// integers, or the same entry of the same side list), else as values.
    @inline(__always)
    func valuesEqual(_ base: Int, _ other: AttributeStorage, _ otherBase: Int, count: Int, at position: Int) -> Bool {
        let same: Bool? = withUnsafeMutablePointerToElements { lhs in
            other.withUnsafeMutablePointerToElements { rhs in
                let leftTag = Self.tag(lhs + base, position)
                guard leftTag == Self.tag(rhs + otherBase, position) else { return nil }
                let slot = Self.tagWordCount(count) + position
                switch leftTag {
                case .null: return true
                case .bool, .int: return lhs[base + slot] == rhs[otherBase + slot]
                // The same entry of the same side list: a row and the copy it shares its list with (see
                // `copyRow(from:base:count:)`), as an updated object's current and committed rows usually are.
                case .other where lhs[base + slot] == rhs[otherBase + slot] && (self === other || sharesSetAsideValues(with: other)):
                    return true
                default: return nil
                }
            }
        }
        return same ?? (value(base: base, count: count, at: position) == other.value(base: otherBase, count: count, at: position))
    }
}

extension AttributeValues {
    /// Writes the values of one row of storage that is not shared yet (being built, or uniquely referenced).
    ///
    /// The store's reading path writes integers and reals straight from SQLite's column functions with it, so a row
    /// of numbers is filled without building an ``AttributeValue`` per column.
    struct RowWriter {
        /// Borrowed, not retained: every writer lives inside a call that holds its storage (the collection being
        /// built or changed, or the block its `RowAllocator` keeps), and a retain and a release per row were a
        /// twentieth of reading one.
        unowned(unsafe) let storage: AttributeStorage
        /// The row's first word: its tag words, then a payload word per value. A storage's elements never move, and
        /// the storage outlives the writer (above).
        private let row: UnsafeMutablePointer<UInt64>
        let count: Int
        /// Whether this is a fresh row of a shared block: every tag is still null, each position is written once, and
        /// values that do not fit a word go to the block's side list when they are short
        /// (``AttributeValue/isShortEnoughForABlock``), to ``valuesSetAside`` when not.
        let isFreshBlockRow: Bool
        /// A block's row's values too long to share the block, with their positions, for `RowAllocator` to move the
        /// row out (nil until there is one, so the usual row creates and destroys no array).
        var valuesSetAside: [(Int, AttributeValue)]?

        init(storage: AttributeStorage, base: Int, count: Int, isFreshBlockRow: Bool = false) {
            self.storage = storage
            self.row = storage.withUnsafeMutablePointerToElements { $0 } + base
            self.count = count
            self.isFreshBlockRow = isFreshBlockRow
        }

        @inline(__always)
        private func write(_ tag: AttributeStorage.Tag, _ payload: UInt64, at position: Int) -> Bool {
            if isFreshBlockRow {
                // A null tag is all zero bits: the new tag is or-ed in, without reading what the position held.
                row[position >> 3] |= UInt64(tag.rawValue) << UInt64((position & 7) << 3)
            } else {
                // A position that keeps a value aside holds its index there, which must stay.
                guard AttributeStorage.tag(row, position) != .other else { return false }
                AttributeStorage.setTag(tag, row, position)
            }
            row[AttributeStorage.tagWordCount(count) + position] = payload
            return true
        }

        /// Writes a value that does not fit a word (or any value at a position that already keeps one aside).
        private mutating func writeOther(_ value: AttributeValue, at position: Int) {
            let slot = AttributeStorage.tagWordCount(count) + position
            if isFreshBlockRow {
                guard value.isShortEnoughForABlock else {
                    valuesSetAside = (valuesSetAside ?? []) + [(position, value)]
                    return
                }
                // Into the block's side list, which only the reading thread writes until the block is sealed
                // (`RowAllocator.seal()`), before any of its rows reaches another thread.
                storage.withUnsafeMutablePointerToHeader { header in
                    header.pointee.others.append(value)
                    row[position >> 3] |= UInt64(AttributeStorage.Tag.other.rawValue) << UInt64((position & 7) << 3)
                    row[slot] = UInt64(header.pointee.others.count - 1)
                }
                return
            }
            // Through the header's address: `header` itself is checked for exclusive access at run time, a seventh of
            // reading rows with a string each. Sound for the reason `AttributeStorage.setAside(_:)` gives: this row's
            // storage is not shared while it is written, and nothing else reads or writes its side list meanwhile.
            storage.withUnsafeMutablePointerToHeader { header in
                if AttributeStorage.tag(row, position) == .other {
                    header.pointee.others[Int(row[slot])] = value
                } else {
                    header.pointee.others.append(value)
                    AttributeStorage.setTag(.other, row, position)
                    row[slot] = UInt64(header.pointee.others.count - 1)
                }
            }
        }

        @inline(__always)
        mutating func setNull(at position: Int) {
            if !write(.null, 0, at: position) { writeOther(.null, at: position) }
        }

        @inline(__always)
        mutating func setInt(_ value: Int64, at position: Int) {
            if !write(.int, UInt64(bitPattern: value), at: position) { writeOther(.int(value), at: position) }
        }

        @inline(__always)
        mutating func setDouble(_ value: Double, at position: Int) {
            if !write(.double, value.bitPattern, at: position) { writeOther(.double(value), at: position) }
        }

        /// Writes `value` aside even when it fits a word, so the position keeps a side-list entry: default values of
        /// attributes whose values never fit a word are written so, and an insert's strings then replace that entry
        /// rather than grow the list.
        mutating func setAside(_ value: AttributeValue, at position: Int) {
            precondition(!isFreshBlockRow, "a block's rows keep nothing aside")
            writeOther(value, at: position)
        }

        mutating func set(_ value: AttributeValue, at position: Int) {
            switch value {
            case .null: setNull(at: position)
            case .bool(let flag): if !write(.bool, flag ? 1 : 0, at: position) { writeOther(value, at: position) }
            case .int(let number): setInt(number, at: position)
            case .double(let number): setDouble(number, at: position)
            case .date(let date):
                if !write(.date, date.timeIntervalSinceReferenceDate.bitPattern, at: position) { writeOther(value, at: position) }
            case .string, .decimal, .data, .uuid, .url, .objectID: writeOther(value, at: position)
            }
        }
    }
}

extension AttributeValues {
    /// Hands out the rows of a fetch from shared blocks of storage: one allocation per block instead of one per row,
    /// and one release of a block instead of one per row when the objects go.
    ///
    /// A block keeps its rows' short values that do not fit a word (strings, decimals, UUIDs…) in its side list;
    /// a longer string or any data sends its row to storage of its own, so that an object kept from a large fetch
    /// keeps other rows' short values alive, never their documents. Nothing in a block is written once the block is
    /// sealed (``seal()``), which the reader does before it hands rows to another thread; until then only the
    /// reading thread writes the block and reads its rows. Blocks grow from one row to 128 (×4 each time), so a
    /// lookup of one row allocates one row, and an object kept from a large fetch keeps at most 127 other rows'
    /// values alive.
    struct RowAllocator {
        /// Values per row.
        let count: Int
        /// Whether rows may share blocks (false for rows of no values).
        let sharesBlocks: Bool
        /// The values per row that never fit a word (the entity's attributes of such kinds): a block makes room for
        /// that many per row in its side list.
        let othersCapacity: Int
        private var block: AttributeStorage?
        private var nextBase = 0
        private var blockEnd = 0
        private var nextBlockRows = 1

        init(count: Int, othersCapacity: Int = 0) {
            self.count = count
            self.sharesBlocks = count > 0
            self.othersCapacity = othersCapacity
        }

        /// Ends the current block: the next row starts a new one. Called before the rows handed out so far go to
        /// another thread, which may then read their values while this one fills more rows.
        mutating func seal() {
            block = nil
        }

        /// The next row, filled by `body`.
        mutating func row(_ body: (inout RowWriter) -> Void) -> AttributeValues {
            guard sharesBlocks else { return AttributeValues(count: count, othersCapacity: othersCapacity, body) }
            let rowWords = AttributeStorage.wordCount(forValues: count)
            let storage: AttributeStorage
            if let block, nextBase + rowWords <= blockEnd {
                storage = block
            } else {
                let rows = nextBlockRows
                blockEnd = rowWords * rows
                nextBlockRows = Swift.min(nextBlockRows * 4, 128)
                storage = AttributeStorage.make(wordCount: blockEnd, othersCapacity: othersCapacity * rows)
                block = storage
                nextBase = 0
            }
            let base = nextBase
            nextBase += rowWords
            var writer = RowWriter(storage: storage, base: base, count: count, isFreshBlockRow: true)
            body(&writer)
            let values = AttributeValues(storage: storage, base: base, count: count)
            guard let valuesSetAside = writer.valuesSetAside else { return values }
            // A value too long to share a block: this row moves to storage of its own, where it can keep it.
            var own = values
            own.makeUnique()
            var ownWriter = RowWriter(storage: own.storage.unsafelyUnwrapped, base: 0, count: count)
            for (position, value) in valuesSetAside { ownWriter.set(value, at: position) }
            return own
        }
    }
}

extension AttributeValue {
    /// Whether a fetched row may keep this value in a block it shares with other rows: a value that does not fit a
    /// word but is short (a string of at most 256 bytes, a decimal, a UUID). A row with longer text, data or a URL
    /// gets storage of its own, so a kept object never keeps another row's large values alive.
    var isShortEnoughForABlock: Bool {
        switch self {
        case .string(let text): text.utf8.count <= 256
        case .url, .data, .objectID: false
        case .null, .bool, .int, .double, .date, .decimal, .uuid: true
        }
    }
}

import Foundation
import GRDB
import GRDBSQLite

/// Reads the rows of one table's statement into snapshots: whether the table holds one entity is decided once per
/// read rather than per row (copying the table's optional entity out for each row cost 2% of a large fetch), and the
/// values of successive rows share blocks of storage.
struct RowReader {
    /// The table's only entity, when it has one: its rows need no `_entity` lookup.
    private let single: TableLayout.EntityColumns?
    private let singleName: String
    private let table: TableLayout
    private var blocks = RowBlocks()
    /// Where values kept beside the store are read from (see ``ExternalBinaryData``).
    private let external: ExternalBinaryData
    /// A value of the row just read that could not be read from its file.
    private var failure: ObjectGraphError?

    init(table: TableLayout, external: ExternalBinaryData) {
        self.table = table
        self.single = table.single?.columns
        self.singleName = table.single?.name ?? ""
        self.external = external
    }

    /// Ends the blocks the rows read so far share: call it before those rows reach another thread, or before this
    /// reader goes to another thread while they stay (the side list of a block's short values grows as rows are
    /// read, and must not while another thread reads it).
    mutating func sealBlocks() {
        blocks.seal()
    }

    /// The row the statement is positioned on (columns in ``TableLayout/selectList`` order) as a snapshot.
    mutating func snapshot(_ statement: OpaquePointer) throws -> Snapshot {
        let snapshot: Snapshot
        if let single {
            snapshot = read(statement, entityName: singleName, columns: single)
        } else {
            let entityName = sqlite3_column_text(statement, 1).map { String(cString: $0) } ?? ""
            guard let found = table.entities[entityName] else { throw ObjectGraphError.unknownEntity(entityName) }
            snapshot = read(statement, entityName: entityName, columns: found)
        }
        if let failure {
            self.failure = nil
            throw failure
        }
        return snapshot
    }

    @inline(__always)
    private mutating func read(_ statement: OpaquePointer, entityName: String, columns: TableLayout.EntityColumns) -> Snapshot {
        // Integers and reals in numeric attributes (most of what rows hold) go straight from SQLite's column
        // functions into the values' words, and text into strings; everything else goes through GRDB's value and
        // ``SQLiteValueCoding``, which holds the rules for every other pairing. The reads are walked by index through
        // a buffer, taken once per row, rather than by an enumerated iterator over the array.
        let external = self.external
        var failed: ObjectGraphError?
        let values = blocks.row(for: columns) { row in
            columns.reads.withUnsafeBufferPointer { reads in
                for index in reads.indices {
                    let read = reads[index]
                    // No column: a transient attribute starts from its default. Tested first only in entities that
                    // have one, so that every other row's loop stays as it was.
                    if columns.hasTransient && read.kind == .transient {
                        row.set(columns.defaults[index], at: index)
                        continue
                    }
                    // One column lookup per value: the type and the number are then read from the same cell (asking
                    // the statement twice, for the type and for the number, was a sixth of a large fetch).
                    let cell = sqlite3_column_value(statement, read.position)
                    switch (sqlite3_value_type(cell), read.kind) {
                    case (SQLITE_NULL, _): row.setNull(at: index)
                    case (SQLITE_INTEGER, .integer): row.setInt(sqlite3_value_int64(cell), at: index)
                    case (SQLITE_FLOAT, .real): row.setDouble(sqlite3_value_double(cell), at: index)
                    case (SQLITE_TEXT, .text):
                        // Read by its length, the text then its length as SQLite asks: no scan for its end, and
                        // no database value made first.
                        let text = sqlite3_value_text(cell)
                        let length = Int(sqlite3_value_bytes(cell))
                        row.set(.string(text.map { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""), at: index)
                    case (SQLITE_TEXT, .other) where columns.attributeTypes[index].isData:
                        // Text where a value is a blob: the name of the file keeping it (see ``ExternalBinaryData``).
                        let name = String(cString: sqlite3_value_text(cell))
                        do {
                            row.set(.data(try external.read(name)), at: index)
                        } catch {
                            failed = error as? ObjectGraphError ?? .storeReadFailed(path: external.storePath, reason: "\(error)")
                            row.setNull(at: index)
                        }
                    default:
                        let value = DatabaseValue(sqliteStatement: statement, index: read.position)
                        row.set(SQLiteValueCoding.decode(value, as: columns.attributeTypes[index]), at: index)
                    }
                }
            }
        }
        if let failed { failure = failed }
        var toOne: [ObjectID?] = []
        // Reserving on an empty array would give every row a buffer of its own, even with no to-one to hold.
        if !columns.toOne.isEmpty || columns.transientToOneCount > 0 { toOne.reserveCapacity(columns.toOne.count + columns.transientToOneCount) }
        for slot in columns.toOne.indices {
            let position = Int32(columns.toOne[slot])
            if sqlite3_column_type(statement, position) != SQLITE_NULL {
                let destination = columns.toOneEntity[slot].flatMap { sqlite3_column_text(statement, Int32($0)).map { String(cString: $0) } }
                    ?? columns.toOneDestination[slot]
                toOne.append(ObjectID(entityName: destination, rawKey: sqlite3_column_int64(statement, position)))
            } else {
                toOne.append(nil)
            }
        }
        for _ in 0..<columns.transientToOneCount { toOne.append(nil) }
        return Snapshot(
            objectID: ObjectID(entityName: entityName, rawKey: sqlite3_column_int64(statement, 0)),
            version: sqlite3_column_int64(statement, 2), values: values, toOne: toOne)
    }
}

/// The blocks of value storage one read fills, one allocator per entity of the table (their rows differ in length).
/// The first entity's allocator is kept apart: most reads are of one entity, and they then search no list.
struct RowBlocks {
    private var firstColumns: TableLayout.EntityColumns?
    private var firstAllocator = AttributeValues.RowAllocator(count: 0)
    private var more: [(columns: TableLayout.EntityColumns, allocator: AttributeValues.RowAllocator)] = []

    /// Ends every current block (see `AttributeValues.RowAllocator.seal()`).
    mutating func seal() {
        firstAllocator.seal()
        for index in more.indices { more[index].allocator.seal() }
    }

    /// The next row of `columns`' entity, filled by `body`.
    @inline(__always)
    mutating func row(for columns: TableLayout.EntityColumns, _ body: (inout AttributeValues.RowWriter) -> Void) -> AttributeValues {
        if firstColumns === columns { return firstAllocator.row(body) }
        return otherRow(for: columns, body)
    }

    private mutating func otherRow(for columns: TableLayout.EntityColumns, _ body: (inout AttributeValues.RowWriter) -> Void) -> AttributeValues {
        let allocator = AttributeValues.RowAllocator(count: columns.attributes.count, othersCapacity: columns.wordlessCount)
        if firstColumns == nil {
            (firstColumns, firstAllocator) = (columns, allocator)
            return firstAllocator.row(body)
        }
        for index in more.indices where more[index].columns === columns {
            return more[index].allocator.row(body)
        }
        more.append((columns, allocator))
        return more[more.count - 1].allocator.row(body)
    }
}

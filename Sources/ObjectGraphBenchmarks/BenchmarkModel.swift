import GRDB
import ObjectGraph

/// The benchmark entity: ten Int64 attributes, the first indexed.
@Entity
public final class Item: ManagedObject {
    @Attribute(isIndexed: true) public var a0: Int64 = 0
    public var a1: Int64 = 0
    public var a2: Int64 = 0
    public var a3: Int64 = 0
    public var a4: Int64 = 0
    public var a5: Int64 = 0
    public var a6: Int64 = 0
    public var a7: Int64 = 0
    public var a8: Int64 = 0
    public var a9: Int64 = 0
}

extension Item {
    /// The benchmark's values for row `row`: `row * 10 + column` in column `column`.
    package func fill(_ row: Int) {
        let b = Int64(row * 10)
        a0 = b; a1 = b + 1; a2 = b + 2; a3 = b + 3; a4 = b + 4
        a5 = b + 5; a6 = b + 6; a7 = b + 7; a8 = b + 8; a9 = b + 9
    }
}

/// The same row as a GRDB record.
struct ItemRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
    var id: Int64?
    var a0, a1, a2, a3, a4, a5, a6, a7, a8, a9: Int64
}

let plainSchema = """
    CREATE TABLE item (id INTEGER PRIMARY KEY, a0 INTEGER, a1 INTEGER, a2 INTEGER, a3 INTEGER, a4 INTEGER,
                       a5 INTEGER, a6 INTEGER, a7 INTEGER, a8 INTEGER, a9 INTEGER);
    CREATE INDEX item_a0 ON item(a0);
    """

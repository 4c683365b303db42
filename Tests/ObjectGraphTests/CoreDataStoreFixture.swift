import Foundation
import GRDB
@testable import ObjectGraph

/// Core Data SQLite stores as Core Data lays them out, written here with SQL (not with the reader's layout code):
/// `Z_PRIMARYKEY`, `Z_METADATA` with its property list, `Z_MODELCACHE`, one table per inheritance root with `Z_PK`,
/// `Z_ENT`, `Z_OPT` and `Z<NAME>` columns (numbered when names collide), to-one keys, `Z_FOK_` order columns and
/// `Z_<n><NAME>` join tables.
enum CoreDataStoreFixture {
    /// Author 1, Media 2 (abstract) with Book 3 and Movie 4, Tag 5, Chapter 6, Sample 7 (every attribute type).
    static let entities: [EntityDescription] = [
        EntityDescription("Author", attributes: [.init("name", .string)],
                          relationships: [.init("books", destination: "Book", inverse: "author", isToMany: true, deleteRule: .cascade)]),
        EntityDescription("Media", attributes: [.init("title", .string)], isAbstract: true),
        EntityDescription(
            "Book", attributes: [.init("pages", .int32), .init("rating", .double)],
            relationships: [
                .init("author", destination: "Author", inverse: "books"),
                .init("tags", destination: "Tag", inverse: "books", isToMany: true),
                .init("chapters", destination: "Chapter", inverse: "book", isToMany: true, isOrdered: true),
            ],
            parent: "Media"),
        // Book's `rating` is a number, Movie's a text: one table, so Movie's is ZRATING1.
        EntityDescription("Movie", attributes: [.init("minutes", .int64), .init("rating", .string)], parent: "Media"),
        EntityDescription("Tag", attributes: [.init("label", .string)],
                          relationships: [.init("books", destination: "Book", inverse: "tags", isToMany: true, isOrdered: true)]),
        EntityDescription("Chapter", attributes: [.init("heading", .string)],
                          relationships: [.init("book", destination: "Book", inverse: "chapters")]),
        EntityDescription("Sample", attributes: [
            .init("string", .string), .init("bool", .bool), .init("int16", .int16), .init("int32", .int32), .init("int64", .int64),
            .init("double", .double), .init("float", .float), .init("decimal", .decimal), .init("date", .date), .init("data", .binary),
            .init("uuid", .uuid), .init("url", .uri), .init("transformed", .codable(typeName: "Transformable")),
            external("inlineBlob"), external("fileBlob"),
        ]),
    ]

    static func external(_ name: String) -> AttributeDescription {
        var attribute = AttributeDescription(name, .binary)
        attribute.allowsExternalBinaryDataStorage = true
        return attribute
    }

    static let storeUUID = "8E1C1D2A-5B0F-4C2B-9D6E-3F7A1B2C4D5E"
    static let externalBytes = Data((0..<200).map { UInt8($0) })
    static let externalName = "5A4C3B2A-1F0E-4D9C-8B7A-6F5E4D3C2B1A"

    /// Writes the store at `url`: Ann (books Dune, with chapters in an order of their own and tags sf and classic, and
    /// Emma; a tag's books are ordered, classic's Emma first), a movie, a sample of every attribute type, and the bytes of an externally stored value beside it.
    static func writeLibrary(at url: URL, metadata extra: [String: Any] = [:]) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try writeCoreDataTables(db, entities: [
                (1, "Author", 0, 1), (2, "Media", 0, 3), (3, "Book", 2, 0), (4, "Movie", 2, 0), (5, "Tag", 0, 2), (6, "Chapter", 0, 3), (7, "Sample", 0, 1),
            ], metadata: extra)
            try db.execute(sql: """
                CREATE TABLE ZAUTHOR (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR);
                CREATE TABLE ZMEDIA (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPAGES INTEGER, ZAUTHOR INTEGER,
                    ZMINUTES INTEGER, ZRATING FLOAT, ZRATING1 VARCHAR, ZTITLE VARCHAR);
                CREATE TABLE ZTAG (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR);
                CREATE TABLE ZCHAPTER (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZBOOK INTEGER, Z_FOK_BOOK INTEGER, ZHEADING VARCHAR);
                CREATE TABLE Z_3TAGS (Z_3BOOKS INTEGER, Z_5TAGS INTEGER, Z_FOK_3BOOKS INTEGER, PRIMARY KEY (Z_3BOOKS, Z_5TAGS));
                CREATE TABLE ZSAMPLE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZBOOL INTEGER, ZINT16 INTEGER, ZINT32 INTEGER,
                    ZINT64 INTEGER, ZDATE TIMESTAMP, ZDECIMAL DECIMAL, ZDOUBLE FLOAT, ZFLOAT FLOAT, ZSTRING VARCHAR, ZURL VARCHAR,
                    ZDATA BLOB, ZFILEBLOB BLOB, ZINLINEBLOB BLOB, ZTRANSFORMED BLOB, ZUUID BLOB);
                INSERT INTO ZAUTHOR VALUES (1, 1, 3, 'Ann');
                INSERT INTO ZMEDIA VALUES (1, 3, 2, 412, 1, NULL, 4.5, NULL, 'Dune');
                INSERT INTO ZMEDIA VALUES (2, 3, 1, 240, 1, NULL, 3.0, NULL, 'Emma');
                INSERT INTO ZMEDIA VALUES (3, 4, 1, NULL, NULL, 155, NULL, 'PG-13', 'Dune (film)');
                INSERT INTO ZTAG VALUES (1, 5, 1, 'sf');
                INSERT INTO ZTAG VALUES (2, 5, 1, 'classic');
                INSERT INTO ZCHAPTER VALUES (1, 6, 1, 1, 3072, 'Appendix');
                INSERT INTO ZCHAPTER VALUES (2, 6, 1, 1, 1024, 'Book One');
                INSERT INTO ZCHAPTER VALUES (3, 6, 1, 1, 2048, 'Book Two');
                INSERT INTO Z_3TAGS VALUES (1, 1, 1024);
                INSERT INTO Z_3TAGS VALUES (1, 2, 2048);
                INSERT INTO Z_3TAGS VALUES (2, 2, 1024);
                """)
            let uuid = UUID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!
            let fileReference = Data([2]) + Data(externalName.utf8) + Data([0])
            try db.execute(
                sql: "INSERT INTO ZSAMPLE VALUES (1, 7, 1, 1, -32768, 2147483647, 9223372036854775807, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    123_456.789, "12345.678", 0.1 + 0.2, 1.5, "Straße 拿破仑", "https://example.com/a?b=c", Data([0, 1, 255]),
                    fileReference, Data([1, 7, 8, 9]), Data("bplist00 archived".utf8), withUnsafeBytes(of: uuid.uuid) { Data($0) },
                ])
        }
        try queue.close()
        let folder = CoreDataStoreFile.externalDataFolder(of: url)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try externalBytes.write(to: folder.appendingPathComponent(externalName))
    }

    /// Core Data's own tables: the entities' numbers, parents and last keys, and the metadata's property list.
    static func writeCoreDataTables(_ db: Database, entities: [(Int, String, Int, Int)], metadata extra: [String: Any] = [:]) throws {
        try db.execute(sql: """
            CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
            CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
            CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
            """)
        for (ent, name, parent, max) in entities {
            try db.execute(sql: "INSERT INTO Z_PRIMARYKEY VALUES (?, ?, ?, ?)", arguments: [ent, name, parent, max])
        }
        var plist: [String: Any] = ["NSStoreType": "SQLite", "NSStoreUUID": storeUUID, "NSPersistenceFrameworkVersion": 1414]
        plist.merge(extra) { _, new in new }
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        try db.execute(sql: "INSERT INTO Z_METADATA VALUES (1, ?, ?)", arguments: [storeUUID, data])
    }

    static func model() throws -> Model { try Model(entities: entities) }
}

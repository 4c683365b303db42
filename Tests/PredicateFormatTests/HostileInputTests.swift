import Foundation
import GRDB
import Testing
@testable import PredicateFormat

/// A schema whose table and column names are themselves hostile, to prove identifiers are quoted, never spliced.
struct HostileSchema: SQLSchema {
    static let table = #"we"ird; DROP TABLE x; --"#
    static let column = #"na"me' OR 1=1 --"#

    func table(forEntity entity: String) throws(FormatPredicateError) -> SQLTable { SQLTable(name: Self.table) }

    func property(_ key: String, ofEntity entity: String) throws(FormatPredicateError) -> SQLProperty {
        guard key == Self.column else { throw .evaluation("\(entity) has no key '\(key)'") }
        return .attribute(column: Self.column, kind: .text)
    }
}

@Suite struct HostileInputTests {
    /// (No NUL character: GRDB reads SQLite text up to the first NUL, so such strings cannot round-trip at all.)
    static let hostileValues = [
        "'", "\"", "';", "\"; DROP TABLE Person; --", "' OR '1'='1", "/* comment */", "*/ SELECT 1; /*", "--", "; DELETE FROM Person",
        "%@", "%K", "$x", "\\", "\\'", "Robert'); DROP TABLE Students;--", "?1", "?", ":name", "@x", "NULL", "' UNION SELECT * FROM Team --",
    ]

    @Test func hostileValuesMatchLiterallyAndOnlyTheIntendedSelectRuns() throws {
        var library = Library(seed: 1)
        for (index, value) in Self.hostileValues.enumerated() { library.people[index].name = value }
        let (queue, url) = try openLibrary(library)
        defer { try? FileManager.default.removeItem(at: url) }
        try queue.write { db in
            var statements: [String] = []
            db.trace(options: .statement) { event in statements.append("\(event)") }
            for (index, value) in Self.hostileValues.enumerated() {
                for format in ["name == %@", "name BEGINSWITH %@", "name ENDSWITH[cd] %@", "name LIKE %@", "name IN %@", "name CONTAINS %@"] {
                    let argument: Any = format.contains("IN %@") ? [value] : value
                    let predicate = try FormatPredicate(format, argument)
                    let expected = try evaluatorMatches(predicate, in: library)
                    let actual = try sqlMatches(predicate, in: db)
                    #expect(actual == expected, "\(predicate)")
                    if format == "name == %@" { #expect(actual.contains(Int64(index + 1)), "\(value)") }
                }
                // The same value printed into a format string and parsed back means the same thing.
                let printed = try FormatPredicate("name == %@", value).description
                #expect(try FormatPredicate(printed) == FormatPredicate("name == %@", value), "\(printed)")
            }
            #expect(!statements.isEmpty)
            for statement in statements {
                #expect(statement.hasPrefix("SELECT t0.id FROM Person AS t0"), "an unexpected statement ran: \(statement)")
            }
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Person") == library.people.count)
            #expect(try db.tableExists("Team"))
        }
    }

    @Test func hostileKeysAreRefusedOrQuoted() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: url) }
        var configuration = Configuration()
        configuration.prepareDatabase { db in PredicateSQLFunctions.register(in: db) }
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE \(sqlQuoted(HostileSchema.table)) (id INTEGER PRIMARY KEY, \(sqlQuoted(HostileSchema.column)) TEXT)")
            try db.execute(sql: "INSERT INTO \(sqlQuoted(HostileSchema.table)) VALUES (1, 'a'), (2, 'b')")
        }
        let compiler = SQLCompiler(schema: HostileSchema())
        // A key that names the quoted column works and selects exactly one row.
        let predicate = try FormatPredicate("%K == %@", HostileSchema.column, "b")
        let compiled = try compiler.compile(predicate, entity: "Thing")
        let ids = try queue.read { db in
            try Int64.fetchAll(db, sql: "SELECT t0.id FROM \(sqlQuoted(HostileSchema.table)) AS t0 WHERE \(compiled.condition)",
                               arguments: StatementArguments(compiled.arguments))
        }
        #expect(ids == [2])
        // Keys that are SQL are unknown keys: a clear error, no SQL at all.
        for key in ["id; DROP TABLE x", "1=1 --", "name) OR (1=1", "*"] {
            do {
                _ = try compiler.compile(try FormatPredicate("%K == 1", key), entity: "Thing")
                Issue.record("\(key) compiled")
            } catch {
                #expect(error.description.contains("Thing has no key '\(key)'"), "\(error)")
            }
        }
    }
}

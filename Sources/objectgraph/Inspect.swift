import ArgumentParser
import Foundation
import GRDB

/// Describes a store file from its own metadata, without the app's code.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a store's model hash, entities and row counts.")

    @Argument(help: "The store file.") var path: String

    func run() throws {
        guard FileManager.default.fileExists(atPath: path) else { throw ValidationError("no file at \(path)") }
        let queue = try DatabaseQueue(path: path, configuration: { var c = Configuration(); c.readonly = true; return c }())
        try queue.read { db in
            guard try db.tableExists("objectgraph_metadata") else { throw ValidationError("\(path) is not an ObjectGraph store") }
            let hash = try String.fetchOne(db, sql: "SELECT value FROM objectgraph_metadata WHERE key = 'model_hash'") ?? "?"
            print("model hash: \(hash)")
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'objectgraph_%' ORDER BY name")
            for table in tables {
                let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \"\(table.replacingOccurrences(of: "\"", with: "\"\""))\"") ?? 0
                print("  \(table): \(rows) rows")
            }
        }
    }
}

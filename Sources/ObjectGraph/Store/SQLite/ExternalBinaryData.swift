import Foundation
import Synchronization

/// The files in which an SQLite store keeps large values of attributes that allow external storage
/// (``AttributeDescription/allowsExternalBinaryDataStorage``), as Core Data's external storage does.
///
/// A value of ``threshold`` bytes or more is written to `<store file>-external/<UUID>` and its row holds the file's
/// name (as text, where a value in the row is a blob, so the two never meet). The folder belongs to the store: copy
/// or back it up with the store file, as the `-wal` beside it.
///
/// ```swift
/// // store.sqlite, store.sqlite-wal, store.sqlite-shm and the folder store.sqlite-external/
/// ```
///
/// A file is complete and on disk before the transaction naming it commits (written aside, synced, renamed, and the
/// folder synced), so a crash leaves at worst a file no row names. Such files, and the files of values a save
/// replaced or deleted, are removed later: a replaced file after a grace period (a reader that read the old row a
/// moment before may still open it), and any file no row names and older than an hour when the store is opened
/// (another process may be about to commit one it just wrote).
public final class ExternalBinaryData: Sendable {
    /// The size from which a value goes to a file: smaller values stay in their row, where SQLite reads them faster
    /// than a file.
    public static let threshold = 128 * 1024
    /// How long a replaced value's file stays for readers of the row as it was, in seconds (tests shorten it).
    let gracePeriod = Atomic<Int>(60)
    /// How old a file no row names must be before opening the store removes it.
    static let strayAge: TimeInterval = 3_600

    /// The folder: `<store file>-external`, made when the first value goes there.
    let folder: URL
    /// The store file's path, for errors.
    let storePath: String
    /// Files of values replaced or deleted by committed saves, with when they were let go.
    private let released = Mutex<[(name: String, at: ContinuousClock.Instant)]>([])

    init(storeURL: URL) {
        folder = URL(fileURLWithPath: storeURL.path + "-external")
        storePath = storeURL.path
    }

    /// Whether `name` is a file name this store writes (a UUID), so that a damaged or hostile row cannot name a
    /// path elsewhere.
    static func isFileName(_ name: String) -> Bool { UUID(uuidString: name) != nil }

    /// Writes `data` to a new file and returns its name, once the file and its folder entry are on disk.
    func write(_ data: Data) throws -> String {
        let name = UUID().uuidString
        let fileManager = FileManager.default
        do {
            if !fileManager.fileExists(atPath: folder.path) {
                try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
                try Self.sync(URL(fileURLWithPath: storePath).deletingLastPathComponent())
            }
            let aside = folder.appendingPathComponent(".\(name).writing")
            try data.write(to: aside)
            try Self.sync(aside)
            try fileManager.moveItem(at: aside, to: folder.appendingPathComponent(name))
            try Self.sync(folder)
        } catch {
            throw ObjectGraphError.storeWriteFailed(
                path: storePath, reason: "could not write a value of \(data.count) bytes to \(folder.path)/\(name): \(error.localizedDescription)")
        }
        return name
    }

    /// The value kept in the file `name`.
    func read(_ name: String) throws -> Data {
        guard Self.isFileName(name) else {
            throw ObjectGraphError.storeReadFailed(path: storePath, reason: "a row names '\(name)' as its value's file, which is no file this store writes")
        }
        let file = folder.appendingPathComponent(name)
        do {
            return try Data(contentsOf: file)
        } catch {
            throw ObjectGraphError.storeReadFailed(
                path: storePath, reason: "the value kept in \(file.path) could not be read (the folder \(folder.lastPathComponent) belongs to the store: copy it with the store file): \(error.localizedDescription)")
        }
    }

    /// Removes files written by a transaction that did not commit.
    func discard(_ names: [String]) {
        for name in names { try? FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
    }

    /// Takes note of files a committed save let go of (none, for most saves), and removes those let go of more than
    /// the grace period ago.
    func release(_ names: [String]) {
        let now = ContinuousClock.now
        let grace = Duration.seconds(gracePeriod.load(ordering: .relaxed))
        let due = released.withLock { released -> [String] in
            if names.isEmpty && released.isEmpty { return [] }
            released += names.map { ($0, now) }
            let due = released.filter { now - $0.at >= grace }.map(\.name)
            released.removeAll { now - $0.at >= grace }
            return due
        }
        discard(due)
    }

    /// Removes every file let go of, whatever its age: the store is closing.
    func releaseAll() {
        discard(released.withLock { released in
            defer { released.removeAll() }
            return released.map(\.name)
        })
    }

    /// Removes the files no row names (`named`) that are older than ``strayAge``, and what a crash left half
    /// written.
    func removeStrays(named: Set<String>) {
        let fileManager = FileManager.default
        guard let names = try? fileManager.contentsOfDirectory(atPath: folder.path) else { return }
        let cutoff = Date().addingTimeInterval(-Self.strayAge)
        for name in names where !named.contains(name) {
            let file = folder.appendingPathComponent(name)
            guard Self.isFileName(name) || name.hasSuffix(".writing"),
                  let modified = (try? fileManager.attributesOfItem(atPath: file.path))?[.modificationDate] as? Date,
                  modified < cutoff else { continue }
            try? fileManager.removeItem(at: file)
        }
    }

    /// Flushes a file or folder to disk (`fsync`): a rename is durable once its folder is. Only the value files and
    /// their folders, never the database or its `-wal`/`-shm`: closing a descriptor of those would drop the process's
    /// SQLite locks on the store.
    private static func sync(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
    }
}

/// The files one save wrote and let go of: those it wrote are removed if it does not commit, those it let go of
/// once it has (``ExternalBinaryData/release(_:)``). Used on the writing connection's queue only.
final class ExternalFileChanges {
    var written: [String] = []
    var released: [String] = []
}

extension SQLiteStore {
    /// Removes the files of the external folder that no row names (see ``ExternalBinaryData/removeStrays(named:)``):
    /// every text value of a Binary or Transformable column is a file's name, whatever the model says of external
    /// storage now (turning it off leaves the values where they are).
    func removeStrayExternalFiles() throws {
        guard FileManager.default.fileExists(atPath: externalData.folder.path) else { return }
        var columns: Set<[String]> = []
        for entity in model.entities {
            for index in entity.attributes.indices where entity.attributes[index].type.isData && !entity.attributes[index].isTransient {
                columns.insert([entity.tableName, entity.attributeColumns[index]])
            }
        }
        let named = try writer.read { db in
            var named: Set<String> = []
            for pair in columns {
                let column = sqlQuoted(pair[1])
                named.formUnion(try String.fetchAll(db, sql: "SELECT \(column) FROM \(sqlQuoted(pair[0])) WHERE typeof(\(column)) = 'text'"))
            }
            return named
        }
        externalData.removeStrays(named: named)
    }
}

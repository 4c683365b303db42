import Foundation
import GRDB

/// Store files and the app's metadata, as Core Data's coordinator handles them: destroying and replacing a store
/// file safely, copying a store's objects into another store (another file, PostgreSQL, memory), and values the app
/// keeps in the store itself.
extension PersistentStoreCoordinator {
    /// The app's own values kept in the store (Core Data's `metadata(for:)`, the keys the app set): they live and
    /// move with the store, migrations included.
    public func metadata() throws -> [String: String] { try store.metadata() }

    /// Replaces the app's own values kept in the store, in one transaction (Core Data's `setMetadata(_:for:)`).
    ///
    /// ```swift
    /// try coordinator.setMetadata(["lastImport": ISO8601DateFormatter().string(from: .now)])
    /// ```
    public func setMetadata(_ metadata: [String: String]) throws { try store.setMetadata(metadata) }

    /// Deletes the SQLite store at `url` and everything beside it that belongs to it (`-wal`, `-shm`, `-journal`,
    /// the `-external` folder), as Core Data's `destroyPersistentStore(at:type:options:)`. A missing store is not an
    /// error.
    ///
    /// - Throws: ``ObjectGraphError/storeUnavailable(path:reason:)`` when a store of this process has the file open
    ///   (release its coordinators first; other processes must close it too).
    public static func destroyPersistentStore(at url: URL) throws {
        let path = url.standardizedFileURL.path
        try refuseIfOpen(path, doing: "destroy")
        for suffix in ["", "-wal", "-shm", "-journal", "-external"] {
            let file = path + suffix
            guard FileManager.default.fileExists(atPath: file) else { continue }
            do {
                try FileManager.default.removeItem(atPath: file)
            } catch {
                throw ObjectGraphError.storeUnavailable(path: file, reason: "it could not be removed: \(error.localizedDescription)")
            }
        }
    }

    /// Replaces the SQLite store at `destination` with a copy of the one at `source` (Core Data's
    /// `replacePersistentStore(at:withPersistentStoreFrom:)`): SQLite's backup copies one consistent state of the
    /// source even while it is in use, and the source's `-external` folder comes along.
    ///
    /// - Throws: ``ObjectGraphError/storeUnavailable(path:reason:)`` when `source` is not a store or cannot be read,
    ///   or a store of this process has `destination` open.
    public static func replacePersistentStore(at destination: URL, withPersistentStoreFrom source: URL) throws {
        let from = source.standardizedFileURL.path, to = destination.standardizedFileURL.path
        guard from != to else { return }
        guard FileManager.default.fileExists(atPath: from) else {
            throw ObjectGraphError.storeUnavailable(path: from, reason: "there is no store file to copy")
        }
        try refuseIfOpen(to, doing: "replace")
        try destroyPersistentStore(at: destination)
        do {
            var reading = Configuration()
            reading.readonly = true
            let sourceQueue = try DatabaseQueue(path: from, configuration: reading)
            let destinationQueue = try DatabaseQueue(path: to)
            try sourceQueue.backup(to: destinationQueue)
            try destinationQueue.close()
            try sourceQueue.close()
        } catch {
            try? destroyPersistentStore(at: destination)
            throw ObjectGraphError.storeUnavailable(path: from, reason: "it could not be copied to \(to): \(error)")
        }
        let external = from + "-external"
        if FileManager.default.fileExists(atPath: external) {
            do {
                try FileManager.default.copyItem(atPath: external, toPath: to + "-external")
            } catch {
                try? destroyPersistentStore(at: destination)
                throw ObjectGraphError.storeUnavailable(path: external, reason: "its externally stored values could not be copied: \(error.localizedDescription)")
            }
        }
    }

    private static func refuseIfOpen(_ path: String, doing action: String) throws {
        guard !StoreFileRegistry.isHeld(StoreFileRegistry.canonicalPath(path)) else {
            throw ObjectGraphError.storeUnavailable(
                path: path, reason: "a coordinator of this process has it open: release every coordinator on it before you \(action) it")
        }
    }
}

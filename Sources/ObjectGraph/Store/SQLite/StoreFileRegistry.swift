import Foundation
import PredicateFormat
import Synchronization

/// What the stores of one process share about each store file they have open, and the rule that keeps a process's
/// SQLite locks alive.
///
/// SQLite's locks on a file are POSIX advisory locks, which belong to the process, and closing *any* descriptor of
/// the file drops all of them (SQLite's "How To Corrupt An SQLite Database File", section 2.2). SQLite's own
/// connections share their descriptors per file and defer closes while a lock is held, so any number of them in one
/// process are safe; a descriptor opened outside that bookkeeping is not. Another process that no longer sees this
/// process's locks takes itself for the file's last user, checkpoints and deletes the `-wal` this process is still
/// committing into: every save acknowledged after that is lost.
///
/// So nothing here opens a store file except through SQLite's locking connections, with one exception: an immutable
/// read-only connection (no locks, and no `-wal` or `-shm` made beside a file nobody uses), which a
/// ``ReadOnlyConnection`` takes when no store of this process has the file open. Such a connection is closed through
/// ``close(_:path:)``, which keeps it open while a store of this process holds the file, and closes it when the last
/// one lets go (``SQLiteStore`` holds a ``Lease`` from before its first connection opens until after its last closes).
///
/// The stores of one process on one file also share their in-memory key reservations (see
/// ``SQLiteStore/reservePrimaryKeys(rootEntity:count:)``): two coordinators on one file would otherwise reserve the
/// same keys, and the second save would fail as if another process had taken them.
enum StoreFileRegistry {
    /// One store's hold on a file: its path, and the state shared with every other store of the process on it.
    final class Lease: Sendable {
        let path: String
        /// Per root entity, the highest key a published save reserved in memory and has not written yet: one table
        /// for every store of the process on the file.
        let reservations: Reservations
        /// Whether the lease holds the file (see ``StoreFileRegistry/detachedLease(_:)``).
        let holdsFile: Bool
        private let released = Atomic<Bool>(false)

        fileprivate init(path: String, reservations: Reservations, holdsFile: Bool) {
            self.path = path
            self.reservations = reservations
            self.holdsFile = holdsFile
        }

        /// Lets go of the file: to be called once every connection of the store is closed. A lease that was never
        /// released (a store that failed to open) lets go when it is freed.
        func release() {
            guard holdsFile, !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
            StoreFileRegistry.release(path)
        }

        deinit { release() }
    }

    /// A connection whose close is deferred: it is freed, and its descriptor closed, when the registry drops it.
    typealias Deferred = AnyObject & Sendable

    /// Keys reserved in memory, by root entity (see ``SQLiteStore/reservePrimaryKeys(rootEntity:count:)``).
    final class Reservations: Sendable {
        let keys = Protected<[String: Int64]>([:])
    }

    private struct Entry {
        var leases = 0
        let reservations = Reservations()
        var deferred: [any Deferred] = []
    }

    // A pthread mutex (`Protected`), which ThreadSanitizer sees, unlike `Synchronization.Mutex` on Linux.
    private static let entries = Protected<[String: Entry]>([:])

    /// The path every store and check of a file uses for it: symbolic links resolved, so that two names of one file
    /// meet in one entry (SQLite resolves them too, and keeps the `-wal` beside the file they name).
    static func canonicalPath(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    /// Takes a hold on the file at `path` (canonical), before the store opens any connection on it.
    static func lease(_ path: String) -> Lease {
        entries.withLock { entries in
            var entry = entries[path] ?? Entry()
            entry.leases += 1
            entries[path] = entry
            return Lease(path: path, reservations: entry.reservations, holdsFile: true)
        }
    }

    /// A lease that does not hold the file, for a store whose connections take no locks (an immutable read-only
    /// one): holding it would keep other read-only connections from opening the file as immutable.
    static func detachedLease(_ path: String) -> Lease {
        Lease(path: path, reservations: Reservations(), holdsFile: false)
    }

    private static func release(_ path: String) {
        // Freed outside the lock: a deferred connection's close may take SQLite's own mutex.
        let closing: [any Deferred] = entries.withLock { entries in
            guard var entry = entries[path] else { return [] }
            entry.leases -= 1
            if entry.leases > 0 {
                entries[path] = entry
                return []
            }
            entries[path] = nil
            return entry.deferred
        }
        withExtendedLifetime(closing) {}
    }

    /// Whether a store of this process holds the file at `path` (canonical) now.
    static func isHeld(_ path: String) -> Bool {
        entries.withLock { $0[path].map { $0.leases > 0 } ?? false }
    }

    /// Whether a read-only connection may open the file at `path` (canonical) as immutable: no connection of any
    /// process uses it in WAL mode (each keeps a `-wal` and a `-shm` beside it), and no store of this one holds it.
    static func mayOpenImmutable(_ path: String) -> Bool {
        !hasFileBeside(path, ["-wal", "-shm"]) && !isHeld(path)
    }

    /// Whether one of the files SQLite keeps beside a database while a connection uses it (its `-wal` and `-shm`,
    /// its `-journal` mid-write), named `path` plus one of `suffixes`, is there.
    static func hasFileBeside(_ path: String, _ suffixes: [String]) -> Bool {
        suffixes.contains { FileManager.default.fileExists(atPath: path + $0) }
    }

    /// The URI SQLite opens `path` by read-only, as an immutable file when `immutable`.
    static func readOnlyURI(_ path: String, immutable: Bool) -> String {
        var components = URLComponents()
        components.scheme = "file"
        components.path = path
        components.queryItems = [URLQueryItem(name: "mode", value: "ro")] + (immutable ? [URLQueryItem(name: "immutable", value: "1")] : [])
        return components.string ?? path
    }

    /// Closes `connection` (by freeing it) now when no store of this process holds `path`, else when the last
    /// one lets go.
    static func close(_ connection: any Deferred, path: String) {
        entries.withLock { entries in
            guard var entry = entries[path], entry.leases > 0 else { return }
            entry.deferred.append(connection)
            entries[path] = entry
        }
    }
}

#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// Which file a path names: its device and inode. A store compares the identity it opened with the path's identity
/// now before each write commits, so a store file deleted or replaced under an open coordinator fails the save
/// instead of writing into an unlinked file that no later process will ever read.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the file at `path` now, or nil when nothing is there.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// How many names (hard links) the regular file at `path` has, or nil when no regular file is there.
    static func linkCount(path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(info.st_nlink)
    }
}

/// The files an open store writes through (the database, its `-wal` and `-shm`) and the process that opened them,
/// checked before each write commits (SQLite's "How To Corrupt An SQLite Database File", sections 1.3, 2.4, 2.5 and 2.6).
///
/// A commit goes into the descriptors the store opened: into an unlinked file once the path names another file or
/// none, where no later process reads it; beside a `-wal` or `-shm` another process made afresh, which splits the
/// log in two; or, from a forked process, without the locks, which belong to the process that opened the store.
/// Each is refused with the reason, before anything commits.
struct StoreFiles: Sendable {
    let path: String
    let database: FileIdentity?
    let log: FileIdentity?
    let sharedMemory: FileIdentity?
    let process: Int32

    /// The files at `path` now, as the store that has just opened them finds them.
    init(path: String) {
        self.path = path
        database = FileIdentity(path: path)
        log = FileIdentity(path: path + "-wal")
        sharedMemory = FileIdentity(path: path + "-shm")
        process = getpid()
    }

    /// Why this process may not write through the store's connections, or nil when it may: checked before a write
    /// starts, since a forked process has none of the threads the connections' queues ran on.
    func processProblem() -> String? {
        guard getpid() != process else { return nil }
        return "the store was opened by process \(process), and this process (\(getpid())) is a fork of it, without its locks; open the store again in this process"
    }

    /// Why the store file at `path` may not be opened or written, when it has another name (a hard link), else nil:
    /// SQLite keeps a store's `-wal` and `-shm` beside the name it was opened by, so two processes opening one file
    /// by two names would each write a log of its own into one database, and corrupt it (section 2.5).
    static func secondNameProblem(_ path: String) -> String? {
        guard let links = FileIdentity.linkCount(path: path), links > 1 else { return nil }
        return "the store file has \(links) names (a second name is a hard link), and SQLite keeps its log beside each name apart, which can corrupt it; remove the other names, or open a copy of the file"
    }

    /// Why a commit now would not reach the file the store opened, or nil when it would.
    func problem() -> String? {
        if let problem = processProblem() { return problem }
        if database != nil, FileIdentity(path: path) != database {
            return "the store file was deleted or replaced since the store opened it; open the store again"
        }
        if let problem = Self.secondNameProblem(path) { return problem }
        for (suffix, opened) in [("-wal", log), ("-shm", sharedMemory)] where opened != nil && FileIdentity(path: path + suffix) != opened {
            return "the store's \(suffix) file was deleted or replaced while the store had it open, so other processes no longer see this store's log; nothing more is written: close the store (which writes its log into the file) and open it again"
        }
        return nil
    }
}

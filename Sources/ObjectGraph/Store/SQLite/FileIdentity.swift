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

/// Where an ``AtomicStore`` keeps its objects, in a format of the app's choosing: Core Data's `NSAtomicStore`, whose
/// subclass loads the whole store and writes it whole. The store does everything else (fetching, relationships,
/// conflicts, uniqueness, merge policies, batch requests); a file only turns ``AtomicStoreContents`` into bytes and
/// back, all or nothing.
///
/// ```swift
/// struct JSONStoreFile: AtomicStoreFile {
///     let url: URL
///     var location: String { url.path }
///
///     func read() throws -> AtomicStoreContents? {
///         guard FileManager.default.fileExists(atPath: url.path) else { return nil }
///         return try JSONDecoder().decode(AtomicStoreContents.self, from: Data(contentsOf: url))
///     }
///
///     func write(_ contents: AtomicStoreContents) throws {
///         try JSONEncoder().encode(contents).write(to: url, options: .atomic)
///     }
/// }
/// ```
public protocol AtomicStoreFile: Sendable {
    /// Where the file is (a path, a URL, a key), named in errors.
    var location: String { get }
    /// The contents last written, or nil when there are none yet (the store is new). Called once, when the store
    /// opens.
    func read() throws -> AtomicStoreContents?
    /// Replaces the whole contents. It must be all or nothing (write a copy, then move it into place): if it throws,
    /// the save that asked for it fails and the store keeps the contents it had; if the process dies during it, the
    /// next ``read()`` must return the old contents or the new ones. Calls never overlap.
    func write(_ contents: AtomicStoreContents) throws
    /// Whether the store is opened read-only: every change is then refused before ``write(_:)`` is asked, and the
    /// file must already hold contents. False unless the file says otherwise.
    var isReadOnly: Bool { get }
}

extension AtomicStoreFile {
    public var isReadOnly: Bool { false }
}

import Foundation
import ObjectGraph

/// An app's own store format, written as a user of the library writes one (scripts/outside-check.sh type-checks
/// this target as code outside the package, so it uses the public API only).
///
/// The whole store as one JSON document, replaced atomically at every save.
public struct JSONStoreFile: AtomicStoreFile {
    /// The JSON file.
    public let url: URL

    public init(url: URL) { self.url = url }

    public var location: String { url.path }

    public func read() throws -> AtomicStoreContents? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(AtomicStoreContents.self, from: Data(contentsOf: url))
    }

    public func write(_ contents: AtomicStoreContents) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(contents).write(to: url, options: .atomic)
    }
}

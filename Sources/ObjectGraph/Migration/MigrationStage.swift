/// Code that runs around one step of a migration, to fix data the inferred plan cannot: `willMigrate` with a
/// context on the old version (remove duplicates before a uniqueness constraint), `didMigrate` with one on the new
/// version (fill a new attribute from others). Each closure's changes are saved when it returns.
///
/// A change no rule infers (String to Integer 64, say) goes through an intermediate version: add the new attribute
/// beside the old one, fill it in `didMigrate`, then remove the old one (renaming the new one) in the next version.
///
/// ```swift
/// let versions = try SchemaVersions([v1, v2], stages: [
///     MigrationStage(from: 0, willMigrate: { ctx in
///         var seen: Set<String> = []
///         for book in try ctx.fetch(FetchRequest(entityName: "Book")) where !seen.insert("\(try book.value(forKey: "isbn"))").inserted {
///             try ctx.delete(book)
///         }
///     }),
/// ])
/// ```
public struct MigrationStage: Sendable {
    /// The step it belongs to: from version `from` (an index into ``SchemaVersions/models``) to the next.
    public var from: Int
    /// Runs on a context of version `from` before the step; its changes are saved.
    public var willMigrate: (@Sendable (isolated ObjectContext) throws -> Void)?
    /// Runs on a context of version `from + 1` after the step; its changes are saved.
    public var didMigrate: (@Sendable (isolated ObjectContext) throws -> Void)?

    /// Creates a stage for the step from version `from` to the next.
    public init(
        from: Int, willMigrate: (@Sendable (isolated ObjectContext) throws -> Void)? = nil,
        didMigrate: (@Sendable (isolated ObjectContext) throws -> Void)? = nil
    ) {
        self.from = from
        self.willMigrate = willMigrate
        self.didMigrate = didMigrate
    }
}

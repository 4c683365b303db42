import Foundation
import PredicateFormat

/// One key of an order: a key path (across to-one relationships), a direction and a way to compare strings.
///
/// ```swift
/// SortKey("author.name")                                // ascending
/// SortKey("-pages")                               // descending, the seeds' shorthand
/// SortKey("title", comparison: .caseInsensitive)
/// ```
public struct SortKey: Sendable, Hashable {
    /// How strings compare.
    public enum Comparison: Sendable, Hashable {
        /// By Unicode code points (UTF-8 bytes), as SQLite's binary collation.
        case standard
        /// Case folded for all of Unicode first.
        case caseInsensitive
        /// Case and diacritics folded first (the closest portable analogue of `localizedStandardCompare:`).
        case localized
    }

    /// The key path, one name per relationship step.
    public var keyPath: [String]
    /// Whether smaller values come first.
    public var ascending: Bool
    /// How strings compare.
    public var comparison: Comparison

    /// Creates a sort descriptor; a leading `-` means descending (`"-pages"`), as in the seeds' order keys.
    public init(_ key: String, ascending: Bool = true, comparison: Comparison = .standard) {
        var key = key
        var ascending = ascending
        if key.hasPrefix("-") {
            key.removeFirst()
            ascending = false
        }
        self.keyPath = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        self.ascending = ascending
        self.comparison = comparison
    }

    /// A sort by a macro entity's property, named by key path as SwiftData's `SortDescriptor(\Book.title)`.
    ///
    /// ```swift
    /// request.sortKeys = [try SortKey(\Book.title), try SortKey(\Book.pages, ascending: false)]
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/invalidFetch(entity:reason:)`` for a key path that is not a persisted property
    ///   of the class (a computed property, a path through another object).
    public init<Root: ManagedEntity, Value>(_ keyPath: KeyPath<Root, Value>, ascending: Bool = true, comparison: Comparison = .standard) throws {
        guard let name = Root._keyPathNames[keyPath] else {
            throw ObjectGraphError.invalidFetch(
                entity: Root.entityName, reason: "the sort key path \(keyPath) is not a persisted property of \(Root.entityName); name it by string for a path through a relationship")
        }
        self.init(name, ascending: ascending, comparison: comparison)
    }

    package var foldOptions: PredicateFormat.Comparison.Options {
        switch comparison {
        case .standard: []
        case .caseInsensitive: [.caseInsensitive]
        case .localized: [.caseInsensitive, .diacriticInsensitive]
        }
    }

    package var keyPathText: String { keyPath.joined(separator: ".") }
}

/// A fetch as a store sees it: which entities' rows, which of them, in which order, which slice.
public struct StoreFetchRequest: Sendable {
    /// The entity fetched.
    public var entityName: String
    /// Whether rows of sub-entities count.
    public var includesSubentities: Bool = true
    /// Which rows; nil for all.
    public var predicate: FormatPredicate?
    /// The order; ties are broken by primary key so results are stable.
    public var sortKeys: [SortKey] = []
    /// How many rows to skip.
    public var offset: Int = 0
    /// How many rows at most, or nil for all.
    public var limit: Int?

    /// Creates a request for every row of `entityName`.
    public init(entityName: String) { self.entityName = entityName }
}

/// Where rows live. Stores speak only Sendable values (IDs, snapshots, change sets), never objects, so a store can
/// be shared by every context on every queue.
public protocol PersistentStore: AnyObject, Sendable {
    /// A UUID chosen when the store was created; object URIs name it.
    var identifier: String { get }
    /// The store's file path, or a description of where it lives.
    var location: String { get }
    /// The rows for `ids` that exist, in no particular order.
    func snapshots(for ids: [ObjectID]) throws -> [Snapshot]
    /// The rows a request selects, in its order.
    func fetch(_ request: StoreFetchRequest) throws -> [Snapshot]
    /// The rows a request selects, in its order, each handed to `body` as soon as it is read: a large fetch then
    /// builds no array of rows on its way to becoming objects. `body` runs while the store reads, so it must not
    /// wait on anything that waits on the store.
    func fetch(_ request: StoreFetchRequest, each body: (Snapshot) throws -> Void) throws
    /// The IDs of the rows a request selects, in its order, without reading their values.
    func fetchIDs(_ request: StoreFetchRequest) throws -> [ObjectID]
    /// Rows of chosen properties and aggregates, grouped and filtered (dictionary results).
    func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: AttributeValue]]
    /// The destinations of one to-many relationship for many owners at once (prefetching): one list per ID of
    /// `ids`, in the same order (empty for an owner with none, or not stored). By position, not by ID: a table of
    /// 200,000 owners cost a prefetch more than reading its rows.
    func relatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]]
    /// The number of rows a request selects.
    func count(_ request: StoreFetchRequest) throws -> Int
    /// The destinations of a to-many relationship of the stored object `id`, in order when ordered.
    func relatedIDs(of id: ObjectID, relationship: ModelRelationship) throws -> [ObjectID]
    /// Reserves `count` primary keys for rows of the inheritance tree rooted at `rootEntity`, for good: no later
    /// allocation hands them out again (Core Data's `obtainPermanentIDs`).
    func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64]
    /// Reserves `count` primary keys for a save about to write them, without writing anything: a failed save must
    /// leave the store as it was. Keys reserved so are never handed out again in this process.
    func reservePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64]
    /// Writes a change set in one transaction: all of it, or (on any error) none of it.
    func save(_ changes: ChangeSet) throws -> SaveResult
    /// Writes a change set in one transaction, calling `beforeCommit` once all of it is written and checked, just
    /// before committing: if `beforeCommit` throws, nothing is committed. A coordinator with several stores writes
    /// the other stores' parts there, so that a conflict or a refusal in any store leaves every store untouched.
    func save(_ changes: ChangeSet, beforeCommit: () throws -> Void) throws -> SaveResult
    /// Runs a batch request in one transaction, recording it in history as `source`.
    func execute(_ request: BatchRequest, source: TransactionSource) throws -> BatchResult
    /// The transactions recorded after `token` (all that are kept, for nil), oldest first.
    func history(after token: PersistentHistoryToken?) throws -> [PersistentHistoryTransaction]
    /// The token of the last transaction recorded: where a reader starting now begins.
    func lastHistoryToken() throws -> PersistentHistoryToken
    /// Deletes the transactions recorded before `token`'s; returns how many went.
    func deleteHistory(before token: PersistentHistoryToken) throws -> Int
    /// The transactions `request` selects, oldest first.
    func history(_ request: HistoryRequest) throws -> [PersistentHistoryTransaction]
    /// Deletes the transactions recorded before `date` (by transaction order: through the newest one recorded
    /// before it); returns how many went.
    func deleteHistory(before date: Date) throws -> Int
    /// The app's own values kept in the store (Core Data's store metadata), beside the store's.
    func metadata() throws -> [String: String]
    /// Replaces the app's own values kept in the store, in one transaction; the store's own are never touched.
    func setMetadata(_ metadata: [String: String]) throws
}

extension PersistentStore {
    /// For a store that keeps its sequences in memory, reserving is allocating.
    public func reservePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] {
        try allocatePrimaryKeys(rootEntity: rootEntity, count: count)
    }

    /// A store that keeps no history says so.
    public func history(after token: PersistentHistoryToken?) throws -> [PersistentHistoryTransaction] {
        throw ObjectGraphError.historyNotRecorded(path: location)
    }

    /// A store that keeps no history says so.
    public func lastHistoryToken() throws -> PersistentHistoryToken { throw ObjectGraphError.historyNotRecorded(path: location) }

    /// A store that keeps no history says so.
    public func deleteHistory(before token: PersistentHistoryToken) throws -> Int { throw ObjectGraphError.historyNotRecorded(path: location) }

    /// A store that cannot hold its transaction open commits first: a later store's failure then leaves this one's
    /// part written, which a coordinator with several stores reports as ``ObjectGraphError/partialSave(committed:notCommitted:reason:)``.
    public func save(_ changes: ChangeSet, beforeCommit: () throws -> Void) throws -> SaveResult {
        let result = try save(changes)
        try beforeCommit()
        return result
    }

    /// Through the token of the first transaction recorded at or after `date`. A store without a deletion by date
    /// of its own keeps its newest transaction when every one is older than `date` (a token names what stays).
    public func deleteHistory(before date: Date) throws -> Int {
        let kept = try history(after: nil)
        guard let first = kept.first(where: { $0.timestamp >= date }) ?? kept.last else { return 0 }
        return try deleteHistory(before: first.token)
    }

    /// A store without metadata of its own has none.
    public func metadata() throws -> [String: String] { [:] }

    /// A store without metadata of its own refuses to keep any.
    public func setMetadata(_ metadata: [String: String]) throws {
        throw ObjectGraphError.storeWriteFailed(path: location, reason: "the store keeps no metadata of the app's; nothing was written")
    }

    /// A store without batch requests of its own refuses them.
    public func execute(_ request: BatchRequest, source: TransactionSource) throws -> BatchResult {
        throw ObjectGraphError.invalidBatchRequest(entity: request.entityName, reason: "the store at \(location) does not run batch requests")
    }

    /// Reads the whole result, then hands the rows over: for stores whose rows are in memory anyway.
    public func fetch(_ request: StoreFetchRequest, each body: (Snapshot) throws -> Void) throws {
        for row in try fetch(request) { try body(row) }
    }
}

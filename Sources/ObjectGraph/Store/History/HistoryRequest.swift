import Foundation

/// Which recorded transactions and changes to read (Core Data's `NSPersistentHistoryChangeRequest` with a fetch
/// request on the transactions or the changes): after a token or a moment, by authors and contexts, of some entities,
/// kinds of change, or changed keys. SQL stores select transactions, authors, contexts and entities in the store.
///
/// ```swift
/// var request = HistoryRequest(after: lastToken)
/// request.excludedAuthors = ["app"]            // what others did
/// request.entityNames = ["Book"]
/// let transactions = try coordinator.history(request)
/// ```
public struct HistoryRequest: Sendable, Hashable {
    /// Transactions after this one (all that are kept, for nil). A token older than the history kept throws, as
    /// ``PersistentStoreCoordinator/history(after:)-(PersistentHistoryToken?)`` does.
    public var after: PersistentHistoryToken?
    /// Transactions recorded after this moment.
    public var afterDate: Date?
    /// Only transactions of these authors (nil: any author).
    public var authors: Set<String>?
    /// Not the transactions of these authors (a process's own, typically).
    public var excludedAuthors: Set<String> = []
    /// Only transactions of contexts with these names (nil: any).
    public var contextNames: Set<String>?
    /// Only changes of these entities (nil: any); transactions left with no change are left out.
    public var entityNames: Set<String>?
    /// Only these kinds of change (nil: any); transactions left with no change are left out.
    public var changeTypes: Set<PersistentHistoryChange.ChangeType>?
    /// Only updates that changed one of these keys, beside every insert and deletion (nil: every update).
    public var changedKeys: Set<String>?
    /// At most this many transactions, the oldest first (nil: all).
    public var fetchLimit: Int?

    /// A request for every transaction after `token` (all that are kept, for nil).
    public init(after token: PersistentHistoryToken? = nil) { self.after = token }

    /// A request for every transaction recorded after `date`.
    public init(after date: Date) { self.afterDate = date }

    /// Whether the request filters the changes of each transaction.
    var filtersChanges: Bool { entityNames != nil || changeTypes != nil || changedKeys != nil }

    /// `transactions` (oldest first) as the request selects them.
    public func filter(_ transactions: [PersistentHistoryTransaction]) -> [PersistentHistoryTransaction] {
        var selected: [PersistentHistoryTransaction] = []
        for transaction in transactions {
            if let limit = fetchLimit, selected.count >= limit { break }
            if let after, transaction.token.transactionNumber <= after.transactionNumber { continue }
            if let afterDate, transaction.timestamp <= afterDate { continue }
            if let authors, !authors.contains(transaction.author ?? "") { continue }
            if let author = transaction.author, excludedAuthors.contains(author) { continue }
            if let contextNames, !contextNames.contains(transaction.contextName ?? "") { continue }
            guard filtersChanges else {
                selected.append(transaction)
                continue
            }
            let changes = transaction.changes.filter(selects)
            guard !changes.isEmpty else { continue }
            selected.append(transaction.with(changes: changes))
        }
        return selected
    }

    private func selects(_ change: PersistentHistoryChange) -> Bool {
        if let entityNames, !entityNames.contains(change.changedObjectID.entityName) { return false }
        if let changeTypes, !changeTypes.contains(change.changeType) { return false }
        if let changedKeys, change.changeType == .update, change.updatedProperties.isDisjoint(with: changedKeys) { return false }
        return true
    }
}

extension PersistentStore {
    /// The transactions `request` selects, read after its token and filtered here: for stores without a query
    /// of their own.
    public func history(_ request: HistoryRequest) throws -> [PersistentHistoryTransaction] {
        request.filter(try history(after: request.after))
    }
}

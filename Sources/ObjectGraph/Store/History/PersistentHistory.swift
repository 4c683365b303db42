import Foundation

/// Where a reader of a store's persistent history stopped: the number of the last transaction it read, in the store
/// it read it from. Codable, so a process can keep it (in a file, in user defaults) and ask for what came after it
/// when it starts again.
///
/// ```swift
/// let transactions = try coordinator.history(after: lastToken)
/// lastToken = transactions.last?.token ?? lastToken
/// try JSONEncoder().encode(lastToken).write(to: tokenURL)
/// ```
public struct PersistentHistoryToken: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The identifier of the store the transaction was recorded in.
    public let storeIdentifier: String
    /// The transaction's number: every store numbers its transactions from 1, and never reuses a number.
    public let transactionNumber: Int64

    /// A token for transaction `transactionNumber` of the store `storeIdentifier`.
    public init(storeIdentifier: String, transactionNumber: Int64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
    }

    /// Orders tokens of one store by transaction.
    public static func < (a: Self, b: Self) -> Bool {
        (a.storeIdentifier, a.transactionNumber) < (b.storeIdentifier, b.transactionNumber)
    }

    /// `<store identifier>#<transaction number>`, as errors name a token.
    public var description: String { "\(storeIdentifier)#\(transactionNumber)" }
}

/// One object's change in a recorded transaction.
public struct PersistentHistoryChange: Sendable, Hashable {
    /// What happened to the object.
    public enum ChangeType: String, Sendable, Hashable, Codable {
        /// The object was inserted.
        case insert
        /// Stored values of the object changed.
        case update
        /// The object was deleted.
        case delete
    }

    /// The object changed (always a permanent ID).
    public let changedObjectID: ObjectID
    /// What happened to it.
    public let changeType: ChangeType
    /// For an update, the attributes and relationships it changed; empty otherwise.
    public let updatedProperties: Set<String>
    /// For a deletion, the last values of the attributes the model marks
    /// ``AttributeDescription/preservesValueInHistoryOnDeletion``; empty otherwise.
    public let tombstone: [String: AttributeValue]

    /// A change as a store records it.
    public init(changedObjectID: ObjectID, changeType: ChangeType, updatedProperties: Set<String> = [], tombstone: [String: AttributeValue] = [:]) {
        self.changedObjectID = changedObjectID
        self.changeType = changeType
        self.updatedProperties = updatedProperties
        self.tombstone = tombstone
    }
}

/// One save or batch request as persistent history recorded it: who made it, when, and what it changed.
public struct PersistentHistoryTransaction: Sendable {
    /// Where this transaction is in the store's history: ask for what came after it with this token.
    public let token: PersistentHistoryToken
    /// When the store committed it.
    public let timestamp: Date
    /// The saving context's ``ObjectContext/transactionAuthor``, or the author a batch request named.
    public let author: String?
    /// The saving context's name; nil for a batch request run by the coordinator.
    public let contextName: String?
    /// What changed, in the order the store wrote it.
    public let changes: [PersistentHistoryChange]
    /// The coordinator that wrote it (an identifier made when the store was opened): a process skips its own
    /// transactions when it merges others', having merged its own as it saved them.
    let origin: String

    /// A transaction as a store recorded it (for stores written outside this package). `origin` names the store
    /// instance that wrote it, one value per opening of the store: a coordinator skips the transactions of its own
    /// store's origin when it merges other processes' changes, having merged its own as it saved them.
    ///
    /// ```swift
    /// PersistentHistoryTransaction(
    ///     token: PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: 7), timestamp: Date(),
    ///     author: "importer", contextName: nil, changes: changes, origin: openingID)
    /// ```
    public init(
        token: PersistentHistoryToken, timestamp: Date, author: String?, contextName: String?, changes: [PersistentHistoryChange], origin: String
    ) {
        (self.token, self.timestamp, self.author, self.contextName, self.changes, self.origin) = (token, timestamp, author, contextName, changes, origin)
    }

    /// The same transaction with only `changes` (a history request's selection).
    func with(changes: [PersistentHistoryChange]) -> PersistentHistoryTransaction {
        PersistentHistoryTransaction(token: token, timestamp: timestamp, author: author, contextName: contextName, changes: changes, origin: origin)
    }

    /// The IDs inserted, updated and deleted, each in the order of ``changes``.
    public var insertedObjectIDs: [ObjectID] { changes.filter { $0.changeType == .insert }.map(\.changedObjectID) }
    /// The IDs updated.
    public var updatedObjectIDs: [ObjectID] { changes.filter { $0.changeType == .update }.map(\.changedObjectID) }
    /// The IDs deleted.
    public var deletedObjectIDs: [ObjectID] { changes.filter { $0.changeType == .delete }.map(\.changedObjectID) }
}

/// Who made a transaction, as persistent history records it.
///
/// ```swift
/// let result = try coordinator.execute(request, source: TransactionSource(author: "importer"))
/// ```
public struct TransactionSource: Sendable, Hashable {
    /// The author: a context's ``ObjectContext/transactionAuthor``, or whatever names the app's part that wrote.
    public var author: String?
    /// The saving context's name.
    public var contextName: String?

    /// A source with an author and a context name, both optional.
    public init(author: String? = nil, contextName: String? = nil) {
        self.author = author
        self.contextName = contextName
    }
}

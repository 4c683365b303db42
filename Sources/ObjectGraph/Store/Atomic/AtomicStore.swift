import Foundation

/// A store kept whole in memory and written whole to a file of the app's own format at every save: Core Data's
/// atomic stores (`NSAtomicStore`), and the way to write a store outside this package. The app writes an
/// ``AtomicStoreFile`` (bytes in, bytes out); the store answers fetches, keeps relationships, detects conflicts,
/// checks uniqueness and runs batch requests exactly as the in-memory store does, so every context, merge policy and
/// helper works on it unchanged.
///
/// ```swift
/// let store = try AtomicStore(model: model, file: JSONStoreFile(url: documents.appendingPathComponent("Library.json")))
/// let coordinator = PersistentStoreCoordinator(model: model, store: store)
/// ```
///
/// Every change writes the whole file, so it suits stores of thousands of objects (a document, settings, a
/// fixture), not of millions; it keeps no persistent history (as Core Data records history only in SQLite stores)
/// and has no query generations. A store is opened with the model it was written with: the contents name that
/// model's version hash.
public final class AtomicStore: PersistentStore {
    /// Where the objects are kept.
    public let file: any AtomicStoreFile
    /// The rows, and every rule the store keeps.
    private let memory: InMemoryStore

    /// Opens the store `file` holds, or creates it (writing it at once, so that its identifier, which object URIs
    /// name, is kept from the start).
    ///
    /// - Throws: ``ObjectGraphError/modelMismatch(path:storeHash:modelHash:)`` when the contents were written with
    ///   another model; ``ObjectGraphError/storeReadFailed(path:reason:)`` when the file cannot be read or names
    ///   an entity, a property or an object that does not fit `model`; ``ObjectGraphError/storeWriteFailed(path:reason:)``
    ///   when a new file cannot be written.
    public init(model: Model, file: any AtomicStoreFile) throws {
        self.file = file
        let read: AtomicStoreContents?
        do {
            read = try file.read()
        } catch let error as ObjectGraphError {
            throw error
        } catch {
            throw ObjectGraphError.storeReadFailed(path: file.location, reason: "the file could not be read: \(error)")
        }
        if let read, read.modelVersionHash != model.versionHash {
            throw ObjectGraphError.modelMismatch(path: file.location, storeHash: read.modelVersionHash, modelHash: model.versionHash)
        }
        if read == nil && file.isReadOnly {
            throw ObjectGraphError.storeUnavailable(path: file.location, reason: "it is opened read-only and holds no store; nothing was created")
        }
        let identifier = read?.storeIdentifier ?? UUID().uuidString
        let rows = try read?.rows(model: model, location: file.location) ?? InMemoryStore.Contents()
        let write: @Sendable (InMemoryStore.Contents) throws -> Void = { state in
            guard !file.isReadOnly else {
                throw ObjectGraphError.storeWriteFailed(path: file.location, reason: "the store is opened read-only; nothing was written")
            }
            let contents = try AtomicStoreContents(state, identifier: identifier, model: model)
            do {
                try file.write(contents)
            } catch {
                throw ObjectGraphError.storeWriteFailed(path: file.location, reason: "the file could not be written (\(error)); the change was not kept")
            }
        }
        memory = InMemoryStore(model: model, identifier: identifier, contents: rows, recordsHistory: false, fileLocation: file.location, persist: write)
        if read == nil { try write(rows) }
    }

    public var identifier: String { memory.identifier }
    public var location: String { file.location }

    public func snapshots(for ids: [ObjectID]) throws -> [Snapshot] { try memory.snapshots(for: ids) }
    public func fetch(_ request: StoreFetchRequest) throws -> [Snapshot] { try memory.fetch(request) }
    public func fetchIDs(_ request: StoreFetchRequest) throws -> [ObjectID] { try memory.fetchIDs(request) }
    public func count(_ request: StoreFetchRequest) throws -> Int { try memory.count(request) }
    public func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: AttributeValue]] { try memory.fetchDictionaries(request) }

    public func relatedIDs(of id: ObjectID, relationship: ModelRelationship) throws -> [ObjectID] {
        try memory.relatedIDs(of: id, relationship: relationship)
    }

    public func relatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]] {
        try memory.relatedIDs(of: ids, relationship: relationship)
    }

    public func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] {
        try memory.allocatePrimaryKeys(rootEntity: rootEntity, count: count)
    }

    public func reservePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] {
        try memory.reservePrimaryKeys(rootEntity: rootEntity, count: count)
    }

    public func save(_ changes: ChangeSet) throws -> SaveResult { try memory.save(changes) }

    /// Writes the file after `beforeCommit`: a failed write after it leaves the other stores' parts committed, which
    /// a coordinator with several stores reports as ``ObjectGraphError/partialSave(committed:notCommitted:reason:)``.
    public func save(_ changes: ChangeSet, beforeCommit: () throws -> Void) throws -> SaveResult {
        try memory.save(changes, beforeCommit: beforeCommit)
    }

    public func execute(_ request: BatchRequest, source: TransactionSource) throws -> BatchResult {
        try memory.execute(request, source: source)
    }

    public func metadata() throws -> [String: String] { try memory.metadata() }
    public func setMetadata(_ metadata: [String: String]) throws { try memory.setMetadata(metadata) }
}

import Foundation
import PredicateFormat

/// A fetch request's results kept current, as Core Data's NSFetchedResultsController: sorted, optionally in
/// sections, and told as diffs each time the context processes changes (its own edits, a child's save, a merge, a
/// refresh, a reset or rollback). It lives on its context's queue, like the objects it holds.
///
/// ```swift
/// let controller = try main.fetchedResultsController(for: request, sectionNameKeyPath: "genre")
/// controller.onChange { change in
///     print(change.snapshot.count, change.objectChanges.count)
/// }
/// ```
///
/// The sort keys are required; the section key path, when given, must be the first sort key's (sections are runs
/// of the sorted results, as Core Data requires). A diff costs in proportion to the objects that changed, not to
/// the results: each changed object is taken out of its place and put back where its new values sort it.
public final class FetchedResultsController {
    /// The request whose results are kept.
    public let fetchRequest: FetchRequest
    /// The key path whose value names each object's section, or nil for one section.
    public let sectionNameKeyPath: String?
    weak var state: ContextState?
    /// The last error met while keeping the results (a changed object the predicate could not judge is left out;
    /// a change that could not be applied leaves the results as they were). Each is also logged at error level.
    public internal(set) var lastError: (any Error)?

    struct Member {
        let object: ManagedObject
        var id: ObjectID
        var values: [AttributeValue]
        /// The section's key, when sections are not the first sort key's runs (see ``Sectioning``).
        var section: AttributeValue = .null
    }

    /// How objects fall into sections.
    enum Sectioning {
        /// One section.
        case none
        /// Runs of the first sort key's values: kept current change by change.
        case firstSortKey
        /// Runs of another key path's values (the sort must group them, as Core Data requires).
        case keyPath([String])
        /// Runs of a name the app computes from each object (Core Data's transient "section identifier").
        case computed((ManagedObject) throws -> String)
    }

    let sectioning: Sectioning
    /// Whether the results are fetched again at each change rather than kept place by place: sections that are
    /// not the first sort key's runs (a change to one object can move a section boundary anywhere) and a limit or
    /// an offset (a change can bring in or push out an object the controller never held).
    let refetchesOnChange: Bool

    struct Bucket {
        var key: AttributeValue
        var name: String
        var members: ChunkedList<Member>
        var ids: ChunkedList<ObjectID>
    }

    var buckets: [Bucket] = []
    /// Where each member's record is, by the object's identity: its values when it was placed find it again.
    var members: [ObjectIdentifier: Member] = [:]
    /// Members by the ID they were placed with.
    var identities: [ObjectID: ObjectIdentifier] = [:]
    /// The members that may hold a temporary ID, which a save can rename: every member made for an object with one
    /// (see ``member(for:)``), until a save renames it or it leaves.
    var temporaryMembers: Set<ObjectIdentifier> = []
    private(set) var hasFetched = false
    let entityNames: Set<String>
    var lastSaveCount = 0
    private var callbacks: [(FetchedResultsChange) -> Void] = []
    private var continuations: [Int: AsyncStream<FetchedResultsChange>.Continuation] = [:]
    private var nextContinuation = 0

    init(request: FetchRequest, sectionNameKeyPath: String?, sectionName: ((ManagedObject) throws -> String)? = nil, state: ContextState) throws {
        guard !request.sortKeys.isEmpty else {
            throw ObjectGraphError.invalidFetch(entity: request.entityName, reason: "a fetched results controller needs sort keys, to keep its results in order")
        }
        let entity = try state.entity(named: request.entityName)
        for key in request.sortKeys where state.model.attribute(at: key.keyPath, from: entity) == nil {
            throw ObjectGraphError.invalidFetch(entity: request.entityName, reason: "the sort key '\(key.keyPathText)' names no attribute (across to-one relationships) of \(entity.name)")
        }
        if let sectionName {
            sectioning = .computed(sectionName)
        } else if let sectionNameKeyPath {
            let path = sectionNameKeyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard state.model.attribute(at: path, from: entity) != nil else {
                throw ObjectGraphError.invalidFetch(
                    entity: request.entityName, reason: "the section key path '\(sectionNameKeyPath)' names no attribute (across to-one relationships) of \(entity.name)")
            }
            sectioning = sectionNameKeyPath == request.sortKeys[0].keyPathText ? .firstSortKey : .keyPath(path)
        } else {
            sectioning = .none
        }
        switch sectioning {
        case .none, .firstSortKey: refetchesOnChange = request.fetchLimit != nil || request.fetchOffset != 0
        case .keyPath, .computed: refetchesOnChange = true
        }
        fetchRequest = request
        self.sectionNameKeyPath = sectionNameKeyPath
        self.state = state
        entityNames = Set(entity.names(includingSubentities: request.includesSubentities))
    }

    // MARK: Reading

    /// The current results, by ID (Sendable).
    public var snapshot: FetchedResultsSnapshot {
        FetchedResultsSnapshot(sections: buckets.map { FetchedResultsSnapshot.Section(name: $0.name, objectIDs: ObjectIDList(storage: $0.ids)) })
    }

    /// The current results' objects, section after section.
    public var fetchedObjects: [ManagedObject] { buckets.flatMap { $0.members.map(\.object) } }

    /// The objects of each section, with its name.
    public var sections: [(name: String, objects: [ManagedObject])] { buckets.map { ($0.name, $0.members.map(\.object)) } }

    /// The object at `[section, item]`.
    public func object(at indexPath: IndexPath) -> ManagedObject { buckets[indexPath[0]].members[indexPath[1]].object }

    /// Where `object` is in the results (`[section, item]`), or nil when it is not one of them.
    public func indexPath(forObject object: ManagedObject) -> IndexPath? {
        guard let member = members[ObjectIdentifier(object)] else { return nil }
        for (section, bucket) in buckets.enumerated() {
            if let item = bucket.ids.firstIndex(of: member.id) { return [section, item] }
        }
        return nil
    }

    /// The index title of a section named `name`: its first letter, capitalized (Core Data's default); nil for an
    /// empty name.
    public func sectionIndexTitle(forSectionName name: String) -> String? {
        name.first.map { String($0).uppercased() }
    }

    /// The sections' index titles, each once, in section order (a table view's side index).
    public var sectionIndexTitles: [String] {
        var seen: Set<String> = []
        return buckets.compactMap { sectionIndexTitle(forSectionName: $0.name) }.filter { seen.insert($0).inserted }
    }

    /// The first section whose index title is `title`; `index` is the title's position in ``sectionIndexTitles``,
    /// used when no section has the title (the section at that position, or the last).
    public func section(forSectionIndexTitle title: String, at index: Int) -> Int {
        if let found = buckets.firstIndex(where: { sectionIndexTitle(forSectionName: $0.name) == title }) { return found }
        return max(0, min(index, buckets.count - 1))
    }

    // MARK: Listening

    /// Calls `callback` with each diff, on the context's queue.
    public func onChange(_ callback: @escaping (FetchedResultsChange) -> Void) { callbacks.append(callback) }

    /// The diffs from now on, as an AsyncSequence; ending the iteration stops them.
    public var changes: AsyncStream<FetchedResultsChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: FetchedResultsChange.self, bufferingPolicy: .unbounded)
        let token = nextContinuation
        nextContinuation += 1
        continuations[token] = continuation
        if let owner = state?.owner {
            let key = ObjectIdentifier(self)
            continuation.onTermination = { _ in
                owner.enqueue { ctx in ctx.state.observation?.endStream(token, of: key) }
            }
        }
        return stream
    }

    func endStream(_ token: Int) { continuations[token] = nil }

    /// Whether a stream still listens (a controller a stream keeps alive goes when its last stream ends).
    var hasStreams: Bool { !continuations.isEmpty }

    /// Stops the diffs: the context forgets the controller and its streams end.
    public func cancel() {
        for continuation in continuations.values { continuation.finish() }
        continuations = [:]
        callbacks = []
        state?.observation?.remove(ObjectIdentifier(self))
    }

    func deliver(_ change: FetchedResultsChange) {
        guard !change.isEmpty else { return }
        deliverAlways(change)
    }

    func deliverAlways(_ change: FetchedResultsChange) {
        for callback in callbacks { callback(change) }
        for continuation in continuations.values { continuation.yield(change) }
    }

    // MARK: Fetching

    /// Fetches the results (the controller's first snapshot); later changes arrive as diffs.
    public func performFetch() throws {
        guard let state else { throw ObjectGraphError.invalidFetch(entity: fetchRequest.entityName, reason: "the controller's context is gone") }
        let objects = try state.fetchObjects(fetchRequest, loadValues: true)
        var placed: [Member] = []
        placed.reserveCapacity(objects.count)
        for object in objects { placed.append(try member(for: object)) }
        placed.sort { precedes($0, $1) }
        build(from: placed)
        try checkSectionsAreRuns()
        lastSaveCount = state.coordinator.saveCount
        hasFetched = true
    }

    /// Rebuilds the buckets and indexes from members already in order.
    func build(from ordered: [Member]) {
        buckets = []
        members = [:]
        identities = [:]
        members.reserveCapacity(ordered.count)
        identities.reserveCapacity(ordered.count)
        if case .none = sectioning { buckets = [Bucket(key: .null, name: "", members: ChunkedList(), ids: ChunkedList())] }
        for member in ordered {
            let key = sectionKey(member)
            if buckets.isEmpty || startsSection(after: buckets[buckets.count - 1].key, key) {
                buckets.append(Bucket(key: key, name: Self.sectionName(key), members: ChunkedList(), ids: ChunkedList()))
            }
            buckets[buckets.count - 1].members.append(member)
            buckets[buckets.count - 1].ids.append(member.id)
            members[ObjectIdentifier(member.object)] = member
            identities[member.id] = ObjectIdentifier(member.object)
        }
    }

    // MARK: Order

    func sortValues(of object: ManagedObject) throws -> [AttributeValue] {
        try fetchRequest.sortKeys.map { try AttributeValue.read($0.keyPath, from: object, entity: fetchRequest.entityName) }
    }

    /// The fetch's order: the sort keys, then the store's order of IDs (saved by key, unsaved last as inserted).
    func precedes(_ a: Member, _ b: Member) -> Bool {
        for (index, key) in fetchRequest.sortKeys.enumerated() {
            let order = InMemoryOrdering.order(a.values[index], b.values[index], key)
            if order != .orderedSame { return key.ascending == (order == .orderedAscending) }
        }
        return ContextState.storeOrder(a.id, b.id)
    }

    /// A member of the results for `object`, with its sort values and (for sections of their own) its section key.
    func member(for object: ManagedObject) throws -> Member {
        var member = Member(object: object, id: object.objectID, values: try sortValues(of: object))
        if member.id.isTemporaryID { temporaryMembers.insert(ObjectIdentifier(object)) }
        switch sectioning {
        case .none, .firstSortKey: break
        case .keyPath(let path): member.section = try AttributeValue.read(path, from: object, entity: fetchRequest.entityName)
        case .computed(let name): member.section = .string(try name(object))
        }
        return member
    }

    func sectionKey(_ member: Member) -> AttributeValue {
        switch sectioning {
        case .none: .null
        case .firstSortKey: member.values[0]
        case .keyPath, .computed: member.section
        }
    }

    /// Whether an object of section key `key` after one of `previous` starts a new section.
    private func startsSection(after previous: AttributeValue, _ key: AttributeValue) -> Bool {
        switch sectioning {
        case .none: false
        case .firstSortKey: sectionOrder(previous, key) != .orderedSame
        case .keyPath, .computed: Self.sectionName(previous) != Self.sectionName(key)
        }
    }

    /// Refuses sections the sort splits, as Core Data does ("the fetched object at index … has an out of order
    /// section name"): a section's objects must be one run of the sorted results.
    private func checkSectionsAreRuns() throws {
        var seen: Set<String> = []
        var offset = 0
        for bucket in buckets {
            guard seen.insert(bucket.name).inserted else {
                buckets = []
                members = [:]
                identities = [:]
                throw ObjectGraphError.invalidFetch(
                    entity: fetchRequest.entityName,
                    reason: "section '\(bucket.name)' appears again at result \(offset), after other sections: sort by keys that keep each section's objects together (the section's key first)")
            }
            offset += bucket.ids.count
        }
    }

    /// Sections in the order of the first sort key.
    func sectionOrder(_ a: AttributeValue, _ b: AttributeValue) -> ComparisonResult {
        guard case .firstSortKey = sectioning else { return .orderedSame }
        let key = fetchRequest.sortKeys[0]
        let order = InMemoryOrdering.order(a, b, key)
        if key.ascending || order == .orderedSame { return order }
        return order == .orderedAscending ? .orderedDescending : .orderedAscending
    }

    static func sectionName(_ key: AttributeValue) -> String {
        switch key {
        case .null: ""
        case .string(let text): text
        default: "\(key)"
        }
    }

    /// Whether `object` belongs in the results now: this context's, not deleted, of the entity, matching.
    func matches(_ object: ManagedObject) -> Bool {
        guard let state, object.state === state, !object.isDeleted, entityNames.contains(object.entity.name) else { return false }
        guard let predicate = fetchRequest.predicate else { return true }
        do {
            return try predicate.evaluate(with: object)
        } catch {
            lastError = ObjectGraphError.invalidPredicate(entity: fetchRequest.entityName, error: error)
            ObjectGraphLogging.logger.error("the fetched results controller for \(fetchRequest.entityName) left out \(object.objectID): \(error)")
            return false
        }
    }
}

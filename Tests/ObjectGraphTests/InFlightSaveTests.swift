import Dispatch
import Foundation
import Testing
@testable import ObjectGraph

/// A store that passes every call to `inner`, for test stores that change one call (their own `save`).
protocol ForwardingStore: PersistentStore {
    var inner: any PersistentStore { get }
}

extension ForwardingStore {
    var identifier: String { inner.identifier }
    var location: String { inner.location }
    func snapshots(for ids: [ObjectID]) throws -> [Snapshot] { try inner.snapshots(for: ids) }
    func fetch(_ request: StoreFetchRequest) throws -> [Snapshot] { try inner.fetch(request) }
    func fetchIDs(_ request: StoreFetchRequest) throws -> [ObjectID] { try inner.fetchIDs(request) }
    func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: AttributeValue]] { try inner.fetchDictionaries(request) }
    func relatedIDs(of ids: [ObjectID], relationship: ModelRelationship) throws -> [[ObjectID]] {
        try inner.relatedIDs(of: ids, relationship: relationship)
    }
    func count(_ request: StoreFetchRequest) throws -> Int { try inner.count(request) }
    func relatedIDs(of id: ObjectID, relationship: ModelRelationship) throws -> [ObjectID] { try inner.relatedIDs(of: id, relationship: relationship) }
    func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> [Int64] { try inner.allocatePrimaryKeys(rootEntity: rootEntity, count: count) }
}

/// A store whose next save stops inside the write until the test lets it go: a deterministic "the disk is slow".
/// With `afterWriting`, it stops once the write has committed, before the root hears of it.
final class GatedStore: ForwardingStore {
    let inner: any PersistentStore
    let afterWriting: Bool
    private let armed = Protected(false)
    /// Signalled when an armed save has entered the write.
    let entered = DispatchSemaphore(value: 0)
    /// Signal it to let the armed save finish.
    let release = DispatchSemaphore(value: 0)

    init(_ inner: any PersistentStore, afterWriting: Bool = false) { (self.inner, self.afterWriting) = (inner, afterWriting) }

    /// Makes the next save wait for ``release``.
    func arm() { armed.withLock { $0 = true } }

    func save(_ changes: ChangeSet) throws -> SaveResult {
        let gated = armed.withLock { armed in defer { armed = false }; return armed }
        if gated && !afterWriting {
            entered.signal()
            release.wait()
        }
        let result = try inner.save(changes)
        if gated && afterWriting {
            entered.signal()
            release.wait()
        }
        return result
    }
}

/// While a root context writes a save, its children read the store plus that save without waiting for the root's
/// queue (the nested stack's main context must not freeze during the writer's disk write).
@Suite struct InFlightSaveTests {
    func isUnanswerable(_ answer: InFlightSave.Answer) -> Bool {
        if case .unanswerable = answer { return true }
        return false
    }

    func isStale(_ answer: InFlightSave.Answer) -> Bool {
        if case .stale = answer { return true }
        return false
    }

    @Test(arguments: StoreKind.allCases)
    func aChildReadsItsRootsSaveWhileTheStoreWritesIt(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let model = try Model([Book.self])
        let gated = GatedStore(try kind.coordinator(model, folder).store)
        let coordinator = PersistentStoreCoordinator(model: model, store: gated)
        let writer = ObjectContext(coordinator: coordinator, name: "writer")
        let child = ObjectContext(parent: writer, name: "child")
        let stored = try await writer.perform { ctx in
            let names = ["Alpha", "Beta", "Gamma"]
            let books = try names.map { name in
                let book = try ctx.insert(Book.self)
                book.name = name
                book.author = "Old"
                return book
            }
            try ctx.save()
            return books.map(\.objectID)
        }
        // The child inserts two, updates Alpha, deletes Gamma, and saves into the writer.
        let inserted = try await child.perform { ctx in
            let new = try ["Delta", "Epsilon"].map { name in
                let book = try ctx.insert(Book.self)
                book.name = name
                book.author = "New"
                return book.objectID
            }
            try ctx.existingObject(with: stored[0], as: Book.self).author = "New"
            try ctx.delete(try ctx.existingObject(with: stored[2]))
            try ctx.save()
            return new
        }
        gated.arm()
        let save = Task.detached { try await writer.perform { ctx in try ctx.save() } }
        await Task.detached { gated.entered.wait() }.value

        // The writer's queue is held inside the write; the view answers without it.
        let view = try #require(writer.inFlight.current)
        var byAuthor = StoreFetchRequest(entityName: "Book")
        byAuthor.predicate = try FormatPredicate("author == %@", "New")
        byAuthor.sortKeys = [SortKey("name")]
        guard case .rows(let served) = try view.serve(byAuthor, store: gated, board: writer.inFlight) else {
            Issue.record("the view declined an attribute predicate")
            return
        }
        #expect(served.map { $0.values[0] } == [.string("Alpha"), .string("Delta"), .string("Epsilon")])
        // Rows still being inserted come back under the temporary IDs the child knows them by.
        #expect(served.map(\.objectID) == [stored[0]] + inserted)

        let (names, ids, firstByName) = try await child.perform { ctx in
            let all = try ctx.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("name")]), as: Book.self)
            var first = FetchRequest(entityName: "Book", sortKeys: [SortKey("name")])
            first.fetchLimit = 1
            first.fetchOffset = 1
            let second = try ctx.fetch(first, as: Book.self).map(\.name)
            return (all.map(\.name), all.map(\.objectID), second)
        }
        #expect(names == ["Alpha", "Beta", "Delta", "Epsilon"])
        #expect(ids == [stored[0], stored[1]] + inserted)
        #expect(firstByName == ["Beta"])

        gated.release.signal()
        try await save.value
        // The writer has nothing pending now: its view is the store alone.
        #expect(writer.inFlight.current?.contents.changes.isEmpty == true)
        // After the write, the same objects under their permanent IDs.
        let after = try await child.perform { ctx in
            try ctx.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("name")]), as: Book.self).map { ($0.name, $0.objectID.isTemporaryID) }
        }
        #expect(after.map(\.0) == ["Alpha", "Beta", "Delta", "Epsilon"])
        #expect(after.allSatisfy { !$0.1 })
    }

    static func addBooks(_ count: Int, named prefix: String, in ctx: isolated ObjectContext) throws -> [Book] {
        try (0..<count).map { number in
            let book = try ctx.insert(Book.self)
            book.name = "\(prefix)\(number)"
            book.author = "Same"
            return book
        }
    }

    /// A limited read beside pending inserts asks the store for the slice plus the rows updates and deletes may
    /// replace, not plus every insert. Once the write has committed, the store holds copies of those inserts, and a
    /// reader whose view is still the published one leaves the copies out for the pending rows. Equal in the sort,
    /// rows go by key, the pending inserts by the keys reserved for them: a book another coordinator stored after
    /// the write comes after them, and a book stored before, before them, in the order the store will have.
    @Test(arguments: StoreKind.allCases)
    func aLimitedReadAfterTheWriteCommittedStillGetsItsWholeSlice(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let model = try Model([Book.self])
        let gated = GatedStore(try kind.coordinator(model, folder).store, afterWriting: true)
        let coordinator = PersistentStoreCoordinator(model: model, store: gated)
        let writer = ObjectContext(coordinator: coordinator, name: "writer")
        let child = ObjectContext(parent: writer, name: "child")
        // Permanent IDs for stored books (read after their save), temporary ones for the child's inserts (the IDs
        // the view names pending rows by).
        let stored = try await writer.perform { ctx in
            let books = try Self.addBooks(10, named: "stored", in: ctx)
            try ctx.save()
            return books.map(\.objectID)
        }
        let inserted = try await child.perform { ctx in
            let ids = try Self.addBooks(20, named: "new", in: ctx).map(\.objectID)
            try ctx.save()
            return ids
        }
        gated.arm()
        let save = Task.detached { try await writer.perform { ctx in try ctx.save() } }
        await Task.detached { gated.entered.wait() }.value
        // The write has committed; another coordinator on the same store saves a book after it.
        let other = ObjectContext(coordinator: PersistentStoreCoordinator(model: model, store: gated.inner), name: "other")
        let later = try await other.perform { ctx in
            let books = try Self.addBooks(1, named: "later", in: ctx)
            try ctx.save()
            return books[0].objectID
        }

        let view = try #require(writer.inFlight.current)
        var request = StoreFetchRequest(entityName: "Book")
        request.sortKeys = [SortKey("author")]
        // By key: the stored books, the inserts under the keys reserved for them, the later book.
        let all = stored + inserted + [later]
        for (offset, limit) in [(0, 11), (5, 8), (10, 1), (25, 10)] {
            request.offset = offset
            request.limit = limit
            guard case .rows(let served) = try view.serve(request, store: gated, board: writer.inFlight) else {
                Issue.record("the view declined a sorted fetch")
                return
            }
            let expected = Array(all[min(offset, all.count)..<min(offset + limit, all.count)])
            #expect(served.map(\.objectID) == expected, "offset \(offset), limit \(limit)")
        }
        gated.release.signal()
        try await save.value
    }

    @Test func aRelationshipKeyPathIsLeftToTheRootContext() throws {
        let model = try Fixtures.model()
        let coordinator = PersistentStoreCoordinator.inMemory(model: model)
        let book = try model.entity(named: "Book")
        let temporary = ObjectID.temporary("Book")
        var changes = ChangeSet()
        changes.inserted = [ChangeSet.Row(
            objectID: temporary, version: 0, values: book.defaultValues, toOne: Array(repeating: nil, count: book.toOneCount),
            changedAttributes: [], changedToOne: [])]
        changes.presetIDs = [temporary: ObjectID(entityName: "Book", rawKey: 1)]
        let view = InFlightSave(layers: [changes], presetIDs: changes.presetIDs, coordinator: coordinator)
        let board = InFlightBoard()
        board.publish(view)
        var byAttribute = StoreFetchRequest(entityName: "Book")
        byAttribute.predicate = try FormatPredicate("pages >= 0")
        guard case .rows(let rows) = try view.serve(byAttribute, store: coordinator.store, board: board) else {
            Issue.record("the view declined an attribute predicate")
            return
        }
        #expect(rows.map(\.objectID) == [temporary])
        // Judging the pending row needs its author: only the root context's graph can answer that.
        var byRelationship = StoreFetchRequest(entityName: "Book")
        byRelationship.predicate = try FormatPredicate("author.name == %@", "Someone")
        #expect(try isUnanswerable(view.serve(byRelationship, store: coordinator.store, board: board)))
        // A view that is no longer the board's current one may be stale: it declines too.
        board.clear()
        #expect(try isStale(view.serve(byAttribute, store: coordinator.store, board: board)))
    }

    /// The board keeps the view before the current one, and frees the one before that on its release queue, never
    /// on the publishing thread: a root publishes while a child's save waits for its queue.
    @Test func aRetiredViewIsFreedOnTheReleaseQueueNotByThePublisher() throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try Fixtures.model())
        let releaseQueue = DispatchQueue(label: "in-flight release")
        let board = InFlightBoard(releasingOn: releaseQueue)
        weak var first: InFlightSave?
        do {
            let view = InFlightSave(layers: [], coordinator: coordinator)
            first = view
            board.publish(view)
        }
        board.publish(InFlightSave(layers: [], coordinator: coordinator))
        // Still the previous view: a reader may have taken it just before it was replaced.
        #expect(first != nil)
        releaseQueue.suspend()
        board.publish(InFlightSave(layers: [], coordinator: coordinator))
        // Retired, but freed only when the release queue runs.
        #expect(first != nil)
        releaseQueue.resume()
        releaseQueue.sync {}
        #expect(first == nil)
    }

    /// Not even when the release queue runs at once: the publisher must never hold the last reference to a retired
    /// view. Each view's rows hold bytes whose deallocator notes the thread that freed them; the release queue runs on
    /// the other core as soon as it can, which is when a publisher still holding its own reference would free them.
    @Test func aRetiredViewIsNeverFreedByThePublisherEvenWhenTheReleaseQueueRunsAtOnce() throws {
        let model = try Fixtures.model()
        let coordinator = PersistentStoreCoordinator.inMemory(model: model)
        let book = try model.entity(named: "Book")
        let releaseQueue = DispatchQueue(label: "in-flight release, eager")
        let board = InFlightBoard(releasingOn: releaseQueue)
        let publisher = QueueExecutor.currentThread
        let freedByPublisher = Protected(0), freed = Protected(0)
        let views = 2_000
        for _ in 0..<views {
            let bytes = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
            let tracked = Data(bytesNoCopy: bytes, count: 16, deallocator: .custom { pointer, _ in
                if QueueExecutor.currentThread == publisher { freedByPublisher.withLock { $0 += 1 } }
                freed.withLock { $0 += 1 }
                pointer.deallocate()
            })
            var values = book.defaultValues
            values[0] = .data(tracked)
            var changes = ChangeSet()
            changes.inserted = [ChangeSet.Row(
                objectID: .temporary("Book"), version: 0, values: values, toOne: Array(repeating: nil, count: book.toOneCount),
                changedAttributes: [], changedToOne: [])]
            board.publish(InFlightSave(layers: [changes], coordinator: coordinator))
        }
        releaseQueue.sync {}
        // The last two stay: the current view and the one before it.
        #expect(freed.withLock { $0 } == views - 2)
        #expect(freedByPublisher.withLock { $0 } == 0)
    }
}

/// A limited fetch beside many pending rows keeps only the rows that can reach its slice before ordering them (cut
/// at the slice's last integer, where the first sort key reads one); what it returns must be what the same fetch
/// returns once those rows are saved.
@Suite struct LimitedFetchBesidePendingRowsTests {
    typealias Row = [AttributeValue]

    /// `sortKeys`' first `limit` rows after `offset` that match `format`, as (int64, string), read in `context`.
    func slice(_ context: ObjectContext, _ sortKeys: [SortKey], where format: String?, offset: Int, limit: Int) async throws -> [Row] {
        try await context.perform { ctx in
            var request = try format.map { try FetchRequest(entityName: "Sample", format: $0) } ?? FetchRequest(entityName: "Sample")
            request.sortKeys = sortKeys
            request.fetchOffset = offset
            request.fetchLimit = limit
            return try ctx.fetch(request).map { [try $0.value(forKey: "int64"), try $0.value(forKey: "string")] }
        }
    }

    /// With `int64` indexed, the pending layer keeps its rows in that attribute's order (unless a row holds nil
    /// there), and a fetch sorted by it first takes its rows from that order.
    @Test(arguments: [false, true], [false, true])
    func aLimitedFetchBesideManyPendingRowsIsTheFetchOnceTheyAreSaved(withNulls: Bool, indexed: Bool) async throws {
        let folder = try TemporaryFolder()
        let model = indexed
            ? try Model(entities: [EntityDescription("Sample", attributes: [.init("string", .string), .init("int64", .int64, isIndexed: true)])])
            : try Fixtures.model()
        let coordinator = try StoreKind.sqlite.coordinator(model, folder)
        let writer = ObjectContext(coordinator: coordinator, name: "writer")
        let main = ObjectContext(parent: writer, name: "main")
        let worker = ObjectContext(parent: main, name: "worker")
        try await writer.perform { ctx in
            for number in 0..<300 {
                let sample = try ctx.insert("Sample")
                try sample.setValue(Int64(number % 10), forKey: "int64")
                try sample.setValue("stored \(number)", forKey: "string")
            }
            try ctx.save()
        }
        // Many ties at every value, updates that move stored rows across any cut, deletions, and (in one run) rows
        // whose first sort key holds no integer.
        try await worker.perform { ctx in
            for number in 0..<700 {
                let sample = try ctx.insert("Sample")
                try sample.setValue(withNulls && number % 50 == 0 ? nil : Int64(number % 13) - 2, forKey: "int64")
                try sample.setValue("new \(number)", forKey: "string")
            }
            var storedRequest = try FetchRequest(entityName: "Sample", format: "string BEGINSWITH 'stored'")
            storedRequest.sortKeys = [SortKey("string")]
            let stored = try ctx.fetch(storedRequest)
            for (index, sample) in stored.enumerated() {
                if index % 6 == 0 { try sample.setValue(Int64(index % 17) - 5, forKey: "int64") }
                if index % 15 == 1 { try ctx.delete(sample) }
            }
            try ctx.save()
        }
        let orders: [[SortKey]] = [
            [SortKey("int64")], [SortKey("int64", ascending: false)],
            [SortKey("int64", ascending: false), SortKey("string")], [SortKey("int64"), SortKey("string", ascending: false)],
        ]
        let slices = [(0, 1), (0, 25), (5, 25), (40, 60), (900, 50)]
        let filters: [String?] = [nil, "string ENDSWITH '3'"]
        let ordered = await main.perform { ctx in ctx.state.layers.map { !$0.index.ordered.isEmpty } }
        #expect(ordered == [indexed && !withNulls])
        var pending: [[Row]] = []
        for filter in filters {
            for keys in orders {
                for (offset, limit) in slices { pending.append(try await slice(main, keys, where: filter, offset: offset, limit: limit)) }
            }
        }
        try await main.perform { ctx in try ctx.save() }
        try await writer.perform { ctx in try ctx.save() }
        var saved: [[Row]] = []
        for filter in filters {
            for keys in orders {
                for (offset, limit) in slices { saved.append(try await slice(main, keys, where: filter, offset: offset, limit: limit)) }
            }
        }
        #expect(pending.count == saved.count)
        for (index, (before, after)) in zip(pending, saved).enumerated() {
            let order = index / slices.count
            #expect(before == after, "filter \(order / orders.count), order \(order % orders.count), slice \(slices[index % slices.count])")
        }
        #expect(saved[1].count == 25 && saved[4].count == 50)
    }
}

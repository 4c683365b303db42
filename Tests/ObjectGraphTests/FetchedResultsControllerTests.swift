import Foundation
import Observation
import Synchronization
import Testing
@testable import ObjectGraph

/// What a controller's diffs did, checked where they arrive (on the controller's queue) and read by the test.
final class DiffLog: Sendable {
    private let state = Mutex<(failures: [String], diffs: Int, objectChanges: Int)>(([], 0, 0))
    func fail(_ message: String) { state.withLock { $0.failures.append(message + " after " + step.withLock { $0 }) } }
    let step = Mutex("")
    func count(_ change: FetchedResultsChange) { state.withLock { $0.diffs += 1; $0.objectChanges += change.objectChanges.count } }
    var failures: [String] { state.withLock { $0.failures } }
    var diffs: Int { state.withLock { $0.diffs } }
    var objectChanges: Int { state.withLock { $0.objectChanges } }
}

/// A deterministic random source (SplitMix64).
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum Items {
    static let model: Model = try! Model(entities: [
        EntityDescription("Item", attributes: [.init("group", .string, isOptional: true), .init("rank", .int64), .init("visible", .bool)]),
    ])
    static let groups = ["a", "b", "c", "d", nil]

    static func request() throws -> FetchRequest {
        var request = try FetchRequest(entityName: "Item", format: "visible == YES", argumentArray: [])
        request.sortKeys = [SortKey("group"), SortKey("rank", ascending: false)]
        return request
    }

    /// The previous snapshot with the change's section and object changes applied as a table view applies them.
    static func applying(_ change: FetchedResultsChange, to previous: FetchedResultsSnapshot) -> FetchedResultsSnapshot? {
        var sections = previous.sections.map { section in
            FetchedResultsSnapshot.Section(name: section.name, objectIDs: ObjectIDList(section.objectIDs.map { change.renamedIDs[$0] ?? $0 }))
        }
        let removed = change.objectChanges.filter { $0.kind == .delete || $0.kind == .move }.compactMap(\.indexPath).sorted(by: >)
        for path in removed {
            guard path[0] < sections.count, path[1] < sections[path[0]].objectIDs.count else { return nil }
            sections[path[0]].objectIDs.remove(at: path[1])
        }
        for section in change.sectionChanges.filter({ $0.kind == .delete }).sorted(by: { $0.index > $1.index }) {
            guard section.index < sections.count, sections[section.index].objectIDs.isEmpty else { return nil }
            sections.remove(at: section.index)
        }
        for section in change.sectionChanges.filter({ $0.kind == .insert }).sorted(by: { $0.index < $1.index }) {
            guard section.index <= sections.count else { return nil }
            sections.insert(.init(name: section.name, objectIDs: []), at: section.index)
        }
        let inserted = change.objectChanges.filter { $0.kind == .insert || $0.kind == .move }.sorted { $0.newIndexPath! < $1.newIndexPath! }
        for object in inserted {
            let path = object.newIndexPath!
            guard path[0] < sections.count, path[1] <= sections[path[0]].objectIDs.count else { return nil }
            sections[path[0]].objectIDs.insert(object.objectID, at: path[1])
        }
        return FetchedResultsSnapshot(sections: sections)
    }

    static func saveOrRollBack(_ ctx: isolated ObjectContext) {
        do { try ctx.save() } catch { ctx.rollback() }
    }

    static func edit(_ ctx: isolated ObjectContext, _ seed: UInt64) throws {
        var random = SplitMix(state: seed)
        let existing = try ctx.fetch(FetchRequest(entityName: "Item"))
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            switch Int.random(in: 0..<6, using: &random) {
            case 0, 1:
                let item = try ctx.insert("Item")
                try item.setValue(Items.groups.randomElement(using: &random)!, forKey: "group")
                try item.setValue(Int64.random(in: 0..<8, using: &random), forKey: "rank")
                try item.setValue(Bool.random(using: &random), forKey: "visible")
            case 2 where !existing.isEmpty:
                let item = existing.randomElement(using: &random)!
                if !item.isDeleted { try ctx.delete(item) }
            default:
                guard let item = existing.randomElement(using: &random), !item.isDeleted else { continue }
                switch Int.random(in: 0..<3, using: &random) {
                case 0: try item.setValue(Items.groups.randomElement(using: &random)!, forKey: "group")
                case 1: try item.setValue(Int64.random(in: 0..<8, using: &random), forKey: "rank")
                default: try item.setValue(Bool.random(using: &random), forKey: "visible")
                }
            }
        }
    }

    /// Checks each diff as it arrives: applied to the previous snapshot, both ways, it gives the new one, which is
    /// what a fresh fetch gives.
    static func watch(_ controller: FetchedResultsController, state: ContextState, log: DiffLog) {
        var previous = controller.snapshot
        let request = controller.fetchRequest
        controller.onChange { [weak controller] change in
            log.count(change)
            if let error = controller?.lastError { log.fail("the controller met \(error)") }
            do {
                let fresh = try state.fetchObjects(request, loadValues: true)
                let freshIDs = fresh.map(\.objectID)
                let renamed = previous.objectIDs.map { change.renamedIDs[$0] ?? $0 }
                if renamed.applying(change.difference) != freshIDs { log.fail("the difference does not lead to a fresh fetch") }
                if change.snapshot.objectIDs != freshIDs {
                    let have = Set(change.snapshot.objectIDs), want = Set(freshIDs)
                    log.fail("the snapshot is not a fresh fetch: extra \(have.subtracting(want)), missing \(want.subtracting(have))")
                }
                var groups: [(String, [ObjectID])] = []
                for object in fresh {
                    let name = (try object.value(forKey: "group")).stringValue ?? ""
                    if groups.last?.0 == name { groups[groups.count - 1].1.append(object.objectID) } else { groups.append((name, [object.objectID])) }
                }
                if change.snapshot.sections.map(\.name) != groups.map(\.0) || change.snapshot.sections.map({ Array($0.objectIDs) }) != groups.map(\.1) {
                    log.fail("the sections are not the fresh fetch's groups")
                }
                if applying(change, to: previous) != change.snapshot { log.fail("the section and object changes do not lead to the snapshot") }
            } catch {
                log.fail("\(error)")
            }
            previous = change.snapshot
        }
    }
}

extension AttributeValue {
    var stringValue: String? { if case .string(let text) = self { text } else { nil } }
}

@Suite struct FetchedResultsControllerTests {
    /// Random edits, saves and merges around a root context C: its own, those of its child K (saved into C), those
    /// of a sibling root S (merged into C as it saves). After every diff the controller on C holds exactly what a
    /// fresh fetch returns, and the diff leads there from the previous snapshot.
    @Test(arguments: Array(1...12) as [UInt64])
    func everyDiffLeadsToAFreshFetch(seed: UInt64) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try PersistentStoreCoordinator(model: Items.model, storeURL: folder.storeURL)
        let root = ObjectContext(coordinator: coordinator, name: "C")
        let child = ObjectContext(parent: root, name: "K")
        let sibling = ObjectContext(coordinator: coordinator, name: "S")
        let log = DiffLog()
        try await root.perform { ctx in
            ctx.automaticallyMergesChangesFromParent = true
            let controller = try ctx.state.fetchedResultsController(for: try Items.request(), sectionNameKeyPath: "group", keepAlive: true)
            Items.watch(controller, state: ctx.state, log: log)
        }
        var random = SplitMix(state: seed)
        for number in 0..<200 {
            let step = random.next()
            log.step.withLock { $0 = "step #\(number) kind \(step % 7)" }
            switch step % 7 {
            case 0, 1: try await root.perform { ctx in try Items.edit(ctx, step) }
            // A save that conflicts with a sibling's (a row it changed was deleted) is refused and rolled back, as an
            // app would; the controller follows the rollback too.
            case 2: await root.perform { ctx in Items.saveOrRollBack(ctx) }
            case 3: try await child.perform { ctx in try Items.edit(ctx, step); Items.saveOrRollBack(ctx) }
            case 4: try await sibling.perform { ctx in try Items.edit(ctx, step); Items.saveOrRollBack(ctx) }
            case 5: await root.perform { ctx in ctx.rollback() }
            default: try await child.perform { ctx in try Items.edit(ctx, step) }
            }
            // Merges and processing are queued on C: a job behind them sees them done, and the controller holds a
            // fresh fetch's results whether or not the step changed them.
            await root.perform { _ in }
            try await root.perform { ctx in
                ctx.processPendingChanges()
                let fresh = try ctx.fetch(try Items.request()).map(\.objectID)
                let held = ctx.state.observation?.controllersForTesting.first?.snapshot.objectIDs
                if held != fresh { log.fail("after the step the controller holds \(held ?? []), a fetch gives \(fresh)") }
            }
        }
        #expect(log.failures.isEmpty, "\(log.failures.filter { $0.contains("snapshot is not") }.prefix(2))")
        #expect(log.diffs > 60, "only \(log.diffs) diffs")
        #expect(log.objectChanges > 120, "only \(log.objectChanges) object changes")
    }

    @Test func aRequestWithoutSortKeysOrWithAnotherSectionKeyIsRefused() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: Items.model)
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            #expect(throws: ObjectGraphError.invalidFetch(entity: "Item", reason: "a fetched results controller needs sort keys, to keep its results in order")) {
                _ = try ctx.fetchedResultsController(for: FetchRequest(entityName: "Item"))
            }
            // Core Data requires only that the sort keeps each section together: ranks repeat across groups.
            for (group, rank) in [("a", 1), ("b", 2), ("c", 1)] as [(String, Int64)] {
                let item = try ctx.insert("Item")
                try item.setValue(group, forKey: "group")
                try item.setValue(rank, forKey: "rank")
                try item.setValue(true, forKey: "visible")
            }
            do {
                _ = try ctx.fetchedResultsController(for: try Items.request(), sectionNameKeyPath: "rank")
                Issue.record("sections the sort splits were accepted")
            } catch let error as ObjectGraphError {
                #expect(error.message.contains("section '1' appears again at result 2"), "\(error.message)")
            }
            var unknown = try Items.request()
            unknown.sortKeys = [SortKey("nmae")]
            #expect(throws: ObjectGraphError.self) { _ = try ctx.fetchedResultsController(for: unknown) }
        }
    }

    @Test func oneSaveOfAnotherContextGivesOneDiffAndTheStreamStartsWithTheResults() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try PersistentStoreCoordinator(model: Items.model, storeURL: folder.storeURL)
        let main = ObjectContext(coordinator: coordinator, name: "main")
        let worker = ObjectContext(coordinator: coordinator, name: "worker")
        let results = try await main.perform { ctx in
            ctx.automaticallyMergesChangesFromParent = true
            return try ctx.results(of: try Items.request(), sectionNameKeyPath: "group")
        }
        var iterator = results.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.snapshot.count == 0)
        try await worker.perform { ctx in
            for rank in 0..<50 {
                let item = try ctx.insert("Item")
                try item.setValue(rank % 2 == 0 ? "a" : "b", forKey: "group")
                try item.setValue(Int64(rank), forKey: "rank")
                try item.setValue(true, forKey: "visible")
            }
            try ctx.save()
        }
        let diff = await iterator.next()
        #expect(diff?.snapshot.count == 50)
        #expect(diff?.sectionChanges.map(\.name) == ["a", "b"])
        #expect(diff?.objectChanges.count == 50 && diff?.objectChanges.allSatisfy { $0.kind == .insert } == true)
        // A change that moves one object across sections: one move, a deleted and no inserted section.
        let moved = try await worker.perform { ctx in
            let item = try ctx.fetch(try FetchRequest(entityName: "Item", format: "rank == 48", argumentArray: []))[0]
            try item.setValue("c", forKey: "group")
            try ctx.save()
            return item.objectID
        }
        let move = await iterator.next()
        #expect(move?.objectChanges == [FetchedResultsObjectChange(kind: .move, objectID: moved, indexPath: [0, 0], newIndexPath: [2, 0])])
        #expect(move?.sectionChanges == [FetchedResultsSectionChange(kind: .insert, name: "c", index: 2)])
    }

    @Test func anObjectObserverHearsChangedKeysAndTheDeletion() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: Items.model)
        let main = ObjectContext(coordinator: coordinator, name: "main")
        let worker = ObjectContext(coordinator: coordinator, name: "worker")
        let id = try await worker.perform { ctx in
            let item = try ctx.insert("Item")
            try item.setValue("a", forKey: "group")
            try ctx.save()
            return item.objectID
        }
        let changes = try await main.perform { ctx in
            ctx.automaticallyMergesChangesFromParent = true
            return try ctx.changes(of: id)
        }
        var iterator = changes.makeAsyncIterator()
        try await main.perform { ctx in try ctx.existingObject(with: id).setValue(Int64(3), forKey: "rank") }
        #expect(await iterator.next() == ObjectChange(objectID: id, changedKeys: ["rank"], isDeleted: false))
        try await worker.perform { ctx in
            try ctx.existingObject(with: id).setValue("b", forKey: "group")
            try ctx.save()
        }
        #expect(await iterator.next() == ObjectChange(objectID: id, changedKeys: ["group"], isDeleted: false))
        try await worker.perform { ctx in
            try ctx.delete(try ctx.existingObject(with: id))
            try ctx.save()
        }
        #expect(await iterator.next() == ObjectChange(objectID: id, changedKeys: [], isDeleted: true))
        #expect(await iterator.next() == nil)
    }
}

/// Typed properties of @Entity objects take part in Swift's Observation.
@Suite struct ObservationTrackingTests {
    final class Flag: Sendable {
        private let state = Mutex(0)
        func raise() { state.withLock { $0 += 1 } }
        var count: Int { state.withLock { $0 } }
    }

    @Test func aTrackedReadHearsTheAppsChangeAMergeAndARollback() async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: try MacroEntityTests.model())
        // Reads are tracked on main-queue contexts, where views read objects.
        let main = ObjectContext(coordinator: coordinator, concurrencyType: .mainQueue, name: "main")
        let worker = ObjectContext(coordinator: coordinator, name: "worker")
        let id = try await main.perform { ctx in
            ctx.automaticallyMergesChangesFromParent = true
            let novel = try ctx.insert(Novel.self)
            novel.title = "Nana"
            try ctx.save()
            return novel.objectID
        }
        let flag = Flag()
        try await main.perform { ctx in
            let novel = try ctx.existingObject(with: id, as: Novel.self)
            withObservationTracking { _ = novel.title } onChange: { flag.raise() }
            novel.pages = 300                       // another property: not heard
            #expect(flag.count == 0)
            novel.title = "Germinal"
            #expect(flag.count == 1)
            withObservationTracking { _ = novel.title } onChange: { flag.raise() }
            ctx.rollback()
            #expect(flag.count == 2 && novel.title == "Nana")
            withObservationTracking { _ = novel.pages } onChange: { flag.raise() }
            // Something must hold the object for a merge to reach it, as a view would: an object observer does.
            _ = try ctx.observe(novel) { _ in }
        }
        try await worker.perform { ctx in
            try ctx.existingObject(with: id, as: Novel.self).pages = 412
            try ctx.save()
        }
        // The merge runs on main's queue after the worker's save: a job behind it sees it done.
        let pages = try await main.perform { ctx in try ctx.existingObject(with: id, as: Novel.self).pages }
        #expect(flag.count == 3)
        #expect(pages == 412)
    }
}

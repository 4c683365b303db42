import Foundation
import Testing
@testable import ObjectGraph

/// What Core Data's `NSFetchedResultsController` offers beyond sections by the first sort key: `indexPath(forObject:)`,
/// section index titles ("the first letter of the section name, capitalized"), `fetchLimit` and `fetchOffset`, and
/// sections by any key the sort keeps together ("the fetch request must have at least one sort descriptor… the first
/// sort descriptor … [or] a key that groups the sections") or by a name computed from each object.
@Suite struct ResultsControllerReachTests {
    static let model: Model = try! Model(entities: [
        EntityDescription("Entry", attributes: [.init("day", .int64), .init("month", .string), .init("title", .string)]),
    ])

    static func month(_ day: Int64) -> String { ["january", "february", "march"][Int(day) / 31] }

    static func insert(_ ctx: isolated ObjectContext, day: Int64, title: String) throws {
        let entry = try ctx.insert("Entry")
        try entry.setValue(day, forKey: "day")
        try entry.setValue(Self.month(day), forKey: "month")
        try entry.setValue(title, forKey: "title")
    }

    static func request() -> FetchRequest {
        var request = FetchRequest(entityName: "Entry")
        request.sortKeys = [SortKey("day")]
        return request
    }

    static func names(_ controller: FetchedResultsController) -> [[String]] {
        controller.sections.map { section in [section.name] + section.objects.map { (try? $0.value(forKey: "title").stringValue) ?? nil ?? "" } }
    }

    @Test func sectionsByAKeyTheSortKeepsTogetherWithIndexTitlesAndIndexPaths() async throws {
        let context = ObjectContext(coordinator: .inMemory(model: Self.model))
        try await context.perform { ctx in
            for (day, title) in [(3, "c"), (40, "f"), (1, "a"), (70, "m"), (35, "e")] as [(Int64, String)] { try Self.insert(ctx, day: day, title: title) }
            try ctx.save()
            let controller = try ctx.fetchedResultsController(for: Self.request(), sectionNameKeyPath: "month")
            #expect(Self.names(controller) == [["january", "a", "c"], ["february", "e", "f"], ["march", "m"]])
            #expect(controller.sectionIndexTitles == ["J", "F", "M"])
            #expect(controller.section(forSectionIndexTitle: "F", at: 1) == 1 && controller.section(forSectionIndexTitle: "Z", at: 9) == 2)
            let e = controller.object(at: [1, 0])
            #expect(controller.indexPath(forObject: e) == [1, 0])
            // A change moves an object between sections; a new month's entry makes a section.
            try e.setValue(Int64(5), forKey: "day")
            try e.setValue(Self.month(5), forKey: "month")
            try Self.insert(ctx, day: 90, title: "z")
            ctx.processPendingChanges()
            #expect(Self.names(controller) == [["january", "a", "c", "e"], ["february", "f"], ["march", "m", "z"]])
            #expect(controller.indexPath(forObject: e) == [0, 2])
            let outside = try ctx.insert("Entry")
            #expect(controller.indexPath(forObject: outside) == nil || controller.fetchedObjects.contains { $0 === outside })
        }
    }

    @Test func sectionsNamedByTheAppAndALimitedWindowStayCurrent() async throws {
        let context = ObjectContext(coordinator: .inMemory(model: Self.model))
        try await context.perform { ctx in
            for day in [1, 2, 33, 34, 65] as [Int64] { try Self.insert(ctx, day: day, title: "d\(day)") }
            // Sections named from each object: the "by month" pattern, without a stored month.
            let byQuarter = try ctx.fetchedResultsController(for: Self.request()) { object in
                (try object.value(forKey: "day")).int64Value! < 60 ? "first" : "later"
            }
            #expect(byQuarter.sections.map(\.name) == ["first", "later"] && byQuarter.sections.map(\.objects.count) == [4, 1])
            var window = Self.request()
            window.fetchOffset = 1
            window.fetchLimit = 2
            let limited = try ctx.fetchedResultsController(for: window)
            var diffs: [FetchedResultsChange] = []
            limited.onChange { diffs.append($0) }
            #expect(Self.names(limited) == [["", "d2", "d33"]])
            // An entry sorting first pushes the window: the limit holds after the change, as a fresh fetch's.
            try Self.insert(ctx, day: 0, title: "d0")
            ctx.processPendingChanges()
            #expect(Self.names(limited) == [["", "d1", "d2"]])
            #expect(diffs.last?.objectChanges.map(\.kind).sorted { "\($0)" < "\($1)" } == [.delete, .insert])
            #expect(byQuarter.sections.map(\.objects.count) == [5, 1])
        }
    }
}

extension AttributeValue {
    var int64Value: Int64? { if case .int(let value) = self { value } else { nil } }
}

extension ResultsControllerReachTests {
    /// The random edits, saves and merges of ``FetchedResultsControllerTests`` on a controller that is fetched again
    /// at each change (a window of the results, sections the app names): every diff still leads from the previous
    /// snapshot to a fresh fetch's results and sections.
    @Test(arguments: Array(1...6) as [UInt64])
    func aWindowWithAppNamedSectionsFollowsEveryChange(seed: UInt64) async throws {
        let coordinator = PersistentStoreCoordinator.inMemory(model: Items.model)
        let root = ObjectContext(coordinator: coordinator, name: "C")
        let sibling = ObjectContext(coordinator: coordinator, name: "S")
        let log = DiffLog()
        let name: @Sendable (ManagedObject) throws -> String = { ((try $0.value(forKey: "group")).stringValue ?? "-").uppercased() }
        try await root.perform { ctx in
            ctx.automaticallyMergesChangesFromParent = true
            var request = try Items.request()
            request.fetchOffset = 2
            request.fetchLimit = 7
            let controller = try ctx.state.fetchedResultsController(for: request, sectionNameKeyPath: nil, sectionName: name, keepAlive: true)
            var previous = controller.snapshot
            controller.onChange { change in
                log.count(change)
                do {
                    let fresh = try ctx.state.fetchObjects(request, loadValues: true)
                    if change.snapshot.objectIDs != fresh.map(\.objectID) { log.fail("the snapshot is not a fresh fetch") }
                    var groups: [String] = []
                    for object in fresh where groups.last != (try name(object)) { groups.append(try name(object)) }
                    if change.snapshot.sections.map(\.name) != groups { log.fail("sections \(change.snapshot.sections.map(\.name)), fresh \(groups)") }
                    let renamed = previous.objectIDs.map { change.renamedIDs[$0] ?? $0 }
                    if renamed.applying(change.difference) != change.snapshot.objectIDs { log.fail("the difference does not lead to the snapshot") }
                    if Items.applying(change, to: previous) != change.snapshot { log.fail("the changes do not lead to the snapshot") }
                } catch {
                    log.fail("\(error)")
                }
                previous = change.snapshot
            }
        }
        var random = SplitMix(state: seed)
        for _ in 0..<120 {
            let step = random.next()
            switch step % 4 {
            case 0, 1: try await root.perform { ctx in try Items.edit(ctx, step) }
            case 2: await root.perform { ctx in Items.saveOrRollBack(ctx) }
            default: try await sibling.perform { ctx in try Items.edit(ctx, step); Items.saveOrRollBack(ctx) }
            }
            await root.perform { ctx in ctx.processPendingChanges() }
        }
        #expect(log.failures.isEmpty, "\(log.failures.prefix(3))")
        #expect(log.diffs > 30, "only \(log.diffs) diffs")
    }
}

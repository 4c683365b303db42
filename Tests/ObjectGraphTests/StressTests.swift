import Foundation
import Testing
@testable import ObjectGraph

/// What the accepted saves imply: each tag's label at the highest version saved, or its deletion.
final class Ledger: Sendable {
    struct Entry: Sendable {
        var version: Int64
        var label: String?
    }

    private let entries = Protected<[ObjectID: Entry]>([:])
    private let ids = Protected<[ObjectID]>([])
    private let rejections = Protected<(conflicts: Int, other: [String])>((0, []))

    func record(_ id: ObjectID, version: Int64, label: String?) {
        entries.withLock { table in
            if let current = table[id], current.version >= version { return }
            table[id] = Entry(version: version, label: label)
        }
        if version == 1 { ids.withLock { $0.append(id) } }
    }

    func someID(_ pick: Int) -> ObjectID? { ids.withLock { $0.isEmpty ? nil : $0[pick % $0.count] } }
    func reject(_ error: any Error) {
        rejections.withLock { state in
            if case ObjectGraphError.conflict = error { state.conflicts += 1 } else { state.other.append("\(error)") }
        }
    }
    /// The final labels, by permanent ID (an object recorded under its temporary ID and later its permanent one
    /// counts once, at its latest version).
    func expected(resolving resolve: (ObjectID) -> ObjectID) -> [ObjectID: String] {
        var latest: [ObjectID: Entry] = [:]
        for (id, entry) in entries.withLock({ $0 }) {
            let key = resolve(id)
            if let current = latest[key], current.version >= entry.version { continue }
            latest[key] = entry
        }
        return latest.compactMapValues(\.label)
    }
    var conflicts: Int { rejections.withLock { $0.conflicts } }
    var otherErrors: [String] { rejections.withLock { $0.other } }
}

@Suite(.serialized) struct StressTests {
    static let deletedVersion = Int64.max

    /// One context's seeded stream of operations; in the sibling layout any context may touch any tag, in the
    /// nested one each worker keeps to its own (saves into one parent have no conflicts to report).
    static func work(_ context: ObjectContext, seed: UInt64, rounds: Int, ledger: Ledger, ownOnly: Bool) async throws {
        var random = FetchConsistencyTests.SplitMix(seed: seed)
        var mine: [ObjectID] = []
        for round in 0..<rounds {
            let pick = random.below(1_000_000)
            let operation = random.below(10)
            let target = ownOnly ? (mine.isEmpty ? nil : mine[pick % mine.count]) : ledger.someID(pick)
            // Read first, write in a later perform: other contexts may save in between (the conflicts under test).
            // The smuggled object stays on this context: both performs run on its queue.
            let held: SmuggledObject? = await context.perform { ctx in
                guard let target, operation >= 4 else { return nil }
                return try? SmuggledObject(object: ctx.existingObject(with: target))
            }
            let outcome: (id: ObjectID, label: String?, isInsert: Bool, version: Int64)? = try await context.perform { ctx in
                defer { held?.release() }
                var done: (object: ManagedObject, label: String?, isInsert: Bool)?
                do {
                    switch operation {
                    case 0...3:
                        let tag = try ctx.insert("Tag")
                        let label = "\(ctx.name)-\(round)"
                        try tag.setValue(label, forKey: "label")
                        done = (tag, label, true)
                    case 4...7:
                        guard let held, !held.object.isDeleted, held.object.state != nil else { return nil }
                        let tag: ManagedObject = held.object
                        let label = "\(ctx.name)-\(round)-updated"
                        try tag.setValue(label, forKey: "label")
                        done = (tag, label, false)
                    default:
                        guard let held, !held.object.isDeleted, held.object.state != nil else { return nil }
                        let tag: ManagedObject = held.object
                        try ctx.delete(tag)
                        done = (tag, nil, false)
                    }
                } catch ObjectGraphError.objectNotFound {
                    return nil
                }
                guard let done else { return nil }
                do {
                    try ctx.save()
                } catch {
                    ledger.reject(error)
                    ctx.rollback()
                    return nil
                }
                // The version this save wrote, read at once: a merge may move the object on afterwards.
                let object = done.object
                let version = done.label == nil ? StressTests.deletedVersion : (object.committed?.version ?? 1)
                return (object.objectID, done.label, done.isInsert, version)
            }
            guard let outcome else { continue }
            if outcome.isInsert { mine.append(outcome.id) }
            // `mine` may hold a deleted object's temporary ID after its permanent one is reported here: it stays,
            // and picking it again must find nothing (the delete, still pending in the parent under either ID, hides
            // the stored row).
            if ownOnly, outcome.label == nil { mine.removeAll { $0 == outcome.id } }
            ledger.record(outcome.id, version: ownOnly ? Int64(round + 2) : outcome.version, label: outcome.label)
        }
    }

    static func storedLabels(_ coordinator: PersistentStoreCoordinator) async throws -> [ObjectID: String] {
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            var result: [ObjectID: String] = [:]
            for tag in try ctx.fetch(FetchRequest(entityName: "Tag")) {
                if case .string(let label) = try tag.value(forKey: "label") { result[tag.objectID] = label }
            }
            return result
        }
    }

    @Test func eightSiblingContextsRacingOnSharedObjects() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let ledger = Ledger()
        let contexts = (0..<8).map { ObjectContext(coordinator: coordinator, name: "sibling\($0)") }
        for context in contexts { await context.perform { $0.automaticallyMergesChangesFromParent = true } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, context) in contexts.enumerated() {
                group.addTask { try await Self.work(context, seed: UInt64(100 + index), rounds: 60, ledger: ledger, ownOnly: false) }
            }
            try await group.waitForAll()
        }
        #expect(ledger.otherErrors.isEmpty, "\(ledger.otherErrors.prefix(3))")
        #expect(try await Self.storedLabels(coordinator) == ledger.expected(resolving: coordinator.resolve))
        print("stress (siblings): \(ledger.conflicts) saves rejected as conflicts")
    }

    @Test func eightWorkersSavingIntoOneParent() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let writer = ObjectContext(coordinator: coordinator, name: "writer")
        let ledger = Ledger()
        let workers = (0..<8).map { ObjectContext(parent: writer, name: "worker\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, worker) in workers.enumerated() {
                group.addTask { try await Self.work(worker, seed: UInt64(200 + index), rounds: 60, ledger: ledger, ownOnly: true) }
            }
            group.addTask {
                // The root writes to disk now and then while the workers keep pushing.
                for _ in 0..<10 {
                    try await writer.perform { ctx in try ctx.save() }
                    await Task.yield()
                }
            }
            try await group.waitForAll()
        }
        try await writer.perform { ctx in try ctx.save() }
        #expect(ledger.conflicts == 0 && ledger.otherErrors.isEmpty, "\(ledger.otherErrors.prefix(3))")
        #expect(try await Self.storedLabels(coordinator) == ledger.expected(resolving: coordinator.resolve))
    }
}

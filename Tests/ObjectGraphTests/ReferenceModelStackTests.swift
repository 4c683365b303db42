import Foundation
import Testing
@testable import ObjectGraph

/// The stack checked against ``ReferenceModel``, through its own API: edits in the main context and in two workers
/// (``DataStack/newContext(name:)``), a worker's save, `stack.save()`, and `stack.background { }` blocks, in both
/// layouts. After every step every context's fetch equals the model's view of it (and main's results controller
/// lists what the model shows), and after every write to the store the store holds exactly the model's rows.
///
/// The model sees the stack as the contexts it is made of. Nested: the writer (0) is the root, main (1) its child,
/// the workers (2, 3) and a background block's context (4) children of main; `stack.save()` pushes main into the
/// writer and saves the writer; a background block saves into main, then does the same. Siblings: all five are roots
/// on one coordinator, each merging the others' saves as they happen (the stack turns automatic merging on).
///
/// `OBJECTGRAPH_MODEL_SEEDS=N` runs N seeds per layout and store (CI runs 40), `OBJECTGRAPH_MODEL_SEED=N` seed N.
@Suite struct ReferenceModelStackTests {
    static let steps = 60
    static let main = 1
    static let background = 4

    @Test(arguments: DataStack.Layout.allCases, [StoreKind.sqlite, .memory])
    func theStackAgreesWithTheReferenceModelAfterEveryStep(_ layout: DataStack.Layout, _ kind: StoreKind) async throws {
        for seed in ReferenceModelTests.seedRange.prefix(ProcessInfo.processInfo.environment["OBJECTGRAPH_MODEL_SEEDS"] == nil ? 40 : .max) {
            if try await Self.run(seed: UInt64(seed), layout: layout, kind: kind) { break }
        }
    }

    /// Runs one seed; returns whether it failed (recorded as an issue naming the seed, the layout and the step).
    static func run(seed: UInt64, layout: DataStack.Layout, kind: StoreKind) async throws -> Bool {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(ReferenceModelTests.model, folder)
        let stack = DataStack(coordinator: coordinator, layout: layout)
        let workers = [stack.newContext(name: "worker 2"), stack.newContext(name: "worker 3")]
        // The background block's context stands in the model as context 4, empty before and after each block; the
        // graph makes a new one per block, as the stack does.
        let contexts = [stack.writer, stack.main] + workers
        let parents: [Int?] = layout == .nested ? [nil, 0, 1, 1, 1] : [nil, nil, nil, nil, nil]
        var reference = ReferenceModel(parents: parents)
        // Results controllers on main and the writer; in the siblings layout the workers are roots and have one too.
        try await ReferenceModelTests.watch(layout == .nested ? [stack.writer, stack.main] : contexts)
        var random = SplitMix(state: seed &* 0x9E37_79B9 &+ 29)
        var log = ["layout \(layout) on \(kind)"]
        var nextSerial = 0
        for step in 0..<steps {
            // The writer is the stack's: the app edits main and the workers.
            let index = Int.random(in: 1...3, using: &random)
            let roll = Int.random(in: 0..<100, using: &random)
            let target = reference.view(index).keys.sorted().randomElement(using: &random)
            if try await ReferenceModelTests.edit(
                roll: roll, target: target, index: index, context: contexts[index], reference: &reference, random: &random,
                nextSerial: &nextSerial, log: &log
            ) {
                // An insert, a change, a deletion or a rollback.
            } else if roll < 85 && index == main {
                let refused = save(main, into: &reference, layout: layout) == nil
                log.append("stack.save()\(refused ? " (refused)" : "")")
                if refused {
                    await #expect(throws: ObjectGraphError.self) { try await stack.save() }
                    await startOver(&reference, stack)
                } else {
                    try await stack.save()
                }
                if try await !ReferenceModelTests.storeAgrees(coordinator, reference, seed: seed, step: step, log: log) { return true }
            } else if roll < 85 {
                let refused = save(index, into: &reference, layout: layout) == nil
                log.append("\(index): save\(refused ? " (refused)" : "")")
                if refused {
                    // Refused in both (siblings: a change to an object another root deleted meanwhile): it starts over.
                    await #expect(throws: ObjectGraphError.self) { try await contexts[index].perform { ctx in try ctx.save() } }
                    reference.rollback(index)
                    await contexts[index].perform { ctx in ctx.rollback() }
                } else {
                    try await contexts[index].perform { ctx in try ctx.save() }
                }
                if try await !ReferenceModelTests.storeAgrees(coordinator, reference, seed: seed, step: step, log: log) { return true }
            } else {
                // A background block: one insert, or a change of an object the block's context shows.
                let shown = reference.view(background).keys.sorted()
                let serial = Int.random(in: 0..<3, using: &random) == 0 ? shown.randomElement(using: &random) : nil
                let value = Int.random(in: 0..<5, using: &random)
                let inserted = serial == nil ? nextSerial : nil
                if let inserted {
                    nextSerial += 1
                    log.append("background: insert \(inserted) pages \(value)")
                    reference.insert(background, serial: inserted, values: ["title": 0, "pages": value])
                } else {
                    log.append("background: set \(serial!).pages = \(value)")
                    reference.update(background, serial: serial!, key: "pages", value: value)
                }
                let refused = save(background, into: &reference, layout: layout) == nil
                if refused { log.append("(refused)") }
                let block: @Sendable (isolated ObjectContext) throws -> Void = { ctx in
                    if let inserted {
                        let entry = try ctx.insert("Entry")
                        try entry.setValue(Int64(inserted), forKey: "serial")
                        try entry.setValue("t0", forKey: "title")
                        try entry.setValue(Int64(value), forKey: "pages")
                    } else {
                        try ReferenceModelTests.entry(serial!, in: ctx).setValue(Int64(value), forKey: "pages")
                    }
                }
                if refused {
                    await #expect(throws: ObjectGraphError.self) { try await stack.background(block) }
                    reference.rollback(background)
                    await startOver(&reference, stack)
                } else {
                    try await stack.background(block)
                }
                if try await !ReferenceModelTests.storeAgrees(coordinator, reference, seed: seed, step: step, log: log) { return true }
            }
            if try await !ReferenceModelTests.contextsAgree(contexts, reference, seed: seed, step: step, log: log) { return true }
        }
        return false
    }

    /// After a write the store refused, both start over: the stack hands the refused changes back to main (siblings:
    /// they stay in the context that saved), and the test rolls them back there.
    static func startOver(_ reference: inout ReferenceModel, _ stack: DataStack) async {
        reference.rollback(0)
        reference.rollback(main)
        if stack.layout == .siblings { reference.rollback(background) }
        await stack.main.perform { ctx in ctx.rollback() }
    }

    /// What a save of `context` through the stack does in the model; nil when its write to the store is refused.
    /// Nested: a worker's save reaches main and stops there; main's and a background block's go on through the
    /// writer to the store (a block's save pushes main's own pending changes with it, as `stack.background` saves
    /// main). Siblings: every save is a root's, merged by every other context.
    static func save(_ context: Int, into reference: inout ReferenceModel, layout: DataStack.Layout) -> (updated: [Int: ReferenceModel.Row], inserted: Set<Int>, deleted: Set<Int>)? {
        switch layout {
        case .nested:
            reference.pushToParent(context)
            guard context == main || context == background else { return ([:], [], []) }
            if context == background { reference.pushToParent(main) }
            return reference.saveRoot(0)
        case .siblings:
            guard let written = reference.saveRoot(context) else { return nil }
            for other in 0..<5 where other != context {
                reference.merge(other, updated: written.updated, inserted: written.inserted, deleted: written.deleted)
            }
            return written
        }
    }
}

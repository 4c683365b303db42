import Foundation

/// The seeds' stack: register a database file and a model once, then work on the main thread in one line and push
/// heavy work to the background without thinking about contexts.
///
/// Two layouts share the API. **Nested** (the default, as the seeds built it): a writer context on the store, the
/// main context as its child, and workers as children of main; a worker's save reaches main at a cost proportional
/// to what main has registered (not to the worker's import), and disk work happens on the writer's queue.
/// **Siblings**: writer, main and background contexts side by side on the coordinator, kept current by merging
/// did-save notifications. The same calls give the same results in both layouts.
///
/// When a write to disk fails, nothing is lost and nothing is shown that is not true:
/// - a store locked by another connection or process is waited for (the store's busy timeout, 10 s by default);
/// - a conflict with what another context or process saved is settled by ``mergePolicy``
///   (``MergePolicy/mergeByPropertyObjectTrump`` by default: this stack's changes win, key by key);
/// - any other failure (a uniqueness violation, a full disk, a store file replaced underneath) hands the changes
///   back to the main context, pending as if never saved: fix them and save again, or discard them with
///   `stack.main.perform { $0.rollback() }`. This holds for ``save()`` and for the background helpers alike: a
///   background block's changes that its save could not write wait in the main context too. Changes a block's own
///   validation refuses are discarded with the block's context.
///
/// ```swift
/// let stack = try DataStack(databaseFileName: "books.sqlite", model: Model([Book.self]))
/// DataStack.shared = stack                              // for the one-line helpers
/// let book = try Book.insert { $0.name = "拿破仑"; $0.author = "约翰史蒂芬" }
/// try await stack.save()
/// ```
public final class DataStack: Sendable {
    /// How the stack's contexts relate.
    public enum Layout: String, Sendable, CaseIterable {
        /// writer (store) <- main <- workers.
        case nested
        /// writer, main and background contexts side by side, merged by did-save.
        case siblings
    }

    /// The coordinator every context of the stack uses.
    public let coordinator: PersistentStoreCoordinator
    /// The layout.
    public let layout: Layout
    /// How the stack's contexts settle conflicts with the store when they write.
    public let mergePolicy: MergePolicy
    /// The context that writes to the store (nested) or the background root (siblings).
    public let writer: ObjectContext
    /// The main-queue context.
    public let main: ObjectContext
    /// The stack's writes to disk, one at a time (see ``SerialGate``).
    let gate = SerialGate()

    /// The folder a file name without a folder goes in: `OBJECTGRAPH_STORE_DIRECTORY` when set, else the user's
    /// Application Support folder (`~/.local/share` on Linux), created when missing.
    public static var defaultDirectory: URL {
        if let override = ProcessInfo.processInfo.environment["OBJECTGRAPH_STORE_DIRECTORY"] {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        return FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
    }

    /// Opens (or creates) the store `databaseFileName` in `directory` (``defaultDirectory`` when nil).
    public convenience init(databaseFileName: String, directory: URL? = nil, model: Model, layout: Layout = .nested) throws {
        let folder = directory ?? Self.defaultDirectory
        if directory == nil { try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let url = databaseFileName.hasPrefix("/") ? URL(fileURLWithPath: databaseFileName) : folder.appendingPathComponent(databaseFileName)
        self.init(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url), layout: layout)
    }

    /// A stack on a new in-memory store.
    public static func inMemory(model: Model, layout: Layout = .nested) -> DataStack {
        DataStack(coordinator: .inMemory(model: model), layout: layout)
    }

    /// A stack on an existing coordinator; `mergePolicy` settles conflicts with the store for every context of the
    /// stack, workers included.
    public init(coordinator: PersistentStoreCoordinator, layout: Layout = .nested, mergePolicy: MergePolicy = .mergeByPropertyObjectTrump) {
        self.coordinator = coordinator
        self.layout = layout
        self.mergePolicy = mergePolicy
        writer = ObjectContext(coordinator: coordinator, parent: nil, name: "writer", mergePolicy: mergePolicy)
        switch layout {
        case .nested:
            main = ObjectContext(coordinator: coordinator, parent: writer, concurrencyType: .mainQueue, name: "main", mergePolicy: mergePolicy)
        case .siblings:
            main = ObjectContext(coordinator: coordinator, parent: nil, concurrencyType: .mainQueue, name: "main", mergePolicy: mergePolicy)
            main.enqueue { $0.automaticallyMergesChangesFromParent = true }
            writer.enqueue { $0.automaticallyMergesChangesFromParent = true }
        }
    }

    /// A context of one's own for background work: a child of main (nested) or a root that merges what others
    /// save (siblings). Its saves go up through the stack only when ``save()`` or the background helpers push them.
    public func newContext(name: String = "worker") -> ObjectContext {
        switch layout {
        case .nested:
            return ObjectContext(coordinator: coordinator, parent: main, name: name, mergePolicy: mergePolicy)
        case .siblings:
            let context = ObjectContext(coordinator: coordinator, parent: nil, name: name, mergePolicy: mergePolicy)
            context.enqueue { $0.automaticallyMergesChangesFromParent = true }
            return context
        }
    }

    // MARK: Saving

    /// Saves main, then (nested) the writer, so everything reaches disk; the disk work runs on the writer's queue.
    /// Saving with nothing to save succeeds. When the store refuses the changes, they are pending in the main
    /// context again (see ``DataStack``).
    @MainActor
    public func save() async throws {
        try await oneAtATime {
            try onMain { ctx in try ctx.save() }
            if layout == .nested { try await writeThrough() }
        }
    }

    /// ``save()`` with a completion, called exactly once on the main actor with the first error from any level (nil
    /// on success, and also when there was nothing to save).
    @MainActor
    public func save(completion: @escaping @MainActor (Error?) -> Void) {
        Task { @MainActor in
            do {
                try await save()
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    // MARK: Background and main work

    /// Runs `body` on a new background context, saves when it returns, and pushes the save to disk; returns its
    /// result. Errors from the body or any level of saving are thrown, never swallowed. Changes the store refused
    /// are pending in the main context (see ``DataStack``); a body that throws leaves nothing anywhere.
    public func background<T: Sendable>(_ body: @escaping @Sendable (isolated ObjectContext) throws -> T) async throws -> T {
        let worker = newContext()
        switch layout {
        case .nested:
            let value = try await worker.perform { ctx in
                let value = try body(ctx)
                try ctx.save()
                return value
            }
            try await oneAtATime {
                try await main.perform { ctx in try ctx.save() }
                try await writeThrough()
            }
            return value
        case .siblings:
            let value = try await worker.perform(body)
            try await oneAtATime {
                let failure = try await worker.perform { ctx in try WriteFailure.saving(ctx.state) { [try $0.pendingChangesAsLayer()] } }
                if let failure { try await handBack(failure) }
            }
            return value
        }
    }

    /// The seeds' `asyncBackgroundInBlock:`: ``background(_:)`` with a completion called exactly once on the main
    /// actor (nil on success).
    public func asyncBackground(_ body: @escaping @Sendable (isolated ObjectContext) throws -> Void, completion: (@MainActor @Sendable (Error?) -> Void)? = nil) {
        Task {
            do {
                try await background(body)
                await MainActor.run { completion?(nil) }
            } catch {
                await MainActor.run { completion?(error) }
            }
        }
    }

    /// Runs `body` on the main context (from anywhere) and returns its result; it does not save.
    public func onMainContext<T: Sendable>(_ body: @escaping @Sendable (isolated ObjectContext) throws -> T) async throws -> T {
        try await main.perform(body)
    }

    /// The seeds' `asyncMainInBlock:`: runs `body` on the main context later; the completion runs exactly once on
    /// the main actor with the body's error, if any.
    public func asyncMain(_ body: @escaping @Sendable (isolated ObjectContext) throws -> Void, completion: (@MainActor @Sendable (Error?) -> Void)? = nil) {
        Task { @MainActor in
            do {
                try await self.main.perform(body)
                completion?(nil)
            } catch {
                completion?(error)
            }
        }
    }

    /// Runs `body` synchronously on the main context from main-actor code, returning anything, objects included.
    @MainActor
    public func onMain<T>(_ body: (MainContext) throws -> T) rethrows -> T {
        try body(MainContext(main))
    }

    // MARK: Writing to disk

    /// Runs `body` while no other write of this stack runs.
    private func oneAtATime(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Void) async throws {
        await gate.enter()
        do {
            try await body()
        } catch {
            await gate.leave()
            throw error
        }
        await gate.leave()
    }

    /// Writes what main pushed into the writer; when the store refuses it, the writer hands it back to main.
    private func writeThrough() async throws {
        let failure = try await writer.perform { ctx in try WriteFailure.saving(ctx.state) { $0.takeReceivedLayers() } }
        if let failure { try await handBack(failure) }
        // Main's inserts have permanent IDs now: its results controllers rename them at once, not at the next change.
        main.enqueue { $0.state.noteSavedBelow() }
    }

    /// Makes a failed write's changes pending in the main context again, then throws its error.
    private func handBack(_ failure: WriteFailure) async throws -> Never {
        await main.perform { ctx in ctx.state.reinstate(failure.changes) }
        throw failure.error
    }
}

/// A write the store refused, with the changes it held.
struct WriteFailure: Sendable {
    var error: any Error
    var changes: [ChangeSet]

    /// Saves `state`; when the store refuses the changes, returns them (as `unsaved` gives them) with the error.
    /// Changes refused before the store saw them (by validation or a delete rule) are not handed on: they are the
    /// saving context's to fix, and go with it.
    static func saving(_ state: ContextState, unsaved: (ContextState) throws -> [ChangeSet]) throws -> WriteFailure? {
        do {
            try state.save()
            return nil
        } catch let error as ObjectGraphError {
            switch error {
            case .validation, .deleteDenied: throw error
            default: return WriteFailure(error: error, changes: try unsaved(state))
            }
        } catch {
            return WriteFailure(error: error, changes: try unsaved(state))
        }
    }
}

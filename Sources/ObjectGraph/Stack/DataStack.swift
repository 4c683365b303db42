import Foundation

/// The seeds' stack: register a database file and a model once, then work on the main thread in one line and push
/// heavy work to the background without thinking about contexts.
///
/// Two layouts share the API. **Nested** (the default, as the seeds built it): a writer context on the store, the
/// main context as its child, and workers as children of main; a worker's save reaches main at a cost proportional
/// to what main has registered (not to the worker's import), and disk work happens on the writer's queue.
/// **Siblings**: writer, main and background contexts side by side on the coordinator, kept current by merging
/// did-save notifications.
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
    /// The context that writes to the store (nested) or the background root (siblings).
    public let writer: ObjectContext
    /// The main-queue context.
    public let main: ObjectContext

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

    /// A stack on an existing coordinator.
    public init(coordinator: PersistentStoreCoordinator, layout: Layout = .nested) {
        self.coordinator = coordinator
        self.layout = layout
        writer = ObjectContext(coordinator: coordinator, name: "writer")
        switch layout {
        case .nested:
            main = ObjectContext(parent: writer, concurrencyType: .mainQueue, name: "main")
        case .siblings:
            main = ObjectContext(coordinator: coordinator, concurrencyType: .mainQueue, name: "main")
            main.enqueue { $0.automaticallyMergesChangesFromParent = true }
            writer.enqueue { $0.automaticallyMergesChangesFromParent = true }
        }
    }

    /// A context of one's own for background work: a child of main (nested) or a root that merges what others
    /// save (siblings). Its saves go up through the stack only when ``save()`` or the background helpers push them.
    public func newContext(name: String = "worker") -> ObjectContext {
        switch layout {
        case .nested:
            return ObjectContext(parent: main, name: name)
        case .siblings:
            let context = ObjectContext(coordinator: coordinator, name: name)
            context.enqueue { $0.automaticallyMergesChangesFromParent = true }
            return context
        }
    }

    // MARK: Saving

    /// Saves main, then (nested) the writer, so everything reaches disk; the disk work runs on the writer's queue.
    /// Saving with nothing to save succeeds.
    @MainActor
    public func save() async throws {
        try onMain { ctx in try ctx.save() }
        if layout == .nested {
            try await writer.perform { ctx in try ctx.save() }
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
    /// result. Errors from the body or any level of saving are thrown, never swallowed.
    public func background<T: Sendable>(_ body: @escaping @Sendable (isolated ObjectContext) throws -> T) async throws -> T {
        let worker = newContext()
        let value = try await worker.perform { ctx in
            let value = try body(ctx)
            try ctx.save()
            return value
        }
        if layout == .nested {
            try await main.perform { ctx in try ctx.save() }
            try await writer.perform { ctx in try ctx.save() }
        }
        return value
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
}

/// How far a migration has come: which step of how many, and the entities and rows of that step copied so far.
///
/// ```swift
/// let coordinator = try PersistentStoreCoordinator(versions: versions, storeURL: url) { progress in
///     print("step \(progress.step) of \(progress.steps): \(progress.rowsDone) of \(progress.rows) rows")
/// }
/// ```
public struct MigrationProgress: Sendable, Hashable {
    /// The step under way, from 1 (each step migrates one version to the next).
    public var step: Int
    /// The steps in all.
    public var steps: Int
    /// The entity whose rows were just copied.
    public var entity: String
    /// Entities of this step copied so far, and in all.
    public var entitiesDone: Int
    public var entities: Int
    /// Rows of this step copied so far, and in all.
    public var rowsDone: Int
    public var rows: Int
    /// The time since this step began.
    public var elapsed: Duration

    /// A report, as a store's migration makes one (the PostgreSQL store's, in a module of its own).
    package init(step: Int, steps: Int, entity: String, entitiesDone: Int, entities: Int, rowsDone: Int, rows: Int, elapsed: Duration) {
        self.step = step
        self.steps = steps
        self.entity = entity
        self.entitiesDone = entitiesDone
        self.entities = entities
        self.rowsDone = rowsDone
        self.rows = rows
        self.elapsed = elapsed
    }

    /// The share of the whole migration done, from 0 to 1.
    public var fractionDone: Double {
        guard steps > 0 else { return 1 }
        let within = rows > 0 ? Double(rowsDone) / Double(rows) : (entities > 0 ? Double(entitiesDone) / Double(entities) : 1)
        return (Double(step - 1) + within) / Double(steps)
    }
}

/// Where a migration reports its progress: called on the thread that opens the store, after each entity's rows.
public typealias MigrationProgressHandler = @Sendable (MigrationProgress) -> Void

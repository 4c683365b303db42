/// Query generations, as Core Data's contexts have them: a root context pinned to a state of the store reads that
/// state (faults, fetches, relationships, counts, its children's reads) until it moves on. A save, a merge or a reset
/// moves it to the store's newest state, still pinned; ``ObjectContext/setQueryGenerationFrom(_:)`` with nil unpins.
///
/// Every store of this library keeps generations: SQLite with a read transaction (the WAL is not checkpointed past
/// the oldest pinned state until it moves on), PostgreSQL with a repeatable-read transaction on a connection of its
/// own, memory with a copy of the rows.
extension ObjectContext {
    /// Pins the context to the store as it is now (``QueryGenerationToken/current``), to another context's state
    /// (its ``queryGenerationToken``), or unpins it (nil): it reads the store as it is at each read, the default.
    ///
    /// ```swift
    /// try await main.perform { ctx in try ctx.setQueryGenerationFrom(.current) }
    /// // background saves do not change what main reads until it saves, merges or pins again
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/queryGenerationUnavailable(context:reason:)`` for a child context (it reads its
    ///   parent, pinned or not), a token of another store, or a store that keeps no generations.
    public func setQueryGenerationFrom(_ token: QueryGenerationToken?) throws {
        state.checkExecutor()
        try state.setQueryGeneration(token)
    }

    /// The generation the context reads, to pin another context to it; nil when it reads the store as it is.
    public var queryGenerationToken: QueryGenerationToken? { state.generationPin.generation.map(QueryGenerationToken.init) }
}

extension MainContext {
    /// Pins the main context to a state of the store (see ``ObjectContext/setQueryGenerationFrom(_:)``).
    public func setQueryGenerationFrom(_ token: QueryGenerationToken?) throws { try state.setQueryGeneration(token) }

    /// The generation the main context reads (see ``ObjectContext/queryGenerationToken``).
    public var queryGenerationToken: QueryGenerationToken? { state.generationPin.generation.map(QueryGenerationToken.init) }
}

extension ContextState {
    func setQueryGeneration(_ token: QueryGenerationToken?) throws {
        guard isRoot else {
            throw ObjectGraphError.queryGenerationUnavailable(
                context: name, reason: "it is a child context, which reads its parent: pin the root context instead")
        }
        guard let token else {
            generationPin.generation = nil
            return
        }
        if let generation = token.generation {
            guard generation.store === coordinator.store else {
                throw ObjectGraphError.queryGenerationUnavailable(
                    context: name, reason: "the token is of the store at \(generation.store.location), and this context reads \(coordinator.store.location)")
            }
            generationPin.generation = generation
        } else {
            generationPin.generation = try newGeneration()
        }
    }

    /// Moves a pinned context to the store's newest state, as Core Data's does at a save, a merge and a reset. If
    /// the store cannot hold a new one now, the context stays where it was (what it reads stays consistent).
    func advanceQueryGeneration() {
        guard generationPin.generation != nil else { return }
        do {
            generationPin.generation = try newGeneration()
        } catch {
            ObjectGraphLogging.logger.debug("context \(name) stays at its query generation: \(error)")
        }
    }

    private func newGeneration() throws -> StoreGeneration {
        guard let store = coordinator.store as? any QueryGenerationStore else {
            throw ObjectGraphError.queryGenerationUnavailable(context: name, reason: "the store at \(coordinator.store.location) keeps no query generations")
        }
        return try StoreGeneration(store: store)
    }
}

/// Observing results and objects from main-actor code.
extension MainContext {
    /// A controller keeping `request`'s results current in the main context (see
    /// ``ObjectContext/fetchedResultsController(for:sectionNameKeyPath:)``): its diffs arrive on the main actor.
    ///
    /// ```swift
    /// var request = Book.fetchRequest()
    /// request.sortKeys = [SortKey("name")]
    /// let books = try stack.onMain { try $0.fetchedResultsController(for: request) }
    /// books.onChange { change in tableView.apply(change) }
    /// ```
    public func fetchedResultsController(for request: FetchRequest, sectionNameKeyPath: String? = nil) throws -> FetchedResultsController {
        try state.fetchedResultsController(for: request, sectionNameKeyPath: sectionNameKeyPath, keepAlive: false)
    }

    /// A controller whose sections are named by `sectionName` (see
    /// ``ObjectContext/fetchedResultsController(for:sectionName:)``).
    public func fetchedResultsController(
        for request: FetchRequest, sectionName: @escaping (ManagedObject) throws -> String
    ) throws -> FetchedResultsController {
        try state.fetchedResultsController(for: request, sectionNameKeyPath: nil, sectionName: sectionName, keepAlive: false)
    }

    /// `request`'s results and their diffs as an AsyncSequence (see ``ObjectContext/results(of:sectionNameKeyPath:)``).
    public func results(of request: FetchRequest, sectionNameKeyPath: String? = nil) throws -> AsyncStream<FetchedResultsChange> {
        try state.results(of: request, sectionNameKeyPath: sectionNameKeyPath)
    }

    /// Runs the rules of deletions made here, then delivers the changes made since the last processing to
    /// observers, now (see ``ObjectContext/processPendingChanges()``).
    public func processPendingChanges() {
        state.propagatePendingDeletions()
        state.observation?.process()
    }
}

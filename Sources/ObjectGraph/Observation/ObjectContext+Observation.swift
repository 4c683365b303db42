/// Observing results and objects from a context.
extension ObjectContext {
    /// A controller keeping `request`'s results current in this context, fetched already. It lives on this
    /// context's queue; keep it while you want its diffs (``FetchedResultsController/cancel()`` stops them).
    ///
    /// ```swift
    /// let controller = try ctx.fetchedResultsController(for: request, sectionNameKeyPath: "author.name")
    /// controller.onChange { print($0.objectChanges) }
    /// ```
    ///
    /// Sections are runs of the sorted results with one value of `sectionNameKeyPath`: the first sort key, or any
    /// key the sort keeps together (a `month` beside a `date` sort), as Core Data requires. A `fetchLimit` and a
    /// `fetchOffset` hold at every change. Results sectioned by another key than the first sort key, or limited, are
    /// fetched again at each change that may touch them, rather than kept place by place.
    ///
    /// - Throws: ``ObjectGraphError/invalidFetch(entity:reason:)`` for a request without sort keys, an unknown key,
    ///   a sort that splits a section; the fetch's own errors.
    public func fetchedResultsController(for request: FetchRequest, sectionNameKeyPath: String? = nil) throws -> FetchedResultsController {
        try state.fetchedResultsController(for: request, sectionNameKeyPath: sectionNameKeyPath, keepAlive: false)
    }

    /// A controller whose sections are named by `sectionName`, computed from each object (Core Data's transient
    /// section identifier, such as "by month"); the sort must keep each section's objects together.
    ///
    /// ```swift
    /// let byMonth = try ctx.fetchedResultsController(for: request) { object in
    ///     monthTitle(try object.value(forKey: "date"))
    /// }
    /// ```
    public func fetchedResultsController(
        for request: FetchRequest, sectionName: @escaping (ManagedObject) throws -> String
    ) throws -> FetchedResultsController {
        try state.fetchedResultsController(for: request, sectionNameKeyPath: nil, sectionName: sectionName, keepAlive: false)
    }

    /// `request`'s results and their diffs as an AsyncSequence: the first element holds the whole results (every
    /// object inserted), each next one a diff. The context keeps the controller while the sequence is iterated.
    ///
    /// ```swift
    /// let results = try await context.perform { ctx in try ctx.results(of: request) }
    /// for await change in results { render(change.snapshot) }
    /// ```
    public func results(of request: FetchRequest, sectionNameKeyPath: String? = nil) throws -> AsyncStream<FetchedResultsChange> {
        try state.results(of: request, sectionNameKeyPath: sectionNameKeyPath)
    }

    /// Runs the rules of deletions made here (cascades, and unlinking what pointed at the deleted objects), then
    /// delivers the changes made since the last processing to observers, now (as Core Data's
    /// processPendingChanges); otherwise both happen after the work running now.
    public func processPendingChanges() {
        state.checkExecutor()
        state.processPendingChanges()
    }
}

extension ContextState {
    var observationCenter: ObservationCenter {
        if let observation { return observation }
        let center = ObservationCenter(state: self)
        observation = center
        return center
    }

    func fetchedResultsController(
        for request: FetchRequest, sectionNameKeyPath: String?, sectionName: ((ManagedObject) throws -> String)? = nil, keepAlive: Bool
    ) throws -> FetchedResultsController {
        checkExecutor()
        // Changes made before the controller exists are in its first fetch, not in a diff.
        observation?.process()
        let controller = try FetchedResultsController(request: request, sectionNameKeyPath: sectionNameKeyPath, sectionName: sectionName, state: self)
        try controller.performFetch()
        observationCenter.add(controller, keepAlive: keepAlive)
        return controller
    }

    func results(of request: FetchRequest, sectionNameKeyPath: String?) throws -> AsyncStream<FetchedResultsChange> {
        let controller = try fetchedResultsController(for: request, sectionNameKeyPath: sectionNameKeyPath, keepAlive: true)
        let stream = controller.changes
        controller.deliverInitial()
        return stream
    }
}

extension FetchedResultsController {
    /// The whole results as a first change: every object inserted into empty results.
    func deliverInitial() {
        var objectChanges: [FetchedResultsObjectChange] = []
        var differences: [CollectionDifference<ObjectID>.Change] = []
        var offset = 0
        for (section, bucket) in buckets.enumerated() {
            for (item, id) in bucket.ids.enumerated() {
                objectChanges.append(FetchedResultsObjectChange(kind: .insert, objectID: id, newIndexPath: [section, item]))
                differences.append(.insert(offset: offset, element: id, associatedWith: nil))
                offset += 1
            }
        }
        let sectionChanges = sectionNameKeyPath == nil ? [] : buckets.enumerated().map { FetchedResultsSectionChange(kind: .insert, name: $1.name, index: $0) }
        let change = FetchedResultsChange(snapshot: snapshot, sectionChanges: sectionChanges, objectChanges: objectChanges,
                                          difference: CollectionDifference(differences)!, renamedIDs: [:])
        // Delivered even when empty: the first element says what the results are.
        deliverAlways(change)
    }
}

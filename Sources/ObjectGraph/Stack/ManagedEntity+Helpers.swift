import Foundation

/// The seeds' one-line helpers, on the main context. They are main-actor isolated: calling them off the main actor
/// does not compile (the seeds threw at run time).
extension ManagedEntity {
    /// Inserts an object into the main context and fills it (the seeds' `insertItemWithFillingBlock:`).
    ///
    /// ```swift
    /// let book = try Book.insert { $0.name = "拿破仑"; $0.author = "约翰史蒂芬" }
    /// ```
    @MainActor @discardableResult
    public static func insert(into stack: DataStack? = nil, _ fill: (Self) throws -> Void) throws -> Self {
        let stack = try DataStack.current(stack)
        return try stack.onMain { ctx in
            let object = try ctx.insert(Self.self)
            try fill(object)
            return object
        }
    }

    /// The objects matching a format, in primary-key order (the seeds' `itemsWithFormat:`).
    @MainActor
    public static func items(in stack: DataStack? = nil, where format: String, _ arguments: Any?...) throws -> [Self] {
        try filter(in: stack, format: format, arguments: arguments, orderBy: [], offset: 0, limit: nil)
    }

    /// The objects matching a format, ordered by keys (`"-pages"` descends), sliced
    /// (the seeds' `filter:orderby:offset:limit:`).
    @MainActor
    public static func filter(
        in stack: DataStack? = nil, where format: String? = nil, _ arguments: Any?..., orderBy: [String] = [], offset: Int = 0, limit: Int? = nil
    ) throws -> [Self] {
        try filter(in: stack, format: format, arguments: arguments, orderBy: orderBy, offset: offset, limit: limit)
    }

    /// The first object matching a format in a defined order: `orderBy`, then primary key (the seeds' first
    /// was arbitrary).
    @MainActor
    public static func first(in stack: DataStack? = nil, where format: String? = nil, _ arguments: Any?..., orderBy: [String] = []) throws -> Self? {
        try firstObject(in: stack, format: format, arguments: arguments, orderBy: orderBy)
    }

    /// The last object matching a format in the same defined order (the seeds' `lastItemWithFormat:`, whose
    /// order was arbitrary).
    @MainActor
    public static func last(in stack: DataStack? = nil, where format: String? = nil, _ arguments: Any?..., orderBy: [String] = []) throws -> Self? {
        try lastObject(in: stack, format: format, arguments: arguments, orderBy: orderBy)
    }

    /// The one object matching a format, or nil when none does.
    @MainActor
    public static func one(in stack: DataStack? = nil, where format: String, _ arguments: Any?...) throws -> Self? {
        try firstObject(in: stack, format: format, arguments: arguments, orderBy: [])
    }

    /// Deletes objects of the main context (the seeds' `deleteDataItemSet:`).
    @MainActor
    public static func delete(_ objects: some Sequence<Self>, in stack: DataStack? = nil) throws {
        let stack = try DataStack.current(stack)
        try stack.onMain { ctx in
            for object in objects { try ctx.delete(object) }
        }
    }

    /// Deletes this object from the main context (the seeds' `deleteDataItem:`).
    @MainActor
    public func delete(in stack: DataStack? = nil) throws {
        let stack = try DataStack.current(stack)
        try stack.onMain { ctx in try ctx.delete(self) }
    }

    /// A request for this entity; ties in any order fall back to primary-key order (unsaved objects last, as
    /// inserted), the defined order the seeds lacked.
    static func request(format: String?, arguments: [Any?], orderBy: [String], offset: Int, limit: Int?) throws -> FetchRequest {
        guard format != nil || arguments.isEmpty else {
            // A request handed to the variadic arguments (`fetch(Book.self, request)` before the overload taking one)
            // would otherwise select every object.
            throw ObjectGraphError.invalidFetch(
                entity: entityName,
                reason: "\(arguments.count) format argument(s) were given without a format (\(arguments.map { String(describing: $0.map { type(of: $0) }) }.joined(separator: ", "))): "
                    + "give the format (where: \"title == %@\"), or pass a FetchRequest as fetch(request, as: \(entityName).self)")
        }
        var request = fetchRequest()
        if let format { request.predicate = try FormatPredicate(format: format, argumentArray: arguments) }
        if !orderBy.isEmpty { request.sortKeys = orderBy.map { SortKey($0) } }
        request.fetchOffset = offset
        request.fetchLimit = limit
        return request
    }

    /// The first object of a request limited to one, fetched untyped and cast once: a typed array for one object
    /// cost a generic array's metadata and witness look-ups on every call, a twentieth of a screen's small query.
    @MainActor
    static func firstObject(in stack: DataStack?, format: String?, arguments: [Any?], orderBy: [String]) throws -> Self? {
        let request = try request(format: format, arguments: arguments, orderBy: orderBy, offset: 0, limit: 1)
        guard let object = try DataStack.current(stack).firstObject(request) else { return nil }
        return object as? Self
    }

    @MainActor
    static func lastObject(in stack: DataStack?, format: String?, arguments: [Any?], orderBy: [String]) throws -> Self? {
        if orderBy.isEmpty {
            let request = try request(format: format, arguments: arguments, orderBy: [], offset: 0, limit: nil)
            let stack = try DataStack.current(stack)
            return try stack.onMain { ctx in
                guard let id = try ctx.fetchObjectIDs(request).last else { return nil }
                return try ctx.existingObject(with: id) as? Self
            }
        }
        let reversed = orderBy.map { $0.hasPrefix("-") ? String($0.dropFirst()) : "-" + $0 }
        return try firstObject(in: stack, format: format, arguments: arguments, orderBy: reversed)
    }

    @MainActor
    static func filter(in stack: DataStack?, format: String?, arguments: [Any?], orderBy: [String], offset: Int, limit: Int?) throws -> [Self] {
        let request = try request(format: format, arguments: arguments, orderBy: orderBy, offset: offset, limit: limit)
        let stack = try DataStack.current(stack)
        return try stack.onMain { ctx in try ctx.fetch(request, as: Self.self) }
    }
}

extension DataStack {
    /// The first object a request selects in the main context. Outside the generic helpers: a closure of theirs
    /// built generic metadata for its result type on every call (a fortieth of a screen's small query).
    @MainActor
    func firstObject(_ request: FetchRequest) throws -> ManagedObject? {
        try onMain { ctx in try ctx.fetch(request).first }
    }

    /// The seeds' asynchronous filter: the fetch runs on a worker; the results come back as main-context objects
    /// (handed over by ID, loaded in one read).
    @MainActor
    public func filter<T: ManagedEntity>(
        _ type: T.Type, where format: String? = nil, _ arguments: Any?..., orderBy: [String] = [], offset: Int = 0, limit: Int? = nil
    ) async throws -> [T] {
        try await filter(try T.request(format: format, arguments: arguments, orderBy: orderBy, offset: offset, limit: limit), as: type)
    }

    @MainActor
    func filter<T: ManagedEntity>(_ request: FetchRequest, as type: T.Type) async throws -> [T] {
        // A nested worker reads through main and sees its unsaved changes; a sibling worker reads only the store.
        // While main has unsaved changes, the siblings layout asks main itself: the same results in both layouts.
        if layout == .siblings, onMain({ $0.hasChanges }) {
            return try onMain { ctx in try ctx.fetch(request, as: T.self) }
        }
        let ids = try await newContext(name: "filter").perform { ctx in try ctx.fetchObjectIDs(request) }
        return try onMain { ctx in try ctx.state.materialize(ids).compactMap { $0 as? T } }
    }

    /// The asynchronous filter with a completion called exactly once on the main actor, also for no results and
    /// for errors.
    @MainActor
    public func filter<T: ManagedEntity>(
        _ type: T.Type, where format: String? = nil, _ arguments: Any?..., orderBy: [String] = [], offset: Int = 0, limit: Int? = nil,
        completion: @escaping @MainActor ([T], Error?) -> Void
    ) {
        // Parse now, on the caller's actor: the arguments need not be Sendable.
        let request: FetchRequest
        do {
            request = try T.request(format: format, arguments: arguments, orderBy: orderBy, offset: offset, limit: limit)
        } catch {
            Task { @MainActor in completion([], error) }
            return
        }
        Task { @MainActor in
            do {
                completion(try await self.filter(request, as: type), nil)
            } catch {
                completion([], error)
            }
        }
    }
}

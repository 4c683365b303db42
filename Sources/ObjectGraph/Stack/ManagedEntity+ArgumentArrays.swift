/// The helpers with their format arguments in an array, as NSPredicate's `argumentArray:` takes them: for
/// arguments gathered at run time, which a variadic call cannot spread.
///
/// ```swift
/// let names: [Any?] = ["拿破仑", 100]
/// let books = try Book.items(where: "name = %@ AND pages > %d", argumentArray: names)
/// ```
extension ManagedEntity {
    /// ``items(in:where:_:)`` with an argument array.
    @MainActor
    public static func items(in stack: DataStack? = nil, where format: String, argumentArray arguments: [Any?]) throws -> [Self] {
        try filter(in: stack, format: format, arguments: arguments, orderBy: [], offset: 0, limit: nil)
    }

    /// ``filter(in:where:_:orderBy:offset:limit:)`` with an argument array.
    @MainActor
    public static func filter(
        in stack: DataStack? = nil, where format: String?, argumentArray arguments: [Any?], orderBy: [String] = [], offset: Int = 0, limit: Int? = nil
    ) throws -> [Self] {
        try filter(in: stack, format: format, arguments: arguments, orderBy: orderBy, offset: offset, limit: limit)
    }

    /// ``first(in:where:_:orderBy:)`` with an argument array.
    @MainActor
    public static func first(in stack: DataStack? = nil, where format: String?, argumentArray arguments: [Any?], orderBy: [String] = []) throws -> Self? {
        try firstObject(in: stack, format: format, arguments: arguments, orderBy: orderBy)
    }

    /// ``last(in:where:_:orderBy:)`` with an argument array.
    @MainActor
    public static func last(in stack: DataStack? = nil, where format: String?, argumentArray arguments: [Any?], orderBy: [String] = []) throws -> Self? {
        try lastObject(in: stack, format: format, arguments: arguments, orderBy: orderBy)
    }

    /// ``one(in:where:_:)`` with an argument array.
    @MainActor
    public static func one(in stack: DataStack? = nil, where format: String, argumentArray arguments: [Any?]) throws -> Self? {
        try firstObject(in: stack, format: format, arguments: arguments, orderBy: [])
    }
}

extension DataStack {
    /// The asynchronous ``filter(_:where:_:orderBy:offset:limit:)`` with an argument array.
    @MainActor
    public func filter<T: ManagedEntity>(
        _ type: T.Type, where format: String?, argumentArray arguments: [Any?], orderBy: [String] = [], offset: Int = 0, limit: Int? = nil
    ) async throws -> [T] {
        try await filter(try T.request(format: format, arguments: arguments, orderBy: orderBy, offset: offset, limit: limit), as: type)
    }
}

extension ObjectContext {
    /// ``fetch(_:sortedBy:where:_:)`` with an argument array.
    public func fetch<T: ManagedEntity>(_ type: T.Type, sortedBy sortKeys: [String] = [], where format: String?, argumentArray arguments: [Any?]) throws -> [T] {
        try fetch(try T.request(format: format, arguments: arguments, orderBy: sortKeys, offset: 0, limit: nil), as: T.self)
    }
}

extension MainContext {
    /// ``fetch(_:sortedBy:where:_:)`` with an argument array.
    public func fetch<T: ManagedEntity>(_ type: T.Type, sortedBy sortKeys: [String] = [], where format: String?, argumentArray arguments: [Any?]) throws -> [T] {
        try fetch(try T.request(format: format, arguments: arguments, orderBy: sortKeys, offset: 0, limit: nil), as: T.self)
    }
}

extension FetchRequest {
    /// A request whose predicate is a format string with an array of arguments.
    public init(entityName: String, format: String, argumentArray arguments: [Any?]) throws {
        self.init(entityName: entityName, predicate: try FormatPredicate(format: format, argumentArray: arguments))
    }
}

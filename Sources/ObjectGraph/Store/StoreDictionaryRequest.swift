import PredicateFormat

/// A property of a dictionary result: a key path's value, an aggregate of one, or an expression.
public struct FetchProperty: Sendable, Hashable {
    /// The aggregate functions of dictionary results.
    public enum Function: String, Sendable, Hashable {
        case count, sum, avg, min, max
    }

    /// The key in each result dictionary.
    public var name: String
    /// The key path read (empty for `count` of rows).
    public var keyPath: [String]
    /// The aggregate applied, or nil for the plain value.
    public var function: Function?
    /// A computed value (NSExpressionDescription's expression), in place of `keyPath` and `function`.
    public var expression: FormatExpression?

    /// The value of `keyPath`, under its own name.
    public static func attribute(_ keyPath: String) -> FetchProperty {
        FetchProperty(name: keyPath, keyPath: keyPath.split(separator: ".").map(String.init), function: nil)
    }

    /// An aggregate (Core Data's NSExpressionDescription): `.aggregate("total", .sum, of: "pages")`.
    public static func aggregate(_ name: String, _ function: Function, of keyPath: String = "") -> FetchProperty {
        FetchProperty(name: name, keyPath: keyPath.split(separator: ".").map(String.init), function: function)
    }

    /// A computed value under `name`, as NSExpressionDescription gives one. An aggregate function of a value of
    /// each object reduces the group's objects (`sum:(pages)` is the group's total); one of a collection reduces
    /// it per object (`sum:(chapters.pages)`); arithmetic combines either.
    ///
    /// ```swift
    /// request.propertiesToFetch = [
    ///     .attribute("author.name"),
    ///     try .expression("total", "sum:(pages)"),
    ///     try .expression("doubled", "sum:(pages) * 2"),
    /// ]
    /// request.propertiesToGroupBy = ["author.name"]
    /// ```
    public static func expression(_ name: String, _ expression: FormatExpression) -> FetchProperty {
        FetchProperty(name: name, keyPath: [], function: nil, expression: expression)
    }

    /// A computed value parsed from the format language (see ``expression(_:_:)-swift.type.method``).
    ///
    /// - Throws: `FormatPredicateError` naming the offset of a malformed format.
    public static func expression(_ name: String, _ format: String, _ arguments: Any?...) throws -> FetchProperty {
        .expression(name, try FormatExpression(format: format, argumentArray: arguments))
    }
}

/// A dictionary fetch as a store sees it.
public struct StoreDictionaryRequest: Sendable {
    /// The rows considered.
    public var fetch: StoreFetchRequest
    /// What each result holds.
    public var properties: [FetchProperty]
    /// Key paths whose values form the groups.
    public var groupBy: [String] = []
    /// A condition on the result's own keys (aggregates included), applied after grouping.
    public var having: FormatPredicate?
    /// Whether equal results appear once.
    public var distinct = false

    /// Creates a dictionary request.
    public init(fetch: StoreFetchRequest, properties: [FetchProperty]) {
        self.fetch = fetch
        self.properties = properties
    }
}

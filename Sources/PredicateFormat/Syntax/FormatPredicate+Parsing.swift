extension FormatPredicate {
    /// Parses a format string, substituting `%@`, `%K`, `%d`... with `arguments` in order.
    ///
    /// ```swift
    /// let p = try FormatPredicate("name BEGINSWITH[cd] %@ AND ANY tags.label IN %@", "na", ["a", "b"])
    /// ```
    ///
    /// - Throws: ``FormatPredicateError/syntax(offset:message:)`` or ``FormatPredicateError/argument(offset:message:)``,
    ///   naming what was expected where.
    public init(_ format: String, _ arguments: Any?...) throws(FormatPredicateError) {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses a format string with an array of arguments.
    public init(format: String, argumentArray: [Any?]) throws(FormatPredicateError) {
        var parser = try Parser(format, arguments: argumentArray)
        self = try parser.parse()
    }
}

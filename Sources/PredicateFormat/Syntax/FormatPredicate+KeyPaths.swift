extension FormatPredicate {
    /// The predicate with every key path from the evaluated object replaced by `transform`'s answer; key paths
    /// from variables (`$b.title`) and the key after a collection operator stay as they are.
    ///
    /// A grouped result names a value by its whole key path (`"author.name"`), so a having condition on it reads
    /// that one key rather than walking a relationship:
    ///
    /// ```swift
    /// let having = try FormatPredicate("author.name BEGINSWITH 'anna'")
    /// let onResult = try having.mappingKeyPaths { [$0.joined(separator: ".")] }   // one key, "author.name"
    /// ```
    public func mappingKeyPaths(_ transform: ([String]) throws -> [String]) rethrows -> FormatPredicate {
        try rewritten { expression, _ in
            guard case .keyPath(let path) = expression else { return nil }
            return .keyPath(try transform(path))
        }
    }
}

extension FormatExpression {
    /// The expression with every key path from the evaluated object replaced (see
    /// ``FormatPredicate/mappingKeyPaths(_:)``).
    public func mappingKeyPaths(_ transform: ([String]) throws -> [String]) rethrows -> FormatExpression {
        try rewritten { expression, _ in
            guard case .keyPath(let path) = expression else { return nil }
            return .keyPath(try transform(path))
        }
    }
}

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
        switch self {
        case .constant: self
        case .not(let inner): .not(try inner.mappingKeyPaths(transform))
        case .and(let parts): .and(try parts.map { try $0.mappingKeyPaths(transform) })
        case .or(let parts): .or(try parts.map { try $0.mappingKeyPaths(transform) })
        case .comparison(var comparison):
            try {
                comparison.left = try comparison.left.mappingKeyPaths(transform)
                comparison.right = try comparison.right.mappingKeyPaths(transform)
                return .comparison(comparison)
            }()
        }
    }
}

extension FormatExpression {
    /// The expression with every key path from the evaluated object replaced (see
    /// ``FormatPredicate/mappingKeyPaths(_:)``).
    public func mappingKeyPaths(_ transform: ([String]) throws -> [String]) rethrows -> FormatExpression {
        switch self {
        case .constant, .evaluatedObject, .variable: self
        case .keyPath(let path): .keyPath(try transform(path))
        case .member(let base, let path): .member(try base.mappingKeyPaths(transform), path)
        case .aggregate(let items): .aggregate(try items.map { try $0.mappingKeyPaths(transform) })
        case .collection(let op, let base, let key): .collection(op, of: try base.mappingKeyPaths(transform), key: key)
        case .subquery(let collection, let variable, let predicate):
            .subquery(collection: try collection.mappingKeyPaths(transform), variable: variable, predicate: try predicate.mappingKeyPaths(transform))
        }
    }
}

extension FormatPredicate {
    /// Replaces `$name` variables with values (Swift values as for `%@`); variables a SUBQUERY binds stay.
    ///
    /// ```swift
    /// let template = try FormatPredicate("author = $who")
    /// let bound = try template.withSubstitutionVariables(["who": "约翰史蒂芬"])
    /// ```
    public func withSubstitutionVariables(_ values: [String: Any?]) throws(FormatPredicateError) -> FormatPredicate {
        var converted: [String: FormatExpression] = [:]
        for (name, value) in values {
            guard let expression = ArgumentConversion.expression(value) else {
                throw .argument(offset: 0, message: "variable $\(name) has a value of type \(ArgumentConversion.typeName(ArgumentConversion.unwrap(value))) that a predicate cannot use")
            }
            converted[name] = expression
        }
        return substituting(converted, bound: [])
    }

    func substituting(_ values: [String: FormatExpression], bound: Set<String>) -> FormatPredicate {
        switch self {
        case .constant: self
        case .not(let inner): .not(inner.substituting(values, bound: bound))
        case .and(let parts): .and(parts.map { $0.substituting(values, bound: bound) })
        case .or(let parts): .or(parts.map { $0.substituting(values, bound: bound) })
        case .comparison(var comparison):
            {
                comparison.left = comparison.left.substituting(values, bound: bound)
                comparison.right = comparison.right.substituting(values, bound: bound)
                return .comparison(comparison)
            }()
        }
    }
}

extension FormatExpression {
    func substituting(_ values: [String: FormatExpression], bound: Set<String>) -> FormatExpression {
        switch self {
        case .constant, .evaluatedObject, .keyPath: self
        case .variable(let name): bound.contains(name) ? self : (values[name] ?? self)
        case .member(let base, let path): .member(base.substituting(values, bound: bound), path)
        case .aggregate(let items): .aggregate(items.map { $0.substituting(values, bound: bound) })
        case .collection(let op, let base, let key): .collection(op, of: base.substituting(values, bound: bound), key: key)
        case .subquery(let collection, let variable, let predicate):
            .subquery(collection: collection.substituting(values, bound: bound), variable: variable,
                      predicate: predicate.substituting(values, bound: bound.union([variable])))
        }
    }
}

extension FormatPredicate {
    /// The `$variables` the predicate reads that no SUBQUERY binds: what ``withSubstitutionVariables(_:)`` must fill
    /// before the predicate can be evaluated.
    ///
    /// ```swift
    /// try FormatPredicate("author == $who AND SUBQUERY(tags, $t, $t.label == $label).@count > 0").unboundVariables
    /// // ["who", "label"]
    /// ```
    public var unboundVariables: Set<String> {
        // A TERNARY holds the predicate, so the expression's walk reads it.
        FormatExpression.ternary(self, .constant(.null), .constant(.null)).unboundVariables
    }
}

extension FormatExpression {
    /// The `$variables` the expression reads that no SUBQUERY inside it binds.
    public var unboundVariables: Set<String> {
        var names: Set<String> = []
        _ = rewritten { expression, bound in
            if case .variable(let name) = expression, !bound.contains(name) { names.insert(name) }
            return nil
        }
        return names
    }
}

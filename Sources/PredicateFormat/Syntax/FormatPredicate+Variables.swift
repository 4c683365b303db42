extension FormatPredicate {
    /// The `$variables` the predicate reads that no SUBQUERY binds: what ``withSubstitutionVariables(_:)`` must fill
    /// before the predicate can be evaluated.
    ///
    /// ```swift
    /// try FormatPredicate("author == $who AND SUBQUERY(tags, $t, $t.label == $label).@count > 0").unboundVariables
    /// // ["who", "label"]
    /// ```
    public var unboundVariables: Set<String> { variables(bound: []) }

    func variables(bound: Set<String>) -> Set<String> {
        switch self {
        case .constant: []
        case .not(let inner): inner.variables(bound: bound)
        case .and(let parts), .or(let parts): parts.reduce(into: []) { $0.formUnion($1.variables(bound: bound)) }
        case .comparison(let comparison): comparison.left.variables(bound: bound).union(comparison.right.variables(bound: bound))
        }
    }
}

extension FormatExpression {
    func variables(bound: Set<String>) -> Set<String> {
        switch self {
        case .constant, .evaluatedObject, .keyPath: []
        case .variable(let name): bound.contains(name) ? [] : [name]
        case .member(let base, _), .collection(_, let base, _): base.variables(bound: bound)
        case .aggregate(let items): items.reduce(into: []) { $0.formUnion($1.variables(bound: bound)) }
        case .subquery(let collection, let variable, let predicate):
            collection.variables(bound: bound).union(predicate.variables(bound: bound.union([variable])))
        }
    }
}

/// One walk over the tree for every rewrite (key paths mapped, variables substituted or listed), so a new kind
/// of node is taught to it once.
extension FormatPredicate {
    /// The predicate rebuilt with `transform` asked first at every expression: a node it answers is replaced by
    /// the answer, a node it answers nil for is rebuilt from its rewritten parts. `bound` holds the variables the
    /// enclosing SUBQUERYs bind.
    func rewritten(
        bound: Set<String> = [], _ transform: (FormatExpression, Set<String>) throws -> FormatExpression?
    ) rethrows -> FormatPredicate {
        switch self {
        case .constant: self
        case .not(let inner): .not(try inner.rewritten(bound: bound, transform))
        case .and(let parts): .and(try parts.map { try $0.rewritten(bound: bound, transform) })
        case .or(let parts): .or(try parts.map { try $0.rewritten(bound: bound, transform) })
        case .comparison(var comparison):
            try {
                comparison.left = try comparison.left.rewritten(bound: bound, transform)
                comparison.right = try comparison.right.rewritten(bound: bound, transform)
                return .comparison(comparison)
            }()
        }
    }
}

extension FormatPredicate {
    /// The first key of every key path the predicate reads from the object it judges (not from a SUBQUERY's
    /// variable): the object's attributes and relationships it depends on.
    package var keyPathHeads: Set<String> {
        var heads: Set<String> = []
        _ = rewritten { expression, _ in
            switch expression {
            case .keyPath(let path), .member(.evaluatedObject, let path): if let first = path.first { heads.insert(first) }
            default: break
            }
            return nil
        }
        return heads
    }
}

extension FormatExpression {
    /// The expression rebuilt as ``FormatPredicate/rewritten(bound:_:)`` describes.
    func rewritten(
        bound: Set<String> = [], _ transform: (FormatExpression, Set<String>) throws -> FormatExpression?
    ) rethrows -> FormatExpression {
        if let replacement = try transform(self, bound) { return replacement }
        func walk(_ expression: FormatExpression) throws -> FormatExpression { try expression.rewritten(bound: bound, transform) }
        switch self {
        case .constant, .evaluatedObject, .keyPath, .variable: return self
        case .member(let base, let path): return .member(try walk(base), path)
        case .aggregate(let items): return .aggregate(try items.map(walk))
        case .collection(let op, let base, let key): return .collection(op, of: try walk(base), key: key)
        case .subquery(let collection, let variable, let predicate):
            return .subquery(collection: try walk(collection), variable: variable,
                             predicate: try predicate.rewritten(bound: bound.union([variable]), transform))
        case .function(let function, let arguments): return .function(function, try arguments.map(walk))
        case .subscripted(let base, let position):
            switch position {
            case .index(let index): return .subscripted(try walk(base), .index(try walk(index)))
            default: return .subscripted(try walk(base), position)
            }
        case .ternary(let condition, let then, let otherwise):
            return .ternary(try condition.rewritten(bound: bound, transform), try walk(then), try walk(otherwise))
        }
    }
}

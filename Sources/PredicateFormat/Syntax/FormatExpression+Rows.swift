/// How an expression reads in a dictionary result, where an aggregate function of a per-row value reduces the
/// rows of a group (`sum:(pages)` is the group's total, as NSExpressionDescription computes it), while one of a
/// collection reduces that collection on each row (`sum:(books.pages)`).
extension FormatExpression {
    /// Whether the expression yields a collection for each object: a literal collection, a key path through a
    /// to-many relationship, `@distinctUnionOfObjects`, `mode:` or SUBQUERY.
    ///
    /// - Parameter isToMany: whether a key path from the object crosses a to-many relationship.
    public func yieldsCollection(isToMany: ([String]) -> Bool) -> Bool {
        switch self {
        case .aggregate, .subquery, .collection(.distinctUnionOfObjects, _, _), .function(.mode, _): true
        case .keyPath(let path): isToMany(path)
        default: false
        }
    }

    /// Whether the expression reduces the rows of a group: it holds an aggregate function of a per-row value.
    public func aggregatesRows(isToMany: ([String]) -> Bool) -> Bool {
        var found = false
        _ = rewritten { expression, _ in
            if case .function(let function, let arguments) = expression, function.isAggregate,
               !arguments[0].yieldsCollection(isToMany: isToMany) {
                found = true
            }
            if case .subquery = expression { return expression }
            return nil
        }
        return found
    }
}

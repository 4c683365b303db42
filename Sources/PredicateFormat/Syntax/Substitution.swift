extension FormatPredicate {
    /// Replaces `$name` variables with values (Swift values as for `%@`); variables a SUBQUERY binds stay.
    ///
    /// ```swift
    /// let template = try FormatPredicate("author = $who")
    /// let bound = try template.withSubstitutionVariables(["who": "约翰史蒂芬"])
    /// ```
    public func withSubstitutionVariables(_ values: [String: Any?]) throws(FormatPredicateError) -> FormatPredicate {
        substituting(try Substitution.convert(values))
    }

    func substituting(_ values: [String: FormatExpression]) -> FormatPredicate {
        rewritten { expression, bound in
            guard case .variable(let name) = expression, !bound.contains(name) else { return nil }
            return values[name]
        }
    }
}

extension FormatExpression {
    /// Replaces `$name` variables with values (Swift values as for `%@`); variables a SUBQUERY binds stay.
    ///
    /// ```swift
    /// let total = try FormatExpression("pages * $factor").withSubstitutionVariables(["factor": 2])
    /// ```
    public func withSubstitutionVariables(_ values: [String: Any?]) throws(FormatPredicateError) -> FormatExpression {
        let converted = try Substitution.convert(values)
        return rewritten { expression, bound in
            guard case .variable(let name) = expression, !bound.contains(name) else { return nil }
            return converted[name]
        }
    }
}

enum Substitution {
    static func convert(_ values: [String: Any?]) throws(FormatPredicateError) -> [String: FormatExpression] {
        var converted: [String: FormatExpression] = [:]
        for (name, value) in values {
            guard let expression = ArgumentConversion.expression(value) else {
                throw .argument(offset: 0, message: "variable $\(name) has a value of type \(ArgumentConversion.typeName(ArgumentConversion.unwrap(value))) that a predicate cannot use")
            }
            converted[name] = expression
        }
        return converted
    }
}

extension FormatPredicate {
    /// Replaces each `$name.key.path` by what `value` answers for its key path (nil leaves it): a fetched property's
    /// `code == $FETCH_SOURCE.countryCode` reads the source object's own values before the fetch compiles.
    package func substitutingMembers(
        of name: String, _ value: ([String]) throws -> FormatExpression?
    ) rethrows -> FormatPredicate {
        try rewritten { expression, bound in
            guard case .member(.variable(name), let path) = expression, !bound.contains(name) else { return nil }
            return try value(path)
        }
    }
}

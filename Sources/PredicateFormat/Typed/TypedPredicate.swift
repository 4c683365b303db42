import Foundation

extension FormatPredicate {
    /// Translates a Foundation `#Predicate` into the same tree the format language parses to, so typed and format
    /// predicates run through one engine.
    ///
    /// `keyPathNames` names the stored property behind each key path (for macro entities, their `_keyPathNames`).
    /// Translated: `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||`, `!`, optional chaining (`$0.author?.name`), `nil`,
    /// captured values, `starts(with:)`, `contains` (of a value, and `contains(where:)`), `allSatisfy`, force
    /// unwraps, arithmetic (`+ - * / %` and unary minus; integer `/` truncates, as Swift's does), `??` and
    /// conditionals (both as `TERNARY`). Anything else (casts, regexes, `filter`, and `localizedStandardContains`,
    /// which Foundation on Linux does not offer) throws ``FormatPredicateError/unsupported(_:)`` naming the part.
    ///
    /// ```swift
    /// let typed = #Predicate<Book> { $0.pages > 100 && $0.author?.name == "约翰史蒂芬" }
    /// let tree = try FormatPredicate(typed) { Book._keyPathNames[$0] }
    /// // pages > 100 AND author.name == "约翰史蒂芬"
    /// let doubled = try FormatPredicate(#Predicate<Book> { $0.pages * 2 > ($0.limit ?? 800) }) { Book._keyPathNames[$0] }
    /// // pages * 2 > TERNARY(limit != NIL, limit, 800)
    /// ```
    public init<Input>(_ predicate: Predicate<Input>, keyPathNames: @escaping (AnyKeyPath) -> String?) throws(FormatPredicateError) {
        var translation = PredicateTranslation(keyPathNames: keyPathNames)
        translation.aliases[predicate.variable.key] = .evaluatedObject
        self = try translation.predicate(predicate.expression)
    }
}

/// The state of one translation: what each Foundation variable stands for.
struct PredicateTranslation {
    let keyPathNames: (AnyKeyPath) -> String?
    var aliases: [PredicateExpressions.VariableID: FormatExpression] = [:]
    var counter = 0

    init(keyPathNames: @escaping (AnyKeyPath) -> String?) { self.keyPathNames = keyPathNames }

    mutating func node(_ part: Any) throws(FormatPredicateError) -> TranslatedNode {
        guard let translatable = part as? any TypedPredicatePart else {
            throw .unsupported("the #Predicate part \(Self.name(of: part)) has no equivalent in the predicate language")
        }
        return try translatable.translate(&self)
    }

    mutating func predicate(_ part: Any) throws(FormatPredicateError) -> FormatPredicate {
        switch try node(part) {
        case .predicate(let predicate): return predicate
        case .expression(.constant(.bool(let value))): return .constant(value)
        case .expression(let expression): return .comparison(Comparison(expression, .equal, .constant(.bool(true))))
        }
    }

    mutating func expression(_ part: Any) throws(FormatPredicateError) -> FormatExpression {
        switch try node(part) {
        case .expression(let expression): return expression
        case .predicate(let predicate): throw .unsupported("a condition (\(predicate)) used as a value")
        }
    }

    mutating func newVariable() -> String {
        counter += 1
        return "v\(counter)"
    }

    static func name(of part: Any) -> String {
        let full = "\(type(of: part))"
        return String(full.prefix { $0 != "<" })
    }
}

enum TranslatedNode {
    case predicate(FormatPredicate)
    case expression(FormatExpression)
}

/// A Foundation predicate expression that has a counterpart in the format language.
protocol TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode
}

extension PredicateExpressions.Variable: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        guard let alias = translation.aliases[key] else { throw .unsupported("a #Predicate variable outside its scope") }
        return .expression(alias)
    }
}

extension PredicateExpressions.KeyPath: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        let base = try translation.expression(root)
        guard let name = translation.keyPathNames(keyPath) else {
            throw .unsupported("the key path \(keyPath) does not name a persisted property")
        }
        switch base {
        case .evaluatedObject: return .expression(.keyPath([name]))
        case .keyPath(let path): return .expression(.keyPath(path + [name]))
        case .member(let inner, let path): return .expression(.member(inner, path + [name]))
        default: return .expression(.member(base, [name]))
        }
    }
}

extension PredicateExpressions.Value: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        guard let expression = ArgumentConversion.expression(value) else {
            throw .unsupported("the captured value of type \(Output.self) has no literal form")
        }
        return .expression(expression)
    }
}

extension PredicateExpressions.NilLiteral: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        .expression(.constant(.null))
    }
}

extension PredicateExpressions.ForcedUnwrap: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        try translation.node(inner)
    }
}

extension PredicateExpressions.OptionalFlatMap: TypedPredicatePart {
    /// `$0.author?.name`: the transform's variable stands for the wrapped key path.
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        translation.aliases[variable.key] = try translation.expression(wrapped)
        return try translation.node(transform)
    }
}

extension PredicateExpressions.Equal: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        .predicate(.comparison(Comparison(try translation.expression(lhs), .equal, try translation.expression(rhs))))
    }
}

extension PredicateExpressions.NotEqual: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        .predicate(.comparison(Comparison(try translation.expression(lhs), .notEqual, try translation.expression(rhs))))
    }
}

extension PredicateExpressions.Comparison: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        let op: Comparison.Operator = switch self.op {
        case .lessThan: .less
        case .lessThanOrEqual: .lessOrEqual
        case .greaterThan: .greater
        case .greaterThanOrEqual: .greaterOrEqual
        @unknown default: .equal
        }
        return .predicate(.comparison(Comparison(try translation.expression(lhs), op, try translation.expression(rhs))))
    }
}

extension PredicateExpressions.Conjunction: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        var parts: [FormatPredicate] = []
        for side in [try translation.predicate(lhs), try translation.predicate(rhs)] {
            if case .and(let inner) = side { parts += inner } else { parts.append(side) }
        }
        return .predicate(.and(parts))
    }
}

extension PredicateExpressions.Disjunction: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        var parts: [FormatPredicate] = []
        for side in [try translation.predicate(lhs), try translation.predicate(rhs)] {
            if case .or(let inner) = side { parts += inner } else { parts.append(side) }
        }
        return .predicate(.or(parts))
    }
}

extension PredicateExpressions.Negation: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        .predicate(.not(try translation.predicate(wrapped)))
    }
}

extension PredicateExpressions.SequenceStartsWith: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        .predicate(.comparison(Comparison(try translation.expression(base), .beginsWith, try translation.expression(prefix))))
    }
}

extension PredicateExpressions.SequenceContains: TypedPredicatePart {
    /// `list.contains($0.name)` is `name IN list`; `$0.tags.contains(x)` is `tags CONTAINS x`.
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        let collection = try translation.expression(sequence)
        let item = try translation.expression(element)
        if case .aggregate = collection {
            return .predicate(.comparison(Comparison(item, .in, collection)))
        }
        return .predicate(.comparison(Comparison(collection, .contains, item)))
    }
}

extension PredicateExpressions.SequenceContainsWhere: TypedPredicatePart {
    /// `$0.books.contains { $0.pages > 100 }` is `SUBQUERY(books, $v1, $v1.pages > 100).@count > 0`.
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        let collection = try translation.expression(sequence)
        let name = translation.newVariable()
        translation.aliases[variable.key] = .variable(name)
        let inner = try translation.predicate(test)
        let subquery = FormatExpression.subquery(collection: collection, variable: name, predicate: inner)
        return .predicate(.comparison(Comparison(.collection(.count, of: subquery, key: []), .greater, .constant(.int(0)))))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: TypedPredicatePart {
    /// `$0.books.allSatisfy { $0.pages > 100 }` is `SUBQUERY(books, $v1, NOT $v1.pages > 100).@count == 0`.
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        let collection = try translation.expression(sequence)
        let name = translation.newVariable()
        translation.aliases[variable.key] = .variable(name)
        let inner = try translation.predicate(test)
        let subquery = FormatExpression.subquery(collection: collection, variable: name, predicate: .not(inner))
        return .predicate(.comparison(Comparison(.collection(.count, of: subquery, key: []), .equal, .constant(.int(0)))))
    }
}

extension PredicateExpressions.Arithmetic: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        let function: ExpressionFunction = switch op {
        case .add: .add
        case .subtract: .subtract
        case .multiply: .multiply
        @unknown default: throw .unsupported("the #Predicate arithmetic operator \(op)")
        }
        return .expression(.function(function, [try translation.expression(lhs), try translation.expression(rhs)]))
    }
}

extension PredicateExpressions.FloatDivision: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        .expression(.function(.divide, [try translation.expression(lhs), try translation.expression(rhs)]))
    }
}

extension PredicateExpressions.IntDivision: TypedPredicatePart {
    /// Swift's `/` on integers truncates toward zero: `trunc:(a / b)`.
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        .expression(.function(.trunc, [.function(.divide, [try translation.expression(lhs), try translation.expression(rhs)])]))
    }
}

extension PredicateExpressions.IntRemainder: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        .expression(.function(.modulus, [try translation.expression(lhs), try translation.expression(rhs)]))
    }
}

extension PredicateExpressions.UnaryMinus: TypedPredicatePart {
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        // `-100` in Swift is a minus before a literal: the negative literal, as the format language reads it.
        switch try translation.expression(wrapped) {
        case .constant(.int(let value)) where value != .min: return .expression(.constant(.int(-value)))
        case .constant(.double(let value)): return .expression(.constant(.double(-value)))
        case let operand: return .expression(.function(.subtract, [.constant(.int(0)), operand]))
        }
    }
}

extension PredicateExpressions.NilCoalesce: TypedPredicatePart {
    /// `a ?? b` is `TERNARY(a != nil, a, b)`.
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        let value = try translation.expression(lhs)
        let fallback = try translation.expression(rhs)
        return .expression(.ternary(.comparison(Comparison(value, .notEqual, .constant(.null))), value, fallback))
    }
}

extension PredicateExpressions.Conditional: TypedPredicatePart {
    /// `test ? a : b` is `TERNARY(test, a, b)`; between two conditions, `(test AND a) OR (NOT test AND b)`.
    func translate(_ translation: inout PredicateTranslation) throws(FormatPredicateError) -> TranslatedNode {
        let condition = try translation.predicate(test)
        let then = try translation.node(trueBranch), otherwise = try translation.node(falseBranch)
        switch (then, otherwise) {
        case (.expression(let a), .expression(let b)):
            return .expression(.ternary(condition, a, b))
        default:
            let a = try translation.predicate(trueBranch), b = try translation.predicate(falseBranch)
            return .predicate(.or([.and([condition, a]), .and([.not(condition), b])]))
        }
    }
}

import Foundation

extension FormatPredicate {
    /// Evaluates the predicate against `object` with Core Data's semantics: numbers compare by value across Swift
    /// types, nil equals only nil, `[c]` and `[d]` fold all of Unicode, LIKE and MATCHES match the whole string, and
    /// a key path through a to-many relationship compares as `ANY` unless it says `ALL` or `NONE`.
    ///
    /// - Throws: ``FormatPredicateError/unboundVariable(_:)`` or ``FormatPredicateError/evaluation(_:)`` naming the key or value.
    public func evaluate(with object: any KeyValueSource, variables: [String: EvaluatedValue] = [:]) throws(FormatPredicateError) -> Bool {
        try Evaluator(root: .object(object), variables: variables).test(self)
    }
}

struct Evaluator {
    let root: EvaluatedValue
    var variables: [String: EvaluatedValue]

    func test(_ predicate: FormatPredicate) throws(FormatPredicateError) -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .not(let inner): return try !test(inner)
        case .and(let parts):
            for part in parts where try !test(part) { return false }
            return true
        case .or(let parts):
            for part in parts where try test(part) { return true }
            return false
        case .comparison(let comparison):
            return try compare(comparison)
        }
    }

    // MARK: Expressions

    func value(_ expression: FormatExpression) throws(FormatPredicateError) -> EvaluatedValue {
        switch expression {
        case .constant(let value): return .value(value)
        case .evaluatedObject: return root
        case .keyPath(let path): return try Self.walk(root, path)
        case .variable(let name):
            guard let bound = variables[name] else { throw .unboundVariable(name) }
            return bound
        case .member(let base, let path): return try Self.walk(try value(base), path)
        case .aggregate(let items):
            var values: [EvaluatedValue] = []
            for item in items { values.append(try value(item)) }
            return .collection(values)
        case .collection(let op, let base, let key):
            var elements = try Self.elements(try value(base), of: "@\(op.rawValue)")
            if !key.isEmpty {
                var mapped: [EvaluatedValue] = []
                for element in elements { mapped.append(try Self.walk(element, key)) }
                elements = Self.flatten(mapped)
            }
            guard let function = Aggregation.function(for: op) else { return .collection(Self.distinct(elements)) }
            return try Self.reduce(elements, by: function, of: "@\(op.rawValue)")
        case .subquery(let collection, let variable, let predicate):
            var kept: [EvaluatedValue] = []
            for element in Self.flatten([try value(collection)]) {
                var scope = self
                scope.variables[variable] = element
                if try scope.test(predicate) { kept.append(element) }
            }
            return .collection(kept)
        case .function(let function, let arguments):
            if function.isAggregate {
                return try Self.reduce(try Self.elements(try value(arguments[0]), of: function.rawValue), by: function, of: function.rawValue)
            }
            var values: [PredicateValue] = []
            for argument in arguments {
                guard case .value(let constant) = try value(argument) else {
                    throw .typeMismatch(expression: "\(expression)", expected: "values", found: "an object or a collection as \(argument)")
                }
                values.append(constant)
            }
            return .value(try Arithmetic.apply(function, values))
        case .subscripted(let base, let position):
            let items = try Self.elements(try subscriptBase(base, of: expression, picking: position != .size), of: "a subscript")
            switch position {
            case .size: return .value(.int(Int64(items.count)))
            case .first: return Self.held(items.first ?? .value(.null))
            case .last: return Self.held(items.last ?? .value(.null))
            case .index(let indexExpression):
                guard case .value(let index) = try value(indexExpression) else {
                    throw .typeMismatch(expression: "\(expression)", expected: "an integer index", found: "an object or a collection")
                }
                switch index {
                case .null: return .value(.null)
                case .int(let i): return i >= 0 && i < items.count ? Self.held(items[Int(i)]) : .value(.null)
                default: throw .typeMismatch(expression: "\(expression)", expected: "an integer index", found: "\(index.kindName) \(index.formatLiteral)")
                }
            }
        case .ternary(let condition, let then, let otherwise):
            return Self.held(try value(try test(condition) ? then : otherwise))
        }
    }

    /// A NaN picked out of a collection or a TERNARY is nil, as SQLite holds it; only a NaN constant compared
    /// directly stays NaN (`x == NaN` is false, not `x == nil`).
    static func held(_ value: EvaluatedValue) -> EvaluatedValue {
        if case .value(.double(let number)) = value, number.isNaN { return .value(.null) }
        return value
    }

    /// The elements of a collection operand; nil has none. Collections of collections read as one.
    static func elements(_ value: EvaluatedValue, of what: String) throws(FormatPredicateError) -> [EvaluatedValue] {
        switch value {
        case .collection(let items): return flatten(items)
        case .value(.null): return []
        case .value(let single): throw .typeMismatch(expression: what, expected: "a collection", found: "\(single.kindName) \(single.formatLiteral)")
        case .object: throw .typeMismatch(expression: what, expected: "a collection", found: "an object")
        }
    }

    /// A collection reduced by an aggregate function or collection operator: `count:` counts every element (objects
    /// too), the others need values; `mode:` yields the values that occur most.
    static func reduce(_ elements: [EvaluatedValue], by function: ExpressionFunction, of what: String) throws(FormatPredicateError) -> EvaluatedValue {
        if function == .count { return .value(.int(Int64(elements.count))) }
        let values = try values(elements, of: what)
        if function == .mode { return .collection(Aggregation.modes(values).map(EvaluatedValue.value)) }
        return .value(try Aggregation.reduce(function, values))
    }

    static func values(_ elements: [EvaluatedValue], of what: String) throws(FormatPredicateError) -> [PredicateValue] {
        var values: [PredicateValue] = []
        for element in elements {
            guard case .value(let value) = element else {
                throw .typeMismatch(expression: what, expected: "values; add the key of the objects' values to aggregate", found: "objects")
            }
            values.append(value)
        }
        return values
    }

    /// `@distinctUnionOfObjects`: nil skipped, each value or object once, in first-seen order.
    static func distinct(_ elements: [EvaluatedValue]) -> [EvaluatedValue] {
        var seenValues: Set<PredicateValue> = []
        var seenObjects: Set<PredicateValue> = []
        var result: [EvaluatedValue] = []
        for element in elements {
            switch element {
            case .value(.null): continue
            case .value(let value):
                if seenValues.insert(ValueOrder.canonical(value)).inserted { result.append(element) }
            case .object(let object):
                if let identified = object as? any IdentifiableSource {
                    if seenObjects.insert(identified.sourceIdentity).inserted { result.append(element) }
                } else {
                    result.append(element)
                }
            case .collection:
                result.append(element)
            }
        }
        return result
    }

    /// The value of a subscript's `base`. When the subscript picks an element (`[FIRST]`, `[LAST]`, `[n]`), a key path
    /// through a to-many relationship whose owner keeps no order (see ``KeyValueSource/keepsOrder(forKey:)``) is
    /// refused, as SQL finds no order to pick from; the walk that checks it is the one that reads the value.
    func subscriptBase(
        _ base: FormatExpression, of expression: FormatExpression, picking: Bool
    ) throws(FormatPredicateError) -> EvaluatedValue {
        var current: EvaluatedValue, path: [String]
        switch base {
        case .keyPath(let keys) where picking: (current, path) = (root, keys)
        case .member(let start, let keys) where picking: (current, path) = (try value(start), keys)
        default: return try value(base)
        }
        for key in path {
            if case .object(let source) = current, !source.keepsOrder(forKey: key) {
                throw .unsupported("\(expression): \(base) is not an ordered relationship, so its objects have no first, last or n-th; use @min, @max or [SIZE]")
            }
            current = try Self.walk(current, [key])
        }
        return current
    }

    static func walk(_ start: EvaluatedValue, _ path: [String]) throws(FormatPredicateError) -> EvaluatedValue {
        var current = start
        for key in path {
            switch current {
            case .object(let object):
                current = try object.predicateValue(forKey: key)
            case .collection(let items):
                var mapped: [EvaluatedValue] = []
                for item in items { mapped.append(try walk(item, [key])) }
                current = .collection(flatten(mapped))
            case .value(.null):
                return .value(.null)
            case .value(let value):
                throw .evaluation("cannot read key '\(key)' of a \(value.kindName) value")
            }
        }
        return current
    }

    /// Collections of collections (a to-many of a to-many) read as one collection, as `ANY` expects.
    static func flatten(_ values: [EvaluatedValue]) -> [EvaluatedValue] {
        var result: [EvaluatedValue] = []
        for value in values {
            if case .collection(let inner) = value { result += flatten(inner) } else { result.append(value) }
        }
        return result
    }

    // MARK: Comparisons

    func compare(_ comparison: Comparison) throws(FormatPredicateError) -> Bool {
        try Self.compare(try value(comparison.left), try value(comparison.right), comparison)
    }

    /// `comparison` of its two sides' values (see ``ResolvedPredicate``, which reads them its own way).
    static func compare(_ left: EvaluatedValue, _ right: EvaluatedValue, _ comparison: Comparison) throws(FormatPredicateError) -> Bool {
        switch comparison.modifier {
        case .any, .all, .none:
            let items: [EvaluatedValue]
            if case .collection(let collection) = left { items = Self.flatten(collection) } else { items = [left] }
            var matched = 0
            for item in items where try Self.holds(item, comparison.op, right, comparison.options, comparison) { matched += 1 }
            switch comparison.modifier {
            case .any: return matched > 0
            case .all: return matched == items.count
            default: return matched == 0
            }
        case .direct:
            if case .collection(let items) = left, comparison.op != .contains {
                // A to-many key path without a modifier reads as ANY, as Core Data's SQL does.
                for item in Self.flatten(items) where try Self.holds(item, comparison.op, right, comparison.options, comparison) { return true }
                return false
            }
            return try Self.holds(left, comparison.op, right, comparison.options, comparison)
        }
    }

    static func holds(
        _ left: EvaluatedValue, _ op: Comparison.Operator, _ right: EvaluatedValue, _ options: Comparison.Options, _ context: Comparison
    ) throws(FormatPredicateError) -> Bool {
        switch op {
        case .equal: return try equal(left, right, options, context)
        case .notEqual: return try !equal(left, right, options, context)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard case .value(let a) = left, case .value(let b) = right else {
                throw .evaluation("\(op.rawValue) compares values, not objects or collections")
            }
            guard let order = try ValueOrder.order(a, b, options, in: "\(context)") else { return false }
            switch op {
            case .less: return order == .orderedAscending
            case .lessOrEqual: return order != .orderedDescending
            case .greater: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .beginsWith, .endsWith, .like, .matches:
            guard case .value(let a) = left, case .value(let b) = right else { return false }
            return try stringTest(op, a, b, options)
        case .contains:
            if case .collection(let items) = left {
                for item in flatten(items) where try equal(item, right, options, context) { return true }
                return false
            }
            guard case .value(let a) = left, case .value(let b) = right else { return false }
            return try stringTest(.contains, a, b, options)
        case .in:
            switch right {
            case .collection(let items):
                for item in flatten(items) where try equal(left, item, options, context) { return true }
                return false
            case .value(.string):
                guard case .value(let a) = left, case .value(let b) = right else { return false }
                return try stringTest(.contains, b, a, options)
            case .value(.null):
                return false
            default:
                throw .evaluation("IN needs a collection or a string on its right side")
            }
        case .between:
            guard case .collection(let bounds) = right, bounds.count == 2,
                  case .value(let low) = bounds[0], case .value(let high) = bounds[1] else {
                throw .evaluation("BETWEEN needs a collection of exactly two values")
            }
            guard case .value(let value) = left,
                  let lower = try ValueOrder.order(value, low, options, in: "\(context)"),
                  let upper = try ValueOrder.order(value, high, options, in: "\(context)") else { return false }
            return lower != .orderedAscending && upper != .orderedDescending
        }
    }

    static func stringTest(_ op: Comparison.Operator, _ a: PredicateValue, _ b: PredicateValue, _ options: Comparison.Options) throws(FormatPredicateError) -> Bool {
        guard case .string(let text) = a, case .string(let pattern) = b else { return false }
        if op == .matches {
            let subject = options.contains(.diacriticInsensitive) ? StringMatching.fold(text, [.diacriticInsensitive]) : text
            return try StringMatching.matches(subject, pattern, caseInsensitive: options.contains(.caseInsensitive))
        }
        let t = StringMatching.fold(text, options), p = StringMatching.fold(pattern, options)
        switch op {
        case .beginsWith: return StringMatching.beginsWith(t, p)
        case .endsWith: return StringMatching.endsWith(t, p)
        case .contains: return StringMatching.contains(t, p)
        default: return StringMatching.like(t, p)
        }
    }

    static func equal(_ left: EvaluatedValue, _ right: EvaluatedValue, _ options: Comparison.Options, _ context: Comparison) throws(FormatPredicateError) -> Bool {
        switch (left, right) {
        case (.value(let a), .value(let b)):
            return try ValueOrder.equal(a, b, options, in: "\(context)")
        case (.object, .value(.null)), (.value(.null), .object):
            return false
        case (.object(let a), .object(let b)):
            guard let x = a as? any IdentifiableSource, let y = b as? any IdentifiableSource else {
                throw .evaluation("objects can be compared only when they have an identity")
            }
            return x.sourceIdentity == y.sourceIdentity
        case (.object(let object), .value(let value)), (.value(let value), .object(let object)):
            guard let identified = object as? any IdentifiableSource else {
                throw .evaluation("an object cannot be compared with a \(value.kindName)")
            }
            return try identified.matchesIdentity(value)
        case (.collection, _), (_, .collection):
            throw .evaluation("== compares single values; use ANY, ALL, NONE, IN or CONTAINS with collections")
        }
    }
}

/// A key-value source with an identity, so `author == %@` can compare an object with an argument naming it.
public protocol IdentifiableSource: KeyValueSource {
    /// A value unique to the object (its primary key, say).
    var sourceIdentity: PredicateValue { get }
    /// Whether an argument value names this object.
    func matchesIdentity(_ value: PredicateValue) throws(FormatPredicateError) -> Bool
}

extension FormatExpression {
    /// Evaluates the expression (a key path, say) against `object`: what a predicate would compare.
    public func evaluate(with object: any KeyValueSource, variables: [String: EvaluatedValue] = [:]) throws(FormatPredicateError) -> EvaluatedValue {
        try Evaluator(root: .object(object), variables: variables).value(self)
    }
}

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
            var elements = try Self.elements(try value(base), forOperator: op)
            if !key.isEmpty {
                var mapped: [EvaluatedValue] = []
                for element in elements { mapped.append(try Self.walk(element, key)) }
                elements = Self.flatten(mapped)
            }
            return .value(try Self.apply(op, to: elements))
        case .subquery(let collection, let variable, let predicate):
            var kept: [EvaluatedValue] = []
            for element in Self.flatten([try value(collection)]) {
                var scope = self
                scope.variables[variable] = element
                if try scope.test(predicate) { kept.append(element) }
            }
            return .collection(kept)
        }
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

    static func elements(_ value: EvaluatedValue, forOperator op: CollectionOperator) throws(FormatPredicateError) -> [EvaluatedValue] {
        switch value {
        case .collection(let items): return items
        case .value(.null): return []
        default: throw .evaluation("@\(op.rawValue) needs a collection, not a single value")
        }
    }

    static func apply(_ op: CollectionOperator, to elements: [EvaluatedValue]) throws(FormatPredicateError) -> PredicateValue {
        if op == .count { return .int(Int64(elements.count)) }
        var values: [PredicateValue] = []
        for element in elements {
            guard case .value(let value) = element else { throw .evaluation("@\(op.rawValue) needs values, not objects; add the key to aggregate") }
            if !value.isNull { values.append(value) }
        }
        switch op {
        case .count:
            return .int(Int64(elements.count))
        case .sum:
            if values.allSatisfy({ if case .int = $0 { true } else { false } }) {
                var total: Int64 = 0
                for case .int(let v) in values {
                    let (sum, overflow) = total.addingReportingOverflow(v)
                    if overflow { return .double(values.compactMap(\.number).reduce(0, +)) }
                    total = sum
                }
                return .int(total)
            }
            return .double(try numbers(values, op).reduce(0, +))
        case .avg:
            let numbers = try numbers(values, op)
            return numbers.isEmpty ? .null : .double(numbers.reduce(0, +) / Double(numbers.count))
        case .min, .max:
            var best: PredicateValue?
            for value in values {
                guard let current = best else { best = value; continue }
                guard let order = order(value, current, []) else {
                    throw .evaluation("@\(op.rawValue) cannot compare \(value.kindName) with \(current.kindName)")
                }
                if (op == .min && order == .orderedAscending) || (op == .max && order == .orderedDescending) { best = value }
            }
            return best ?? .null
        }
    }

    static func numbers(_ values: [PredicateValue], _ op: CollectionOperator) throws(FormatPredicateError) -> [Double] {
        var result: [Double] = []
        for value in values {
            guard let number = value.number else { throw .evaluation("@\(op.rawValue) needs numbers, not \(value.kindName)") }
            result.append(number)
        }
        return result
    }

    // MARK: Comparisons

    func compare(_ comparison: Comparison) throws(FormatPredicateError) -> Bool {
        let left = try value(comparison.left)
        let right = try value(comparison.right)
        switch comparison.modifier {
        case .any, .all, .none:
            let items: [EvaluatedValue]
            if case .collection(let collection) = left { items = Self.flatten(collection) } else { items = [left] }
            var matched = 0
            for item in items where try Self.holds(item, comparison.op, right, comparison.options) { matched += 1 }
            switch comparison.modifier {
            case .any: return matched > 0
            case .all: return matched == items.count
            default: return matched == 0
            }
        case .direct:
            if case .collection(let items) = left, comparison.op != .contains {
                // A to-many key path without a modifier reads as ANY, as Core Data's SQL does.
                for item in Self.flatten(items) where try Self.holds(item, comparison.op, right, comparison.options) { return true }
                return false
            }
            return try Self.holds(left, comparison.op, right, comparison.options)
        }
    }

    static func holds(_ left: EvaluatedValue, _ op: Comparison.Operator, _ right: EvaluatedValue, _ options: Comparison.Options) throws(FormatPredicateError) -> Bool {
        switch op {
        case .equal: return try equal(left, right, options)
        case .notEqual: return try !equal(left, right, options)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard case .value(let a) = left, case .value(let b) = right else {
                throw .evaluation("\(op.rawValue) compares values, not objects or collections")
            }
            guard let order = order(a, b, options) else { return false }
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
                for item in flatten(items) where try equal(item, right, options) { return true }
                return false
            }
            guard case .value(let a) = left, case .value(let b) = right else { return false }
            return try stringTest(.contains, a, b, options)
        case .in:
            switch right {
            case .collection(let items):
                for item in flatten(items) where try equal(left, item, options) { return true }
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
                  let lower = order(value, low, options), let upper = order(value, high, options) else { return false }
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

    static func equal(_ left: EvaluatedValue, _ right: EvaluatedValue, _ options: Comparison.Options) throws(FormatPredicateError) -> Bool {
        switch (left, right) {
        case (.value(let a), .value(let b)):
            return valuesEqual(a, b, options)
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

    static func valuesEqual(_ a: PredicateValue, _ b: PredicateValue, _ options: Comparison.Options) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.int(let x), .int(let y)): return x == y
        case (.string(let x), .string(let y)): return StringMatching.equal(StringMatching.fold(x, options), StringMatching.fold(y, options))
        default:
            if let x = a.number, let y = b.number { return x == y }
            return a == b
        }
    }

    static func order(_ a: PredicateValue, _ b: PredicateValue, _ options: Comparison.Options) -> ComparisonResult? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
        case (.string(let x), .string(let y)): return StringMatching.order(StringMatching.fold(x, options), StringMatching.fold(y, options))
        case (.date(let x), .date(let y)): return x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
        default:
            guard let x = a.number, let y = b.number else { return nil }
            return x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
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

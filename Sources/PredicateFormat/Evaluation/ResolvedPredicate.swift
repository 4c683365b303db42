/// A predicate whose keys were resolved, once, to positions in a row of values, for judging many rows of one kind:
/// each key is then read by its position, where ``FormatPredicate/evaluate(with:variables:)`` asks a
/// ``KeyValueSource`` for it by name, through a boxed source, at every row.
///
/// Only what a row holds itself resolves: a key path of one key that `position` knows, constants, literal
/// collections of those, and the functions of values that take them. A predicate with anything else (a
/// relationship, `SELF`, a variable, a subquery, an aggregate) does not resolve, and its rows are judged by the
/// general evaluator. Comparisons and functions are the evaluator's own, so a resolved predicate answers what the
/// evaluator answers, errors included.
///
/// ```swift
/// let predicate = try FormatPredicate("modulus:by:(pages, 100) == 0 AND title BEGINSWITH 'D'")
/// let columns = ["title": 0, "pages": 1]
/// let resolved = ResolvedPredicate(predicate, position: { columns[$0] })!
/// let row: [PredicateValue] = [.string("Dune"), .int(400)]
/// try resolved.evaluate { row[$0] }   // true
/// ```
package struct ResolvedPredicate: Sendable {
    indirect enum Test: Sendable {
        case constant(Bool)
        case not(Test)
        case and([Test])
        case or([Test])
        case comparison(Operand, Operand, Comparison)
    }

    enum Operand: Sendable {
        case scalar(Scalar)
        /// A literal collection of values.
        case collection([Scalar])
    }

    indirect enum Scalar: Sendable {
        case constant(PredicateValue)
        case position(Int)
        /// A function of values (not an aggregate).
        case function(ExpressionFunction, [Scalar])
    }

    let test: Test

    /// The predicate with each key read at `position(key)`, or nil when it reads anything a row does not hold.
    package init?(_ predicate: FormatPredicate, position: (String) -> Int?) {
        guard let test = Self.resolve(predicate, position) else { return nil }
        self.test = test
    }

    /// Whether the row whose value at each position `value` gives matches.
    ///
    /// - Throws: what ``FormatPredicate/evaluate(with:variables:)`` throws for the same values.
    package func evaluate(reading value: (Int) -> PredicateValue) throws(FormatPredicateError) -> Bool {
        try Self.run(test, value)
    }

    private static func run(_ test: Test, _ read: (Int) -> PredicateValue) throws(FormatPredicateError) -> Bool {
        switch test {
        case .constant(let value): return value
        case .not(let inner): return try !run(inner, read)
        case .and(let parts):
            for part in parts where try !run(part, read) { return false }
            return true
        case .or(let parts):
            for part in parts where try run(part, read) { return true }
            return false
        case .comparison(let left, let right, let comparison):
            return try Evaluator.compare(try value(left, read), try value(right, read), comparison)
        }
    }

    private static func value(_ operand: Operand, _ read: (Int) -> PredicateValue) throws(FormatPredicateError) -> EvaluatedValue {
        switch operand {
        case .scalar(let scalar): return .value(try value(scalar, read))
        case .collection(let items):
            var values: [EvaluatedValue] = []
            values.reserveCapacity(items.count)
            for item in items { values.append(.value(try value(item, read))) }
            return .collection(values)
        }
    }

    private static func value(_ scalar: Scalar, _ read: (Int) -> PredicateValue) throws(FormatPredicateError) -> PredicateValue {
        switch scalar {
        case .constant(let constant): return constant
        case .position(let position): return read(position)
        case .function(let function, let arguments):
            var values: [PredicateValue] = []
            values.reserveCapacity(arguments.count)
            for argument in arguments { values.append(try value(argument, read)) }
            return try Arithmetic.apply(function, values)
        }
    }

    private static func resolve(_ predicate: FormatPredicate, _ position: (String) -> Int?) -> Test? {
        switch predicate {
        case .constant(let value): return .constant(value)
        case .not(let inner): return resolve(inner, position).map(Test.not)
        case .and(let parts): return resolveAll(parts, position).map(Test.and)
        case .or(let parts): return resolveAll(parts, position).map(Test.or)
        case .comparison(let comparison):
            guard let left = operand(comparison.left, position), let right = operand(comparison.right, position) else { return nil }
            return .comparison(left, right, comparison)
        }
    }

    private static func resolveAll(_ parts: [FormatPredicate], _ position: (String) -> Int?) -> [Test]? {
        var tests: [Test] = []
        for part in parts {
            guard let test = resolve(part, position) else { return nil }
            tests.append(test)
        }
        return tests
    }

    private static func operand(_ expression: FormatExpression, _ position: (String) -> Int?) -> Operand? {
        guard case .aggregate(let items) = expression else { return scalar(expression, position).map(Operand.scalar) }
        var scalars: [Scalar] = []
        for item in items {
            guard let scalar = scalar(item, position) else { return nil }
            scalars.append(scalar)
        }
        return .collection(scalars)
    }

    /// A value-yielding expression: nil for anything else, including a literal collection inside a function or a
    /// collection (the evaluator's type error, or a nested collection it flattens), which the evaluator answers.
    private static func scalar(_ expression: FormatExpression, _ position: (String) -> Int?) -> Scalar? {
        switch expression {
        case .constant(let value): return .constant(value)
        case .keyPath(let path) where path.count == 1: return position(path[0]).map(Scalar.position)
        case .function(let function, let arguments) where !function.isAggregate:
            var scalars: [Scalar] = []
            for argument in arguments {
                guard let scalar = scalar(argument, position) else { return nil }
                scalars.append(scalar)
            }
            return .function(function, scalars)
        default: return nil
        }
    }
}

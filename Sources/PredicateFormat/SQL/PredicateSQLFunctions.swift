import Foundation
import GRDB

/// How constants are bound: the storage convention every ``SQLSchema`` shares (see ``SQLValueKind``).
public enum PredicateSQLValues {
    /// The SQLite value a constant is bound as.
    public static func databaseValue(_ value: PredicateValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .bool(let v): (v ? 1 : 0).databaseValue
        case .int(let v): v.databaseValue
        case .double(let v): v.databaseValue
        case .decimal(let v): NSDecimalNumber(decimal: v).doubleValue.databaseValue
        case .string(let v): v.databaseValue
        case .date(let v): v.timeIntervalSinceReferenceDate.databaseValue
        case .data(let v): v.databaseValue
        case .uuid(let v): v.uuidString.databaseValue
        case .url(let v): v.absoluteString.databaseValue
        }
    }
}

/// The SQLite functions compiled predicates call: folding, the string operators and MATCHES, implemented by the
/// same code as the evaluator so that SQL and in-memory results agree.
public enum PredicateSQLFunctions {
    private static func text(_ value: DatabaseValue) -> String? {
        if case .string(let text) = value.storage { return text }
        return nil
    }

    private static func options(_ value: DatabaseValue) -> Comparison.Options {
        if case .int64(let raw) = value.storage { return Comparison.Options(rawValue: Int(raw)) }
        return []
    }

    private static func stringTest(_ name: String, _ op: Comparison.Operator) -> DatabaseFunction {
        DatabaseFunction(name, argumentCount: 3, pure: true) { values in
            guard let subject = text(values[0]), let pattern = text(values[1]) else { return 0 }
            return try Evaluator.stringTest(op, .string(subject), .string(pattern), options(values[2])) ? 1 : 0
        }
    }

    /// A SQLite value as the evaluator's constant (dates arrive as their seconds, as stores bind them).
    static func predicateValue(_ value: DatabaseValue) -> PredicateValue {
        switch value.storage {
        case .null: .null
        case .int64(let v): .int(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .blob(let v): .data(v)
        }
    }

    /// `og_function(name, arguments...)`: a scalar function of ``ExpressionFunction`` by the evaluator's code.
    private static func function(_ name: String, pure: Bool) -> DatabaseFunction {
        DatabaseFunction(name, argumentCount: nil, pure: pure) { values in
            guard let first = values.first, case .string(let functionName) = first.storage, let function = ExpressionFunction(rawValue: functionName) else {
                throw FormatPredicateError.evaluation("\(name) needs a function name first")
            }
            return PredicateSQLValues.databaseValue(try Arithmetic.apply(function, values.dropFirst().map(predicateValue)))
        }
    }

    /// Every function, ready to add to a connection.
    public static var all: [DatabaseFunction] {
        [
            function("og_function", pure: true),
            // now() and random() differ from call to call: SQLite must not fold them.
            function("og_volatile", pure: false),
            DatabaseFunction("og_sum", argumentCount: 1, pure: true, aggregate: Reduction<SumFunction>.self),
            DatabaseFunction("og_median", argumentCount: 1, pure: true, aggregate: Reduction<MedianFunction>.self),
            DatabaseFunction("og_stddev", argumentCount: 1, pure: true, aggregate: Reduction<StandardDeviationFunction>.self),
            DatabaseFunction("og_fold", argumentCount: 2, pure: true) { values in
                guard let text = text(values[0]) else { return values[0] }
                return StringMatching.fold(text, options(values[1]))
            },
            stringTest("og_beginswith", .beginsWith),
            stringTest("og_endswith", .endsWith),
            stringTest("og_contains", .contains),
            stringTest("og_like", .like),
            stringTest("og_matches", .matches),
        ]
    }

    /// Adds every function to `db`; call it from `Configuration.prepareDatabase` so each connection has them.
    public static func register(in db: Database) {
        for function in all { db.add(function: function) }
    }
}

/// Which aggregate of ``Aggregation`` a ``Reduction`` computes.
protocol ReducingFunction { static var function: ExpressionFunction { get } }
enum SumFunction: ReducingFunction { static let function = ExpressionFunction.sum }
enum MedianFunction: ReducingFunction { static let function = ExpressionFunction.median }
enum StandardDeviationFunction: ReducingFunction { static let function = ExpressionFunction.stddev }

/// An SQLite aggregate computed by ``Aggregation``, so SQL and the evaluator reduce values alike.
struct Reduction<Function: ReducingFunction>: DatabaseAggregate {
    private var values: [PredicateValue] = []

    init() {}

    mutating func step(_ dbValues: [DatabaseValue]) throws {
        values.append(PredicateSQLFunctions.predicateValue(dbValues[0]))
    }

    func finalize() throws -> (any DatabaseValueConvertible)? {
        PredicateSQLValues.databaseValue(try Aggregation.reduce(Function.function, values))
    }
}

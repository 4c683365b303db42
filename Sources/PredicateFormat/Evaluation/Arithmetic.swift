import Foundation

/// The scalar functions of the language, on constants: what the evaluator calls, and what the SQL functions call
/// for everything SQLite's own operators would compute differently, so both back ends give the same answer.
public enum Arithmetic {
    /// A number as the arithmetic sees it: exact while it is an integer.
    enum Number {
        case int(Int64)
        case double(Double)

        var double: Double {
            switch self {
            case .int(let v): Double(v)
            case .double(let v): v
            }
        }

        /// A number value (Booleans as 0 and 1, decimals as Doubles), or nil for any other.
        init?(_ value: PredicateValue) {
            switch value {
            case .int(let v): self = .int(v)
            case .bool(let v): self = .int(v ? 1 : 0)
            case .double(let v): self = .double(v)
            case .decimal(let v): self = .double(NSDecimalNumber(decimal: v).doubleValue)
            default: return nil
            }
        }
    }

    static func mismatch(_ function: ExpressionFunction, _ value: PredicateValue, expected: String) -> FormatPredicateError {
        .typeMismatch(expression: function.rawValue, expected: expected, found: "\(value.kindName) \(value.formatLiteral)")
    }

    /// `value` as a number, nil for nil; any other value is a type mismatch of `function`.
    static func number(_ value: PredicateValue, for function: ExpressionFunction) throws(FormatPredicateError) -> Number? {
        if value.isNull { return nil }
        guard let number = Number(value) else { throw mismatch(function, value, expected: "numbers") }
        return number
    }

    /// A result that is not a number is nil: SQLite cannot hold NaN, and stores it as NULL.
    static func result(_ value: Double) -> PredicateValue { value.isNaN ? .null : .double(value) }

    /// Applies a scalar (not aggregate) function to constant arguments.
    ///
    /// - Throws: ``FormatPredicateError/typeMismatch(expression:expected:found:)`` naming the function and value.
    public static func apply(_ function: ExpressionFunction, _ givenArguments: [PredicateValue]) throws(FormatPredicateError) -> PredicateValue {
        // NaN arguments are nil, as SQLite passes them.
        // Copied only when one is: judging many rows calls this once a row.
        let arguments = givenArguments.contains(where: Aggregation.isMissing)
            ? givenArguments.map { Aggregation.isMissing($0) ? PredicateValue.null : $0 } : givenArguments
        switch function {
        case .add, .subtract:
            if let dated = try dateArithmetic(function, arguments[0], arguments[1]) { return dated }
            return try integerOrDouble(function, arguments) { a, b in
                function == .add ? a.addingReportingOverflow(b) : a.subtractingReportingOverflow(b)
            } double: { a, b in function == .add ? a + b : a - b }
        case .multiply:
            return try integerOrDouble(function, arguments) { $0.multipliedReportingOverflow(by: $1) } double: { $0 * $1 }
        case .divide:
            guard let a = try number(arguments[0], for: function), let b = try number(arguments[1], for: function) else { return .null }
            return b.double == 0 ? .null : result(a.double / b.double)
        case .modulus:
            guard let a = try number(arguments[0], for: function), let b = try number(arguments[1], for: function) else { return .null }
            if case .int(let x) = a, case .int(let y) = b {
                guard y != 0 else { return .null }
                let (remainder, overflow) = x.remainderReportingOverflow(dividingBy: y)
                return .int(overflow ? 0 : remainder)
            }
            return b.double == 0 ? .null : result(fmod(a.double, b.double))
        case .power:
            guard let a = try number(arguments[0], for: function), let b = try number(arguments[1], for: function) else { return .null }
            return result(Foundation.pow(a.double, b.double))
        case .sqrt, .log, .ln, .exp:
            guard let a = try number(arguments[0], for: function) else { return .null }
            let x = a.double
            return result(function == .sqrt ? x.squareRoot() : function == .log ? Foundation.log10(x) : function == .ln ? Foundation.log(x) : Foundation.exp(x))
        case .floor, .ceiling, .trunc:
            guard let a = try number(arguments[0], for: function) else { return .null }
            switch a {
            case .int(let x): return .int(x)
            case .double(let x): return result(x.rounded(function == .floor ? .down : function == .ceiling ? .up : .towardZero))
            }
        case .abs:
            guard let a = try number(arguments[0], for: function) else { return .null }
            switch a {
            case .int(let x): return x == .min ? .double(-Double(x)) : .int(Swift.abs(x))
            case .double(let x): return result(Swift.abs(x))
            }
        case .uppercase, .lowercase:
            switch arguments[0] {
            case .null: return .null
            case .string(let text): return .string(function == .uppercase ? text.uppercased() : text.lowercased())
            default: throw mismatch(function, arguments[0], expected: "a String")
            }
        case .bitwiseAnd, .bitwiseOr, .bitwiseXor, .leftShift, .rightShift:
            guard let a = try integer(arguments[0], for: function), let b = try integer(arguments[1], for: function) else { return .null }
            switch function {
            case .bitwiseAnd: return .int(a & b)
            case .bitwiseOr: return .int(a | b)
            case .bitwiseXor: return .int(a ^ b)
            case .leftShift: return .int(a << b)
            default: return .int(a >> b)
            }
        case .onesComplement:
            guard let a = try integer(arguments[0], for: function) else { return .null }
            return .int(~a)
        case .now:
            return .date(Date())
        case .random:
            return .double(Double.random(in: 0..<1))
        case .randomBelow:
            guard let n = try integer(arguments[0], for: function) else { return .null }
            return n > 0 ? .int(Int64.random(in: 0..<n)) : .null
        case .cast:
            guard case .string(let type) = arguments[1] else { throw mismatch(function, arguments[1], expected: "a type name") }
            if type == "NSNumber", case .string(let text) = arguments[0] {
                // Text that is not a number reads as nil when evaluating; a constant one is refused when parsing.
                guard case .double(let number)? = Conversion.number(text) else { return Conversion.number(text) ?? .null }
                return result(number)
            }
            return try Conversion.cast(arguments[0], to: type)
        case .sum, .count, .min, .max, .average, .median, .mode, .stddev:
            throw .evaluation("\(function.rawValue) reduces a collection; it is not a scalar function")
        }
    }

    private static func integer(_ value: PredicateValue, for function: ExpressionFunction) throws(FormatPredicateError) -> Int64? {
        switch value {
        case .null: return nil
        case .int(let v): return v
        case .bool(let v): return v ? 1 : 0
        default: throw mismatch(function, value, expected: "integers")
        }
    }

    /// `+ - *`: exact on integers, the Double result where the integer one would overflow (as SQLite computes).
    private static func integerOrDouble(
        _ function: ExpressionFunction, _ arguments: [PredicateValue],
        integer: (Int64, Int64) -> (partialValue: Int64, overflow: Bool), double: (Double, Double) -> Double
    ) throws(FormatPredicateError) -> PredicateValue {
        guard let a = try number(arguments[0], for: function), let b = try number(arguments[1], for: function) else { return .null }
        if case .int(let x) = a, case .int(let y) = b {
            let (value, overflow) = integer(x, y)
            if !overflow { return .int(value) }
        }
        return result(double(a.double, b.double))
    }

    /// A Date plus or minus seconds is a Date; a Date minus a Date is seconds. Nil where no Date takes part.
    private static func dateArithmetic(_ function: ExpressionFunction, _ a: PredicateValue, _ b: PredicateValue) throws(FormatPredicateError) -> PredicateValue? {
        switch (a, b) {
        case (.date(let x), .date(let y)):
            guard function == .subtract else { throw mismatch(function, b, expected: "a number of seconds to add to a Date") }
            return result(x.timeIntervalSinceReferenceDate - y.timeIntervalSinceReferenceDate)
        case (.date(let x), _):
            guard let seconds = try number(b, for: function) else { return .null }
            return .date(Date(timeIntervalSinceReferenceDate: function == .add ? x.timeIntervalSinceReferenceDate + seconds.double : x.timeIntervalSinceReferenceDate - seconds.double))
        case (_, .date(let y)):
            guard function == .add else { throw mismatch(function, b, expected: "a number (a Date can only be subtracted from a Date)") }
            guard let seconds = try number(a, for: function) else { return .null }
            return .date(Date(timeIntervalSinceReferenceDate: y.timeIntervalSinceReferenceDate + seconds.double))
        default:
            return nil
        }
    }
}

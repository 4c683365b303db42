import Foundation

/// The aggregate functions (`sum:`, `average:`, `median:`...) and collection operators (`@sum`, `@avg`...) over
/// values: what the evaluator computes, and what the SQL aggregates compute, so both back ends agree.
public enum Aggregation {
    /// The function a collection operator computes.
    static func function(for op: CollectionOperator) -> ExpressionFunction? {
        switch op {
        case .count: .count
        case .sum: .sum
        case .avg: .average
        case .min: .min
        case .max: .max
        case .distinctUnionOfObjects: nil
        }
    }

    /// Reduces `values` (nil ones skipped, except by `count:`) to one value; `mode:` is ``modes(_:)``.
    public static func reduce(_ function: ExpressionFunction, _ values: [PredicateValue]) throws(FormatPredicateError) -> PredicateValue {
        if function == .count { return .int(Int64(values.count)) }
        let present = values.filter { !Self.isMissing($0) }
        switch function {
        case .sum:
            var total: Int64 = 0
            var exact = true
            for value in present {
                guard case .int(let v) = try integerOrNil(value, function) else { exact = false; break }
                let (sum, overflow) = total.addingReportingOverflow(v)
                if overflow { exact = false; break }
                total = sum
            }
            if exact { return .int(total) }
            return Arithmetic.result(try doubles(present, function).reduce(0, +))
        case .average:
            let numbers = try doubles(present, function)
            return numbers.isEmpty ? .null : Arithmetic.result(numbers.reduce(0, +) / Double(numbers.count))
        case .median:
            let numbers = try doubles(present, function).sorted()
            guard !numbers.isEmpty else { return .null }
            let middle = numbers.count / 2
            return Arithmetic.result(numbers.count % 2 == 1 ? numbers[middle] : (numbers[middle - 1] + numbers[middle]) / 2)
        case .stddev:
            let numbers = try doubles(present, function)
            guard !numbers.isEmpty else { return .null }
            let mean = numbers.reduce(0, +) / Double(numbers.count)
            let variance = numbers.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(numbers.count)
            return Arithmetic.result(variance.squareRoot())
        case .min, .max:
            var best: PredicateValue?
            for value in present {
                guard let current = best else { best = value; continue }
                let order = try ValueOrder.order(value, current, [], in: function.rawValue)
                if (function == .min && order == .orderedAscending) || (function == .max && order == .orderedDescending) { best = value }
            }
            return best ?? .null
        default:
            throw .evaluation("\(function.rawValue) is not an aggregate function")
        }
    }

    /// `mode:`: the values that occur most often (nil skipped), in the order they first occur.
    public static func modes(_ values: [PredicateValue]) -> [PredicateValue] {
        var counts: [PredicateValue: Int] = [:]
        var order: [PredicateValue] = []
        for value in values where !isMissing(value) {
            let key = ValueOrder.canonical(value)
            if counts[key] == nil { order.append(key) }
            counts[key, default: 0] += 1
        }
        let most = counts.values.max() ?? 0
        return order.filter { counts[$0] == most }
    }

    /// Nil, or NaN, which SQLite holds as nil: skipped by every aggregate but `count:`.
    static func isMissing(_ value: PredicateValue) -> Bool {
        switch value {
        case .null: true
        case .double(let v): v.isNaN
        default: false
        }
    }

    private static func integerOrNil(_ value: PredicateValue, _ function: ExpressionFunction) throws(FormatPredicateError) -> PredicateValue? {
        switch value {
        case .int: value
        case .bool(let v): .int(v ? 1 : 0)
        case .double, .decimal: nil
        default: throw Arithmetic.mismatch(function, value, expected: "numbers")
        }
    }

    private static func doubles(_ values: [PredicateValue], _ function: ExpressionFunction) throws(FormatPredicateError) -> [Double] {
        var result: [Double] = []
        for value in values {
            guard let number = try Arithmetic.number(value, for: function) else { continue }
            result.append(number.double)
        }
        return result
    }
}

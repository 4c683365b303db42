/// The functions of NSExpression the language knows, by their names there.
///
/// Arithmetic has operators too: `pages * 2 + 1` is `add:to:(multiply:by:(pages, 2), 1)`, `-x` is
/// `from:subtract:(0, x)`. The others are written `name:(arguments)`, or `now()` and `random()`:
///
/// ```swift
/// try FormatPredicate("sum:(books.pages) > 1000 AND uppercase:(name) BEGINSWITH 'A'")
/// try FormatPredicate("sqrt:(area) < 10 OR FUNCTION(SELF, 'average:', {a, b, c}) > 2")
/// ```
///
/// What each computes, the same in memory and in SQL:
/// - `+ - *` of two integers give an integer, or the Double result where the integer one would overflow; with a
///   floating-point operand they give a Double. `/` always gives a Double. `modulus:by:` of integers gives the
///   remainder with the dividend's sign, of others `fmod`. A divisor of zero gives nil.
/// - Any result that is not a number (`sqrt:(-1)`, `∞ - ∞`) is nil, as SQLite cannot hold NaN.
/// - A nil operand gives nil; a value that is not a number throws a type mismatch.
/// - A Date plus or minus a number of seconds is a Date; a Date minus a Date is the seconds between them.
/// - `sum:` of nothing is 0; `average:`, `median:`, `min:`, `max:` and `stddev:` (of the population) of nothing are
///   nil; nil elements are skipped, except by `count:`, which counts every element.
public enum ExpressionFunction: String, Sendable, Hashable, CaseIterable {
    case add = "add:to:"
    case subtract = "from:subtract:"
    case multiply = "multiply:by:"
    case divide = "divide:by:"
    case modulus = "modulus:by:"
    case power = "raise:toPower:"

    case sum = "sum:"
    case count = "count:"
    case min = "min:"
    case max = "max:"
    case average = "average:"
    case median = "median:"
    case mode = "mode:"
    case stddev = "stddev:"

    case sqrt = "sqrt:"
    case log = "log:"
    case ln = "ln:"
    case exp = "exp:"
    case floor = "floor:"
    case ceiling = "ceiling:"
    case abs = "abs:"
    case trunc = "trunc:"

    case uppercase = "uppercase:"
    case lowercase = "lowercase:"

    case bitwiseAnd = "bitwiseAnd:with:"
    case bitwiseOr = "bitwiseOr:with:"
    case bitwiseXor = "bitwiseXor:with:"
    case leftShift = "leftshift:by:"
    case rightShift = "rightshift:by:"
    case onesComplement = "onesComplement:"

    case now = "now"
    case random = "random"
    case randomBelow = "randomn:"
    /// `CAST(value, "NSNumber")`, `"NSString"` or `"NSDate"`.
    case cast = "castObject:toType:"

    /// How many arguments the function takes: one per colon of its name.
    public var arity: Int { rawValue.reduce(0) { $1 == ":" ? $0 + 1 : $0 } }

    /// Whether the function reduces a collection (its one argument) to a value, or to values for `mode:`.
    public var isAggregate: Bool {
        switch self {
        case .sum, .count, .min, .max, .average, .median, .mode, .stddev: true
        default: false
        }
    }

    /// Whether two evaluations with the same arguments may differ (`now()`, `random()`).
    public var isVolatile: Bool { self == .now || self == .random || self == .randomBelow }

    /// The infix operator an arithmetic function prints as, with its precedence (higher binds tighter).
    var infix: (symbol: String, precedence: Int)? {
        switch self {
        case .add: ("+", 1)
        case .subtract: ("-", 1)
        case .multiply: ("*", 2)
        case .divide: ("/", 2)
        case .power: ("**", 3)
        default: nil
        }
    }
}

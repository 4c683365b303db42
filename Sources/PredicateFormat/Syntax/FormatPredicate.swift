/// A predicate of the NSPredicate format language, as a syntax tree.
///
/// Parse one from a format string, evaluate it against any ``KeyValueSource``, compile it to SQL, or print it back
/// to a canonical format string that parses to an equal tree.
///
/// ```swift
/// let predicate = try FormatPredicate("author.name = %@ AND pages > %d", "约翰史蒂芬", 100)
/// print(predicate)            // author.name == "约翰史蒂芬" AND pages > 100
/// ```
public indirect enum FormatPredicate: Sendable, Hashable {
    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    case constant(Bool)
    /// `NOT p`.
    case not(FormatPredicate)
    /// `p AND q AND ...`.
    case and([FormatPredicate])
    /// `p OR q OR ...`.
    case or([FormatPredicate])
    /// A comparison of two expressions.
    case comparison(Comparison)
}

/// One comparison: `[modifier] left operator[options] right`.
public struct Comparison: Sendable, Hashable {
    /// The comparison operators of the format language.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case like = "LIKE"
        case matches = "MATCHES"
        case `in` = "IN"
        case between = "BETWEEN"
    }

    /// How the left side, a collection, is quantified.
    public enum Modifier: String, Sendable, Hashable {
        /// The left side is compared as a whole (a to-many key path is implicitly `ANY`).
        case direct = ""
        /// `ANY` (or `SOME`): at least one element matches.
        case any = "ANY"
        /// `ALL`: every element matches.
        case all = "ALL"
        /// `NONE`: no element matches.
        case none = "NONE"
    }

    /// String comparison options: `[c]`, `[d]`, `[cd]`.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `[c]`: case-insensitive, for all of Unicode.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: diacritic-insensitive.
        public static let diacriticInsensitive = Options(rawValue: 2)
    }

    public var modifier: Modifier
    public var left: FormatExpression
    public var op: Operator
    public var options: Options
    public var right: FormatExpression

    /// Creates a comparison.
    public init(_ left: FormatExpression, _ op: Operator, _ right: FormatExpression, modifier: Modifier = .direct, options: Options = []) {
        self.modifier = modifier
        self.left = left
        self.op = op
        self.options = options
        self.right = right
    }
}

/// The collection operators: `@count`, `@sum`, `@avg`, `@min`, `@max`, and `@distinctUnionOfObjects`, which yields
/// the distinct non-nil values of a key rather than one value.
public enum CollectionOperator: String, Sendable, Hashable, CaseIterable {
    case count, sum, avg, min, max, distinctUnionOfObjects
}

/// What a subscript picks from a collection: `[FIRST]`, `[LAST]`, `[SIZE]` (the count), or `[n]` (from 0).
public indirect enum CollectionSubscript: Sendable, Hashable {
    case first, last, size
    case index(FormatExpression)
}

/// An expression of the format language: the operands of comparisons.
public indirect enum FormatExpression: Sendable, Hashable {
    /// A literal or an argument.
    case constant(PredicateValue)
    /// `SELF`: the object being evaluated.
    case evaluatedObject
    /// A key path from the evaluated object: `author.name` is `["author", "name"]`.
    case keyPath([String])
    /// A `$name` variable, bound by substitution or by `SUBQUERY`.
    case variable(String)
    /// A key path from another expression (a variable's `$b.title`).
    case member(FormatExpression, [String])
    /// A literal collection: `{1, 2, 3}`.
    case aggregate([FormatExpression])
    /// A collection operator on a collection, then an optional key path of its elements: `books.@avg.pages`.
    case collection(CollectionOperator, of: FormatExpression, key: [String])
    /// `SUBQUERY(collection, $variable, predicate)`: the elements of `collection` for which `predicate` holds.
    case subquery(collection: FormatExpression, variable: String, predicate: FormatPredicate)
    /// One of the functions NSExpression defines, by its name there (``ExpressionFunction``): arithmetic
    /// (`pages * 2` is `multiply:by:`), aggregates over a collection (`sum:(books.pages)`), math, strings, dates,
    /// and `CAST` (`castObject:toType:`).
    case function(ExpressionFunction, [FormatExpression])
    /// `collection[FIRST]`, `collection[LAST]`, `collection[SIZE]`, `collection[n]`.
    case subscripted(FormatExpression, CollectionSubscript)
    /// `TERNARY(predicate, then, else)`: `then` where the predicate holds, `else` where it does not.
    case ternary(FormatPredicate, FormatExpression, FormatExpression)
}

/// What an expression yields while a predicate is evaluated: a value, an object with keys, or a collection.
public enum EvaluatedValue {
    case value(PredicateValue)
    case object(any KeyValueSource)
    case collection([EvaluatedValue])
}

/// Anything a predicate can be evaluated against: it answers keys with values, objects or collections.
///
/// ```swift
/// struct Book: KeyValueSource {
///     var title: String
///     func predicateValue(forKey key: String) throws(FormatPredicateError) -> EvaluatedValue {
///         guard key == "title" else { throw .evaluation("Book has no key '\(key)'") }
///         return .value(.string(title))
///     }
/// }
/// try FormatPredicate("title BEGINSWITH 'Du'").evaluate(with: Book(title: "Dune"))   // true
/// ```
public protocol KeyValueSource {
    /// The value for `key`; throw ``FormatPredicateError/evaluation(_:)`` naming the key when there is none.
    func predicateValue(forKey key: String) throws(FormatPredicateError) -> EvaluatedValue

    /// Whether the collection `key` answers has an order that `[FIRST]`, `[LAST]` and `[n]` may pick from: false for
    /// an unordered to-many relationship, whose objects have no n-th (SQL refuses to pick one, and the evaluator
    /// refuses alike, rather than answer by whatever order the set happens to hold). True unless a source says so.
    func keepsOrder(forKey key: String) -> Bool
}

extension KeyValueSource {
    /// Every collection keeps its order, for a source that does not say otherwise.
    public func keepsOrder(forKey key: String) -> Bool { true }
}

extension Dictionary: KeyValueSource where Key == String, Value == EvaluatedValue {
    /// A missing key reads as nil, as key-value coding on a dictionary does.
    public func predicateValue(forKey key: String) throws(FormatPredicateError) -> EvaluatedValue {
        self[key] ?? .value(.null)
    }
}

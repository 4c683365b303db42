/// Why a predicate could not be parsed, bound, evaluated or compiled; each message names the place.
public enum FormatPredicateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The format string is malformed at `offset` (counted in characters from 0).
    case syntax(offset: Int, message: String)
    /// A format argument is missing, extra, or of a type that cannot be used.
    case argument(offset: Int, message: String)
    /// A `$variable` has no value.
    case unboundVariable(String)
    /// Evaluation met a value it cannot use (an unknown key, a string compared with a relationship).
    case evaluation(String)
    /// The SQL compiler cannot express this part of the predicate.
    case unsupported(String)
    /// A key path names a key the entity does not have.
    case unknownKey(entity: String, key: String)
    /// A value of one kind stands where another is needed: a string in arithmetic, a date compared with a number.
    case typeMismatch(expression: String, expected: String, found: String)

    /// The character offset of a parse or argument error.
    public var offset: Int? {
        switch self {
        case .syntax(let offset, _), .argument(let offset, _): offset
        default: nil
        }
    }

    public var description: String {
        switch self {
        case let .syntax(offset, message): "\(message) at offset \(offset)"
        case let .argument(offset, message): "\(message) at offset \(offset)"
        case let .unboundVariable(name): "variable $\(name) has no value; substitute it before evaluating"
        case let .evaluation(message): message
        case let .unsupported(message): "cannot compile to SQL: \(message)"
        case let .unknownKey(entity, key): "entity \(entity) has no property '\(key)'"
        case let .typeMismatch(expression, expected, found): "\(expression) needs \(expected), not \(found)"
        }
    }
}

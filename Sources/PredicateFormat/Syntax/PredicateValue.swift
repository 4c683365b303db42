import Foundation

/// A constant of the predicate language: what literals and `%@` arguments become, and what key paths yield.
public enum PredicateValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)

    /// The value as a Double, when it is a number (Booleans count as 0 and 1, as NSNumber does).
    public var number: Double? {
        switch self {
        case .int(let v): Double(v)
        case .double(let v): v
        case .decimal(let v): NSDecimalNumber(decimal: v).doubleValue
        case .bool(let v): v ? 1 : 0
        default: nil
        }
    }

    /// Whether this is ``null``.
    public var isNull: Bool { self == .null }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "nil"
        case .bool: "Bool"
        case .int: "integer"
        case .double: "floating-point number"
        case .decimal: "Decimal"
        case .string: "String"
        case .date: "Date"
        case .data: "Data"
        case .uuid: "UUID"
        case .url: "URL"
        }
    }
}

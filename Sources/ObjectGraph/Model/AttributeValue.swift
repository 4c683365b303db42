import Foundation

/// A single attribute value as the object graph stores it: the currency between objects, snapshots and stores.
///
/// Every attribute type of a ``Model`` maps to exactly one case, so a value read back from a store compares equal
/// to the value that was saved. Codable attributes travel as ``data(_:)`` holding their JSON encoding.
///
/// ```swift
/// let title: AttributeValue = .string("Dune")
/// ```
public enum AttributeValue: Sendable, Hashable, Codable {
    /// No value (`nil` for an optional attribute).
    case null
    /// A Boolean.
    case bool(Bool)
    /// Any integer attribute (Int16, Int32 and Int64 all travel as Int64; the attribute's type bounds it).
    case int(Int64)
    /// A Double or Float attribute.
    case double(Double)
    /// A String attribute.
    case string(String)
    /// A Decimal attribute, kept exactly.
    case decimal(Decimal)
    /// A Date attribute.
    case date(Date)
    /// Binary data, and the JSON encoding of Codable attributes.
    case data(Data)
    /// A UUID attribute.
    case uuid(UUID)
    /// A URL attribute.
    case url(URL)
    /// A reference to an object: what dictionary results hold for a to-one relationship among their properties, as
    /// Core Data returns the related object's `NSManagedObjectID`. No attribute type accepts it, so it is never saved.
    case objectID(ObjectID)

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short name of the value's kind, used in error messages (the predicate language's names).
    public var kindName: String { predicateValue.kindName }

    /// The value as a Double, for numeric range checks and cross-type numeric comparison (as the predicate
    /// language reads numbers).
    public var numericValue: Double? { predicateValue.number }
}

extension AttributeValue: CustomStringConvertible {
    /// A readable rendering, used in error messages and the command-line tool.
    public var description: String {
        switch self {
        case .null: "nil"
        case .bool(let value): String(value)
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): "\"\(value)\""
        case .decimal(let value): "\(value)"
        case .date(let value): value.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        case .data(let value): "<\(value.count) bytes>"
        case .uuid(let value): value.uuidString
        case .url(let value): value.absoluteString
        case .objectID(let value): value.description
        }
    }
}

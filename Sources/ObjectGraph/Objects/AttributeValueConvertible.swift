import Foundation

/// A Swift type that stores as an ``AttributeValue``: the typed accessors of macro entities and untyped
/// `setValue(_:forKey:)` use it.
public protocol AttributeValueConvertible {
    /// The attribute type a property of this Swift type has in a model.
    static var attributeType: AttributeType { get }
    /// The value as stored.
    var attributeValue: AttributeValue { get }
    /// Reads a stored value back; nil when the value is of another kind.
    init?(attributeValue: AttributeValue)
}

extension String: AttributeValueConvertible {
    public static var attributeType: AttributeType { .string }
    public var attributeValue: AttributeValue { .string(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .string(let value) = attributeValue else { return nil }
        self = value
    }
}

extension Bool: AttributeValueConvertible {
    public static var attributeType: AttributeType { .bool }
    public var attributeValue: AttributeValue { .bool(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .bool(let value) = attributeValue else { return nil }
        self = value
    }
}

/// Integers share one stored kind; each width refuses values it cannot hold instead of trapping.
public protocol IntegerAttribute: AttributeValueConvertible, FixedWidthInteger {}

extension IntegerAttribute {
    public var attributeValue: AttributeValue { .int(Int64(self)) }
    public init?(attributeValue: AttributeValue) {
        guard case .int(let value) = attributeValue, let exact = Self(exactly: value) else { return nil }
        self = exact
    }
}

extension Int: IntegerAttribute { public static var attributeType: AttributeType { .int64 } }
extension Int64: IntegerAttribute { public static var attributeType: AttributeType { .int64 } }
extension Int32: IntegerAttribute { public static var attributeType: AttributeType { .int32 } }
extension Int16: IntegerAttribute { public static var attributeType: AttributeType { .int16 } }

extension Double: AttributeValueConvertible {
    public static var attributeType: AttributeType { .double }
    public var attributeValue: AttributeValue { .double(self) }
    public init?(attributeValue: AttributeValue) {
        switch attributeValue {
        case .double(let value): self = value
        case .int(let value): self = Double(value)
        default: return nil
        }
    }
}

extension Float: AttributeValueConvertible {
    public static var attributeType: AttributeType { .float }
    public var attributeValue: AttributeValue { .double(Double(self)) }
    public init?(attributeValue: AttributeValue) {
        guard let value = Double(attributeValue: attributeValue) else { return nil }
        self = Float(value)
    }
}

extension Decimal: AttributeValueConvertible {
    public static var attributeType: AttributeType { .decimal }
    public var attributeValue: AttributeValue { .decimal(self) }
    public init?(attributeValue: AttributeValue) {
        switch attributeValue {
        case .decimal(let value): self = value
        case .int(let value): self = Decimal(value)
        default: return nil
        }
    }
}

extension Date: AttributeValueConvertible {
    public static var attributeType: AttributeType { .date }
    public var attributeValue: AttributeValue { .date(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .date(let value) = attributeValue else { return nil }
        self = value
    }
}

extension Data: AttributeValueConvertible {
    public static var attributeType: AttributeType { .binary }
    public var attributeValue: AttributeValue { .data(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .data(let value) = attributeValue else { return nil }
        self = value
    }
}

extension UUID: AttributeValueConvertible {
    public static var attributeType: AttributeType { .uuid }
    public var attributeValue: AttributeValue { .uuid(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .uuid(let value) = attributeValue else { return nil }
        self = value
    }
}

extension URL: AttributeValueConvertible {
    public static var attributeType: AttributeType { .uri }
    public var attributeValue: AttributeValue { .url(self) }
    public init?(attributeValue: AttributeValue) {
        guard case .url(let value) = attributeValue else { return nil }
        self = value
    }
}

extension AttributeValue: AttributeValueConvertible {
    /// An untyped value has no single attribute type; binary is the most permissive for documentation.
    public static var attributeType: AttributeType { .binary }
    public var attributeValue: AttributeValue { self }
    public init?(attributeValue: AttributeValue) { self = attributeValue }
}

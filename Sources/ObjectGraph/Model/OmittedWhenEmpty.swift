/// A field of a model's declarations that is encoded only when it is not empty (a `false` flag, an empty list), so
/// that a model not using a field added in a later release encodes, and hashes, exactly as before the field existed:
/// stores made before then still open.
///
/// ```swift
/// @OmittedWhenEmpty public var userInfo: [String: String] = [:]
/// ```
@propertyWrapper
public struct OmittedWhenEmpty<Value: Codable & Hashable & Sendable & HasEmptyValue>: Codable, Hashable, Sendable {
    /// The field's value.
    public var wrappedValue: Value

    /// Wraps a value.
    public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }

    /// Decodes the value itself (a field left out is decoded as empty by the container).
    public init(from decoder: any Decoder) throws { wrappedValue = try decoder.singleValueContainer().decode(Value.self) }

    /// Encodes the value itself (the container leaves an empty one out).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

/// A type with a value that means "nothing here": `false`, an empty array or dictionary.
public protocol HasEmptyValue {
    /// The value that means "nothing here".
    static var emptyValue: Self { get }
}

extension Bool: HasEmptyValue { public static var emptyValue: Bool { false } }
extension Array: HasEmptyValue { public static var emptyValue: [Element] { [] } }
extension Dictionary: HasEmptyValue { public static var emptyValue: [Key: Value] { [:] } }

extension KeyedEncodingContainer {
    mutating func encode<Value>(_ field: OmittedWhenEmpty<Value>, forKey key: Key) throws {
        guard field.wrappedValue != Value.emptyValue else { return }
        try encode(field.wrappedValue, forKey: key)
    }
}

extension KeyedDecodingContainer {
    func decode<Value>(_ type: OmittedWhenEmpty<Value>.Type, forKey key: Key) throws -> OmittedWhenEmpty<Value> {
        OmittedWhenEmpty(wrappedValue: try decodeIfPresent(Value.self, forKey: key) ?? Value.emptyValue)
    }
}

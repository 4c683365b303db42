import Foundation

/// An attribute of an entity: its name, type, optionality, default and validation rules.
///
/// ```swift
/// let title = AttributeDescription("title", .string, isOptional: false, minLength: 1)
/// ```
public struct AttributeDescription: Sendable, Hashable, Codable {
    /// The attribute's name, also its column's name in an SQLite store.
    public var name: String
    /// The attribute's type.
    public var type: AttributeType
    /// Whether `nil` is a valid value at save time.
    public var isOptional: Bool
    /// The value a newly inserted object starts with.
    public var defaultValue: AttributeValue
    /// The smallest valid numeric value, for numeric attributes.
    public var minValue: Double?
    /// The largest valid numeric value, for numeric attributes.
    public var maxValue: Double?
    /// The smallest valid length, in characters, for String attributes (in bytes for Binary).
    public var minLength: Int?
    /// The largest valid length, in characters, for String attributes (in bytes for Binary).
    public var maxLength: Int?
    /// A regular expression the whole String value must match.
    public var pattern: String?
    /// Whether the store keeps an index on this attribute alone.
    public var isIndexed: Bool

    /// Creates an attribute description.
    public init(
        _ name: String, _ type: AttributeType, isOptional: Bool = true, defaultValue: AttributeValue = .null,
        minValue: Double? = nil, maxValue: Double? = nil, minLength: Int? = nil, maxLength: Int? = nil,
        pattern: String? = nil, isIndexed: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.minValue = minValue
        self.maxValue = maxValue
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
        self.isIndexed = isIndexed
    }
}

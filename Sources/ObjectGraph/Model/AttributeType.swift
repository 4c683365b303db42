import Foundation

/// The type of an attribute, as Core Data's attribute types.
public enum AttributeType: Sendable, Hashable, Codable {
    case string
    case bool
    case int16
    case int32
    case int64
    case double
    case float
    case decimal
    case date
    case binary
    case uuid
    case uri
    /// A Codable value stored as its JSON encoding; the name is the Swift type's, for documentation and hashing.
    case codable(typeName: String)
    /// Core Data's Undefined type: a transient attribute that holds a value of any kind, in memory only. Only a
    /// transient attribute may have it, as in Core Data (an Xcode model's transient attribute with no type).
    ///
    /// ```swift
    /// AttributeDescription("scratch", .undefined, isTransient: true)
    /// ```
    case undefined

    /// The name used in the model's canonical form and in error messages.
    public var name: String {
        switch self {
        case .string: "String"
        case .bool: "Boolean"
        case .int16: "Integer 16"
        case .int32: "Integer 32"
        case .int64: "Integer 64"
        case .double: "Double"
        case .float: "Float"
        case .decimal: "Decimal"
        case .date: "Date"
        case .binary: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .codable(let typeName): "Codable(\(typeName))"
        case .undefined: "Undefined"
        }
    }

    /// Whether values are data (Binary, Transformable): what a store may keep beside a row.
    var isData: Bool {
        switch self {
        case .binary, .codable: true
        default: false
        }
    }

    /// Whether values are integers (Integer 16, 32 and 64).
    var isInteger: Bool {
        switch self {
        case .int16, .int32, .int64: true
        default: false
        }
    }

    /// Whether the type's values fit one word of ``AttributeValues`` (numbers, Booleans, dates); the others (strings,
    /// data, decimals, UUIDs, URLs, Codable values) are kept aside.
    var fitsWord: Bool {
        switch self {
        case .bool, .int16, .int32, .int64, .double, .float, .date: true
        case .string, .decimal, .binary, .uuid, .uri, .codable, .undefined: false
        }
    }

    /// Checks that `value` can be stored in an attribute of this type, narrowing nothing silently.
    ///
    /// Integers must fit the attribute's width; a Float attribute accepts any Double (Core Data rounds it too).
    func accepts(_ value: AttributeValue) -> Bool {
        switch (self, value) {
        case (_, .null), (.undefined, _): true
        case (.string, .string), (.bool, .bool), (.decimal, .decimal), (.date, .date),
             (.binary, .data), (.codable, .data), (.uuid, .uuid), (.uri, .url):
            true
        case (.int16, .int(let v)): v >= Int64(Int16.min) && v <= Int64(Int16.max)
        case (.int32, .int(let v)): v >= Int64(Int32.min) && v <= Int64(Int32.max)
        case (.int64, .int): true
        case (.double, .double), (.float, .double): true
        default: false
        }
    }

    /// Converts a value of a neighbouring kind where no information is lost (an integer literal for a Double).
    func coerce(_ value: AttributeValue) -> AttributeValue {
        switch (self, value) {
        case (.double, .int(let v)), (.float, .int(let v)): .double(Double(v))
        case (.decimal, .int(let v)): .decimal(Decimal(v))
        default: value
        }
    }
}

import Foundation

/// An attribute of an entity: its name, type, optionality, default and validation rules.
///
/// ```swift
/// let title = AttributeDescription("title", .string, isOptional: false, minLength: 1)
/// ```
public struct AttributeDescription: Sendable, Hashable, Codable {
    /// The attribute's name, also its column's name in an SQLite store (see ``Model``'s storage names).
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
    /// Whether the attribute lives in memory only: its changes are tracked and validated and reach parent contexts,
    /// but no store keeps it, so an object read from a store starts with the default value, and a refault drops it.
    /// A fetch from the store cannot test it.
    @OmittedWhenEmpty public var isTransient: Bool = false
    /// For a derived attribute, the expression the store computes it from at save (see ``Derivation``); the app
    /// reads it and cannot set it.
    public var derivation: String?
    /// For a transformable attribute, the registered ``ValueTransformers`` entry that turns its values into the data
    /// it stores (``ManagedObject/transformedValue(forKey:)``); nil for Codable values stored as JSON. On an
    /// attribute of another type (Xcode leaves one after a type change) it is kept and ignored, as Core Data does.
    public var valueTransformerName: String?
    /// The name the attribute had in the model a migration comes from (Xcode's renaming ID, `elementID`).
    public var renamingIdentifier: String?
    /// Text that changes the model's version hash without changing the attribute (Xcode's hash modifier).
    public var versionHashModifier: String?
    /// Whether persistent history keeps the attribute's last value in the record of the object's deletion (Core
    /// Data's "preserve after deletion", Xcode's `preserveAfterDeletion`): a process merging the history later can
    /// still tell which object went, by a value it knows. It does not change the model's version hash.
    ///
    /// ```swift
    /// var isbn = AttributeDescription("isbn", .string)
    /// isbn.preservesValueInHistoryOnDeletion = true
    /// ```
    @OmittedWhenEmpty public var preservesValueInHistoryOnDeletion: Bool = false
    /// Free-form information for the app (Xcode's user info). It does not change the model's version hash.
    @OmittedWhenEmpty public var userInfo: [String: String] = [:]
    /// Whether an SQLite store may keep a Binary or Transformable value of this attribute in a file beside the store
    /// rather than in its row, as Core Data's external storage does: values of ``ExternalBinaryData/threshold`` bytes
    /// or more are then files in the folder `<store file>-external`, which belongs to the store (copy it with the
    /// store file). Reading, saving, migration and history are the same either way; a fetch cannot compare such a
    /// value's bytes. The PostgreSQL store keeps every value in its row (the server moves large values out of line
    /// itself), the in-memory store in memory. It does not change the model's version hash: a row may hold its value
    /// either way, so turning it on or off needs no migration.
    ///
    /// ```swift
    /// var cover = AttributeDescription("cover", .binary)
    /// cover.allowsExternalBinaryDataStorage = true
    /// ```
    @OmittedWhenEmpty public var allowsExternalBinaryDataStorage: Bool = false

    /// Creates an attribute description.
    public init(
        _ name: String, _ type: AttributeType, isOptional: Bool = true, defaultValue: AttributeValue = .null,
        minValue: Double? = nil, maxValue: Double? = nil, minLength: Int? = nil, maxLength: Int? = nil,
        pattern: String? = nil, isIndexed: Bool = false, isTransient: Bool = false, derivation: String? = nil,
        originalName: String? = nil
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
        self.isTransient = isTransient
        self.derivation = derivation
        self.renamingIdentifier = originalName
    }
}

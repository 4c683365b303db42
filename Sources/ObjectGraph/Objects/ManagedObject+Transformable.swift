import Foundation

/// Transformable attributes with a value transformer: values in, data stored, values out.
extension ManagedObject {
    /// The value of the transformable attribute `key`, as its value transformer makes it from the stored data (nil
    /// when there is none).
    ///
    /// ```swift
    /// let tags = try event.transformedValue(forKey: "tags") as? [String]
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/wrongPropertyKind(entity:key:reason:)`` when `key` has no value transformer or
    ///   its transformer is not registered, or the transformer's error when the data does not read back.
    public func transformedValue(forKey key: String) throws -> Any? {
        let transformer = try valueTransformer(forKey: key)
        guard case .data(let data) = try value(forKey: key) else { return nil }
        return try transformer.value(from: data)
    }

    /// Sets the transformable attribute `key` to the data its value transformer makes of `value` (nil clears it).
    public func setTransformedValue(_ value: Any?, forKey key: String) throws {
        let transformer = try valueTransformer(forKey: key)
        try setValue(try value.map { try transformer.data(from: $0) }, forKey: key)
    }

    private func valueTransformer(forKey key: String) throws -> any AttributeValueTransformer {
        let attribute = entity.attributes[try attributeIndex(key)]
        // A transformer named on an attribute of another type is ignored, as Core Data ignores it.
        guard case .codable = attribute.type else {
            throw ObjectGraphError.wrongPropertyKind(
                entity: entity.name, key: key, reason: "it is a \(attribute.type.name) attribute, not a Transformable one: read and set its value")
        }
        guard let name = attribute.valueTransformerName else {
            throw ObjectGraphError.wrongPropertyKind(entity: entity.name, key: key, reason: "it names no value transformer")
        }
        guard let transformer = ValueTransformers.transformer(named: name) else {
            throw ObjectGraphError.wrongPropertyKind(
                entity: entity.name, key: key, reason: "its value transformer '\(name)' is not registered (ValueTransformers.register(_:named:))")
        }
        return transformer
    }
}

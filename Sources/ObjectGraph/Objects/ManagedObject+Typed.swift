import Foundation

/// The typed accessors the ``Entity()`` macro generates call these. A typed getter cannot throw, so where the
/// untyped API would throw, these trap with the same message (a fault whose row is gone, a deleted object).
extension ManagedObject {
    func orTrap<T>(_ body: () throws -> T) -> T {
        do {
            return try body()
        } catch {
            fatalError("ObjectGraph: \(error)")
        }
    }

    /// Reads a stored attribute as `T`.
    public func _attribute<T: AttributeValueConvertible>(_ key: String, as type: T.Type = T.self) -> T {
        orTrap {
            let value = try value(forKey: key)
            guard let typed = T(attributeValue: value) else {
                throw ObjectGraphError.typeMismatch(entity: entity.name, key: key, expected: "\(T.self)", got: "\(value.kindName) \(value)")
            }
            return typed
        }
    }

    /// Reads an optional stored attribute as `T?`.
    public func _attribute<T: AttributeValueConvertible>(_ key: String, as type: T?.Type = T?.self) -> T? {
        orTrap {
            let value = try value(forKey: key)
            if value.isNull { return nil }
            guard let typed = T(attributeValue: value) else {
                throw ObjectGraphError.typeMismatch(entity: entity.name, key: key, expected: "\(T.self)", got: "\(value.kindName) \(value)")
            }
            return typed
        }
    }

    /// Writes a stored attribute.
    public func _setAttribute<T: AttributeValueConvertible>(_ value: T?, forKey key: String) {
        orTrap { try setValue(value, forKey: key) }
    }

    /// Reads a Codable attribute, stored as JSON.
    public func _codable<T: Codable>(_ key: String, as type: T.Type = T.self) -> T {
        orTrap {
            guard case .data(let data) = try value(forKey: key) else {
                throw ObjectGraphError.typeMismatch(entity: entity.name, key: key, expected: "\(T.self)", got: "nil")
            }
            return try JSONDecoder().decode(T.self, from: data)
        }
    }

    /// Reads an optional Codable attribute, stored as JSON.
    public func _codable<T: Codable>(_ key: String, as type: T?.Type = T?.self) -> T? {
        orTrap {
            guard case .data(let data) = try value(forKey: key) else { return nil }
            return try JSONDecoder().decode(T.self, from: data)
        }
    }

    /// Writes a Codable attribute as JSON.
    public func _setCodable<T: Codable>(_ value: T?, forKey key: String) {
        orTrap {
            let encoded = try value.map { try JSONEncoder().encode($0) }
            try setAttributeValue(encoded.map(AttributeValue.data) ?? .null, at: try attributeIndex(key))
        }
    }

    /// Reads a to-one relationship as `T?`.
    public func _toOne<T: ManagedObject>(_ key: String, as type: T.Type = T.self) -> T? {
        orTrap { try object(forKey: key) as? T }
    }

    /// Writes a to-one relationship.
    public func _setToOne<T: ManagedObject>(_ value: T?, forKey key: String) {
        orTrap { try setObject(value, forKey: key) }
    }

    /// Reads a to-many relationship as an array (in order for an ordered one).
    public func _toMany<T: ManagedObject>(_ key: String, as type: T.Type = T.self) -> [T] {
        orTrap { try objects(forKey: key).compactMap { $0 as? T } }
    }

    /// Writes a to-many relationship.
    public func _setToMany<T: ManagedObject>(_ value: some Sequence<T>, forKey key: String) {
        orTrap { try setObjects(Array(value), forKey: key) }
    }
}

import Foundation

/// The typed accessors the `@Entity` macro generates call these. A typed getter cannot throw, so where the
/// untyped API would throw, these trap with the same message (a fault whose row is gone, a deleted object).
extension ManagedObject {
    func orTrap<T>(_ body: () throws -> T) -> T {
        do {
            return try body()
        } catch ObjectGraphError.objectNotFound(let id) where id == objectID && state?.fillInaccessible(self) == true {
            // An inaccessible fault, now nil and zero values (``ObjectContext/shouldDeleteInaccessibleFaults``).
            return orTrap(body)
        } catch {
            fatalError("ObjectGraph: \(error)")
        }
    }

    /// Reads a stored attribute as `T`. `position` is where the macro expects the attribute among the entity's
    /// attributes (-1 when it cannot know): a hit skips the name lookup, a miss falls back to it.
    ///
    /// Inlinable so the conversion to `T` is specialized in the entity's module; the lookup itself is not generic.
    @inlinable
    public func _attribute<T: AttributeValueConvertible>(_ key: String, at position: Int = -1, as type: T.Type = T.self) -> T {
        // 64-bit integers, the commonest attributes, are read from their word without building an AttributeValue.
        // The type test folds away in each specialization; the bit cast is between identical types.
        if T.self == Int64.self || (T.self == Int.self && Int.bitWidth == 64), let word = _int64Attribute(key, at: position) {
            return unsafeBitCast(word, to: T.self)
        }
        let value = _attributeValue(key, at: position)
        if let typed = T(attributeValue: value) { return typed }
        _attributeTypeMismatch(key, value, expected: "\(T.self)")
    }

    /// Reads an optional stored attribute as `T?`.
    @inlinable
    public func _attribute<T: AttributeValueConvertible>(_ key: String, at position: Int = -1, as type: T?.Type = T?.self) -> T? {
        let value = _attributeValue(key, at: position)
        if value.isNull { return nil }
        if let typed = T(attributeValue: value) { return typed }
        _attributeTypeMismatch(key, value, expected: "\(T.self)")
    }

    /// Writes a stored attribute.
    @inlinable
    public func _setAttribute<T: AttributeValueConvertible>(_ value: T?, forKey key: String, at position: Int = -1) {
        // 64-bit integers are written to their word, as they are read.
        if T.self == Int64.self || (T.self == Int.self && Int.bitWidth == 64), let value,
           _setInt64Attribute(unsafeBitCast(value, to: Int64.self), forKey: key, at: position) {
            return
        }
        _setAttributeValue(value?.attributeValue ?? .null, forKey: key, at: position)
    }

    /// Whether the values are loaded and the caller, running on `thread`, may read them. The state is looked at
    /// only here, with no call in between, so it needs no retain (see ``ContextState/isAccessible(onThread:)``).
    @inline(__always)
    func isLoadedAndAccessible(onThread thread: UInt) -> Bool {
        guard !isFaultStorage, let state else { return false }
        return state.isAccessible(onThread: thread)
    }

    /// Whether `position` is where attribute `key` sits (the macro's guess, which a model may contradict).
    @inline(__always)
    func isAttribute(_ key: String, at position: Int) -> Bool {
        let names = entity.attributeNames
        return position >= 0 && position < names.count && names[position] == key
    }

    /// The index of attribute `key`: `position` when it names that attribute, else the name lookup.
    @inline(__always)
    func attributeIndex(_ key: String, at position: Int) throws -> Int {
        if isAttribute(key, at: position) { return position }
        return try attributeIndex(key)
    }

    /// The stored value of attribute `key`, loading a fault; traps where ``value(forKey:)`` would throw.
    public func _attributeValue(_ key: String, at position: Int) -> AttributeValue {
        // The usual case first, in one pass: a loaded object on its context's queue, at the macro's position.
        if isLoadedAndAccessible(onThread: QueueExecutor.currentThread), isAttribute(key, at: position) {
            observedAccess(position)
            return values[position]
        }
        return orTrap {
            let index = try attributeIndex(key, at: position)
            if isNewAndDetached { return values[index] }
            _ = try fulfilledState()
            observedAccess(index)
            return values[index]
        }
    }

    /// The integer attribute `key` when the usual case holds (a loaded object on its context's queue, the macro's
    /// position, an integer stored); nil sends the caller to ``_attributeValue(_:at:)``, which handles the rest.
    public func _int64Attribute(_ key: String, at position: Int) -> Int64? {
        guard isLoadedAndAccessible(onThread: QueueExecutor.currentThread), isAttribute(key, at: position) else { return nil }
        observedAccess(position)
        return values.int64(at: position)
    }

    /// Writes the integer attribute `key` when the usual case holds (a loaded object, not deleted, on its context's
    /// queue, the macro's position, an Integer 64 attribute the store does not derive, no property tracked by
    /// Observation); false sends the caller to ``_setAttributeValue(_:forKey:at:)``, which handles the rest. Half of
    /// a large insert was building, testing and taking apart an ``AttributeValue`` per integer.
    public func _setInt64Attribute(_ value: Int64, forKey key: String, at position: Int) -> Bool {
        guard !isDeleted, observationRegistrar == nil, isLoadedAndAccessible(onThread: QueueExecutor.currentThread),
              isAttribute(key, at: position), case .int64 = entity.attributeTypes[position],
              entity.derivedAttributes.isEmpty || entity.attributes[position].derivation == nil
        else { return false }
        if isInserted {
            values.setInt(value, at: position)
            noteInsertChanged()
            return true
        }
        // Setting the value it already has is not a change.
        if values.int64(at: position) == value { return true }
        values.setInt(value, at: position)
        state.unsafelyUnwrapped.markUpdated(self)
        return true
    }

    /// Sets attribute `key`; traps where ``setValue(_:forKey:)`` would throw.
    public func _setAttributeValue(_ value: AttributeValue, forKey key: String, at position: Int) {
        do {
            try setAttributeValue(value, at: try attributeIndex(key, at: position))
        } catch {
            fatalError("ObjectGraph: \(error)")
        }
    }

    /// Traps for a stored value that does not convert to the property's type.
    public func _attributeTypeMismatch(_ key: String, _ value: AttributeValue, expected: String) -> Never {
        fatalError("ObjectGraph: \(ObjectGraphError.typeMismatch(entity: entity.name, key: key, expected: expected, got: "\(value.kindName) \(value)"))")
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

    /// Reads a to-one relationship as `T?`. `position` is where the macro expects the relationship among the
    /// entity's relationships (-1 when it cannot know): a hit skips the name lookup, a miss falls back to it.
    ///
    /// Inlinable so the cast to `T` is specialized in the entity's module: unspecialized, each read looked up `T`'s
    /// metadata at run time. The read itself is not generic.
    @inlinable
    public func _toOne<T: ManagedObject>(_ key: String, at position: Int = -1, as type: T.Type = T.self) -> T? {
        _toOneObject(key, at: position) as? T
    }

    /// The destination of to-one relationship `key` for a typed getter: reported to Observation, trapping where
    /// ``object(forKey:)`` would throw.
    public func _toOneObject(_ key: String, at position: Int = -1) -> ManagedObject? {
        observedRelationshipAccess(key)
        return orTrap { try object(forKey: key, at: position) }
    }

    /// Writes a to-one relationship.
    public func _setToOne<T: ManagedObject>(_ value: T?, forKey key: String) {
        observedMutation(observedRelationshipIndex(key)) { orTrap { try setObject(value, forKey: key) } }
    }

    /// Reads a to-many relationship as an array (in order for an ordered one); `position` and inlining as for
    /// ``_toOne(_:at:as:)``.
    @inlinable
    public func _toMany<T: ManagedObject>(_ key: String, at position: Int = -1, as type: T.Type = T.self) -> [T] {
        let objects = _toManyObjects(key, at: position)
        // Destinations of exactly `T`, the usual case, are handed over as they are, without a second array and a
        // dynamic cast per member; sound for the reason `ObjectContext.fetch(_:as:)` gives.
        if objects.allSatisfy({ Swift.type(of: $0) == T.self }) { return unsafeBitCast(objects, to: [T].self) }
        return objects.compactMap { $0 as? T }
    }

    /// The destinations of to-many relationship `key` for a typed getter: reported to Observation, trapping where
    /// ``objects(forKey:)`` would throw.
    public func _toManyObjects(_ key: String, at position: Int = -1) -> [ManagedObject] {
        observedRelationshipAccess(key)
        return orTrap { try objects(forKey: key, at: position) }
    }

    /// Writes a to-many relationship.
    public func _setToMany<T: ManagedObject>(_ value: some Sequence<T>, forKey key: String) {
        observedMutation(observedRelationshipIndex(key)) { orTrap { try setObjects(Array(value), forKey: key) } }
    }
}

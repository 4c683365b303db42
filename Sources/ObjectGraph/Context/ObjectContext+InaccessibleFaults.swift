import Foundation

/// Core Data's inaccessible faults: a fault whose row another context deleted (and saved) before it was read.
///
/// With ``ObjectContext/shouldDeleteInaccessibleFaults`` on, as by default, the typed properties an `@Entity` class
/// generates read such an object as Core Data's context shows it: every attribute nil, or zero for a property that
/// cannot be nil (0, false, an empty string, data or list, the reference date, the nil UUID), no to-one, empty
/// to-manys. The object is not one of the context's changes; a change made to it fails at save as a conflict (its
/// row is gone). The untyped API (``ManagedObject/value(forKey:)``, ``ManagedObject/object(forKey:)``) keeps
/// throwing ``ObjectGraphError/objectNotFound(_:)``, and so do the typed properties with the option off: they trap
/// with that message, as a getter cannot throw.
extension ObjectContext {
    /// Whether typed properties read a fault whose row is gone as an object of nil and zero values (true, the
    /// default, as Core Data's `shouldDeleteInaccessibleFaults`) or trap.
    ///
    /// ```swift
    /// try await context.perform { ctx in ctx.shouldDeleteInaccessibleFaults = false }
    /// ```
    public var shouldDeleteInaccessibleFaults: Bool {
        get { state.shouldDeleteInaccessibleFaults }
        set { state.shouldDeleteInaccessibleFaults = newValue }
    }
}

extension ContextState {
    /// Fills `object`, a fault whose row is gone below, with nil and zero values, when the context turns such faults
    /// into objects; false when it does not (the caller reports the missing row).
    func fillInaccessible(_ object: ManagedObject) -> Bool {
        guard shouldDeleteInaccessibleFaults, object.isFaultStorage, object.state === self, !object.isInserted else { return false }
        let entity = object.entity
        let values = AttributeValues(count: entity.attributes.count, othersCapacity: entity.attributes.count) { row in
            for (position, attribute) in entity.attributes.enumerated() {
                row.setAside(attribute.isOptional ? .null : attribute.type.zeroValue, at: position)
            }
        }
        // Version 0: no row has it, so a save of a change to the object is a conflict.
        let row = Snapshot(objectID: object.objectID, version: 0, values: values, toOne: Array(repeating: nil, count: entity.toOneCount))
        fill(object, from: row, awakens: false)
        for (index, relationship) in entity.relationships.enumerated() where relationship.isToMany {
            install([], asToMany: index, of: object, inverseSlot: nil)
        }
        object.isInaccessible = true
        return true
    }
}

extension AttributeType {
    /// What Core Data's inaccessible fault holds for a value that cannot be nil.
    var zeroValue: AttributeValue {
        switch self {
        case .string: .string("")
        case .bool: .bool(false)
        case .int16, .int32, .int64: .int(0)
        case .double, .float: .double(0)
        case .decimal: .decimal(0)
        case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
        case .binary: .data(Data())
        case .uuid: .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .uri, .codable, .undefined: .null
        }
    }
}

/// Untyped relationship access, for models built at run time (macro entities get typed properties).
extension ManagedObject {
    /// The index of relationship `key`: `position` when it names that relationship of that kind (the macro's guess,
    /// which a model may contradict), else the name lookup.
    @inline(__always)
    func relationshipIndex(_ key: String, at position: Int, toMany: Bool) throws -> Int {
        let names = entity.relationshipNames
        if position >= 0 && position < names.count && names[position] == key && (entity.toOneSlot[position] == nil) == toMany {
            return position
        }
        return try relationshipIndex(key, toMany: toMany)
    }

    /// The index of relationship `key`, which must be a to-many one if `toMany`, a to-one if not, either if nil.
    func relationshipIndex(_ key: String, toMany: Bool?) throws -> Int {
        guard let index = entity.relationshipIndex[key] else {
            if entity.attributeIndex[key] != nil {
                throw ObjectGraphError.wrongPropertyKind(entity: entity.name, key: key, reason: "is an attribute; use value(forKey:)")
            }
            if entity.fetchedProperties.contains(where: { $0.name == key }) {
                throw ObjectGraphError.wrongPropertyKind(entity: entity.name, key: key, reason: "is a fetched property; use objects(forKey:)")
            }
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
        }
        let relationship = entity.relationships[index]
        if let toMany, relationship.isToMany != toMany {
            throw ObjectGraphError.wrongPropertyKind(
                entity: entity.name, key: key,
                reason: relationship.isToMany ? "is a to-many relationship; use objects(forKey:)" : "is a to-one relationship; use object(forKey:)")
        }
        return index
    }

    /// The destination of the to-one relationship `key`, or nil. This object keeps it alive from now on, as Core
    /// Data's objects do; ``ObjectContext/refresh(_:mergeChanges:)`` to a fault lets go of it.
    public func object(forKey key: String) throws -> ManagedObject? {
        try object(forKey: key, at: -1)
    }

    /// ``object(forKey:)`` with the macro's guess of the relationship's position.
    func object(forKey key: String, at position: Int) throws -> ManagedObject? {
        if isNewAndDetached { return try detachedLinks(key, toMany: false).first }
        let index = try relationshipIndex(key, at: position, toMany: false)
        let state = try fulfilledState()
        guard let id = toOne[entity.toOneSlot[index]!] else { return nil }
        if let held = heldDestination(forRelationship: index, id: id, in: state) { return held }
        let destination = try state.object(with: id)
        hold(.object(destination), forRelationship: index)
        return destination
    }

    /// Sets the to-one relationship `key`, updating the inverse on both the old and the new destination.
    public func setObject(_ object: ManagedObject?, forKey key: String) throws {
        if isNewAndDetached { return try setDetachedLinks(object.map { [$0] } ?? [], forKey: key, toMany: false) }
        let index = try relationshipIndex(key, toMany: false)
        let state = try fulfilledState()
        try state.setToOne(self, index, to: object)
    }

    /// The objects of the to-many relationship `key` (in order, for an ordered relationship), loading it if needed.
    /// This object keeps them alive from now on, as Core Data's objects do.
    ///
    /// A fetched property is read the same way, as Core Data apps read one through `value(forKey:)`: `key` then
    /// names the fetched property, and the objects are those ``fetchedObjects(forKey:)`` fetches.
    ///
    /// ```swift
    /// let books = try author.objects(forKey: "books")
    /// let long = try author.objects(forKey: "longBooks")   // a fetched property
    /// ```
    public func objects(forKey key: String) throws -> [ManagedObject] {
        if entity.relationshipIndex[key] == nil, entity.fetchedProperties.contains(where: { $0.name == key }) {
            return try fetchedObjects(forKey: key)
        }
        return try objects(forKey: key, at: -1)
    }

    /// ``objects(forKey:)`` with the macro's guess of the relationship's position.
    func objects(forKey key: String, at position: Int) throws -> [ManagedObject] {
        if isNewAndDetached { return try detachedLinks(key, toMany: true) }
        let index = try relationshipIndex(key, at: position, toMany: true)
        let state = try fulfilledState()
        let ids = try state.loadedToMany(self, index).ids
        if let held = heldDestinations(forRelationship: index, ids: ids, in: state) { return held }
        let destinations = try ids.map { try state.object(with: $0) }
        hold(.objects(destinations), forRelationship: index)
        return destinations
    }

    /// Adds `object` to the to-many relationship `key` (at the end, for an ordered one), updating its inverse.
    public func addObject(_ object: ManagedObject, forKey key: String) throws {
        if isNewAndDetached {
            let members = try detachedLinks(key, toMany: true)
            return try setDetachedLinks(members.contains { $0 === object } ? members : members + [object], forKey: key, toMany: true)
        }
        let index = try relationshipIndex(key, toMany: true)
        let state = try fulfilledState()
        try state.addToMany(self, index, object)
    }

    /// Removes `object` from the to-many relationship `key`, updating its inverse.
    public func removeObject(_ object: ManagedObject, forKey key: String) throws {
        if isNewAndDetached { return try setDetachedLinks(try detachedLinks(key, toMany: true).filter { $0 !== object }, forKey: key, toMany: true) }
        let index = try relationshipIndex(key, toMany: true)
        let state = try fulfilledState()
        try state.removeFromToMany(self, index, object)
    }

    /// Replaces the contents of the to-many relationship `key` (keeping the given order for an ordered one).
    public func setObjects(_ objects: [ManagedObject], forKey key: String) throws {
        if isNewAndDetached { return try setDetachedLinks(objects, forKey: key, toMany: true) }
        let index = try relationshipIndex(key, toMany: true)
        let state = try fulfilledState()
        try state.setToMany(self, index, objects)
    }

    /// The IDs of the objects relationship `key` holds (none or one for a to-one), as Core Data's
    /// `objectIDs(forRelationshipNamed:)`: no destination is made or read, so a link to an object whose row is gone
    /// still gives its ID.
    ///
    /// ```swift
    /// let authorID = try book.objectIDs(forRelationshipNamed: "author").first
    /// ```
    public func objectIDs(forRelationshipNamed key: String) throws -> [ObjectID] {
        let index = try relationshipIndex(key, toMany: nil)
        let state = try fulfilledState()
        if let slot = entity.toOneSlot[index] { return toOne[slot].map { [state.coordinator.resolve($0)] } ?? [] }
        return try state.loadedToMany(self, index).ids
    }
}

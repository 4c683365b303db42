/// Everything an ``AtomicStore`` keeps, as plain Codable values: what an ``AtomicStoreFile`` writes and reads.
///
/// Objects are listed with their keys, versions, stored attribute values by name (nil values left out) and their
/// relationships by name: every to-one, and the to-manys whose contents a store keeps apart from the destinations'
/// to-ones (``ModelRelationship/keepsContentsApart``: many-to-many relationships and ordered ones). A to-many kept
/// by its inverse's to-ones is not listed: the destinations' to-ones say it.
public struct AtomicStoreContents: Sendable, Hashable, Codable {
    /// One stored object.
    public struct Object: Sendable, Hashable, Codable {
        /// The object's permanent ID: its entity and key.
        public var objectID: ObjectID
        /// The object's version, bumped by every saved change (optimistic locking).
        public var version: Int64
        /// The stored attributes' values by name; an attribute left out is nil.
        public var values: [String: AttributeValue]
        /// Relationships by name: a to-one's destination as a list of one, a to-many's destinations in order.
        public var relationships: [String: [ObjectID]]

        /// An object with its values and relationships.
        public init(objectID: ObjectID, version: Int64, values: [String: AttributeValue], relationships: [String: [ObjectID]] = [:]) {
            (self.objectID, self.version, self.values, self.relationships) = (objectID, version, values, relationships)
        }
    }

    /// The store's identifier, chosen when it was created: object URIs name it.
    public var storeIdentifier: String
    /// The ``Model/versionHash`` of the model the objects were written with; a store opened with another model is
    /// refused.
    public var modelVersionHash: String
    /// Every object, by entity and key.
    public var objects: [Object]
    /// The last key handed out in each inheritance tree (by root entity name): keys are never handed out twice,
    /// even after their objects are deleted.
    public var lastKeys: [String: Int64]
    /// The app's own metadata (``PersistentStoreCoordinator/setMetadata(_:)``).
    public var metadata: [String: String]

    /// Contents with the given objects.
    public init(
        storeIdentifier: String, modelVersionHash: String, objects: [Object] = [], lastKeys: [String: Int64] = [:],
        metadata: [String: String] = [:]
    ) {
        (self.storeIdentifier, self.modelVersionHash, self.objects) = (storeIdentifier, modelVersionHash, objects)
        (self.lastKeys, self.metadata) = (lastKeys, metadata)
    }
}

extension AtomicStoreContents {
    /// The contents of an in-memory store's rows, objects ordered by entity and key so that equal rows give equal
    /// files.
    init(_ state: InMemoryStore.Contents, identifier: String, model: Model) throws {
        var objects: [Object] = []
        var byEntity: [String: [Int]] = [:]
        for root in state.rows.keys.sorted() {
            for (key, row) in state.rows[root]!.sorted(by: { $0.key < $1.key }) {
                let entity = try model.entity(named: row.entityName)
                var values: [String: AttributeValue] = [:]
                for index in entity.storedAttributes where row.values[index] != .null {
                    values[entity.attributes[index].name] = row.values[index]
                }
                var relationships: [String: [ObjectID]] = [:]
                for (index, relationship) in entity.relationships.enumerated() {
                    if let slot = entity.toOneSlot[index], slot < entity.storedToOneCount, let destination = row.toOne[slot] {
                        relationships[relationship.name] = [destination]
                    }
                }
                byEntity[entity.name, default: []].append(objects.count)
                objects.append(Object(objectID: ObjectID(entityName: entity.name, rawKey: key), version: row.version, values: values, relationships: relationships))
            }
        }
        // The lists kept apart, each relationship's for all its owners at once.
        for (entityName, positions) in byEntity {
            let entity = try model.entity(named: entityName)
            for relationship in entity.relationships where relationship.isToMany && relationship.keepsContentsApart {
                let lists = try InMemoryStore.related(positions.map { objects[$0].objectID }, relationship, in: state, model: model)
                for (position, destinations) in zip(positions, lists) where !destinations.isEmpty {
                    objects[position].relationships[relationship.name] = destinations
                }
            }
        }
        self.init(storeIdentifier: identifier, modelVersionHash: model.versionHash, objects: objects, lastKeys: state.sequence, metadata: state.metadata)
    }

    /// The rows of an in-memory store holding these contents, every name and link checked against `model`.
    ///
    /// - Throws: ``ObjectGraphError/storeReadFailed(path:reason:)`` naming the object and the name or link that
    ///   does not fit the model.
    func rows(model: Model, location: String) throws -> InMemoryStore.Contents {
        func refuse(_ reason: String) -> ObjectGraphError { .storeReadFailed(path: location, reason: reason) }
        var state = InMemoryStore.Contents()
        var toMany: [ChangeSet.ToManyContents] = []
        for object in objects {
            let id = object.objectID
            guard let entity = model.entityIfPresent(id.entityName), !entity.isAbstract else {
                throw refuse("object \(id) is of entity '\(id.entityName)', which the model has not (or is abstract)")
            }
            guard id.rawKey > 0, object.version > 0 else { throw refuse("object \(id) has key \(id.rawKey) and version \(object.version); both must be positive") }
            guard state.rows[entity.rootName]?[id.rawKey] == nil else { throw refuse("two objects of \(entity.rootName)'s tree have the key \(id.rawKey)") }
            var values = entity.defaultValues
            for index in entity.storedAttributes { values[index] = .null }
            for (name, value) in object.values {
                guard let index = entity.attributeIndex[name], !entity.attributes[index].isTransient else {
                    throw refuse("object \(id) has a value for '\(name)', which is not a stored attribute of \(entity.name)")
                }
                values[index] = value
            }
            var toOne = [ObjectID?](repeating: nil, count: entity.toOneCount)
            for (name, destinations) in object.relationships {
                guard let relationship = entity.relationship(named: name), !relationship.isTransient else {
                    throw refuse("object \(id) has a relationship '\(name)', which is not a stored relationship of \(entity.name)")
                }
                if let slot = entity.toOneSlot[entity.relationshipIndex[name]!] {
                    guard destinations.count <= 1 else { throw refuse("object \(id)'s to-one '\(name)' lists \(destinations.count) destinations") }
                    toOne[slot] = destinations.first
                } else if relationship.keepsContentsApart {
                    toMany.append(ChangeSet.ToManyContents(objectID: id, relationship: name, destinations: destinations))
                } else {
                    throw refuse("object \(id) lists the to-many '\(name)', which its destinations' '\(relationship.inverseName)' keeps")
                }
            }
            state.rows[entity.rootName, default: [:]][id.rawKey] = InMemoryStore.StoredRow(
                entityName: entity.name, version: object.version, values: values, toOne: toOne)
        }
        // Every link names an object of the destination's kind that the contents hold.
        for object in objects {
            let entity = try model.entity(named: object.objectID.entityName)
            for (name, destinations) in object.relationships {
                let expected = try model.entity(named: entity.relationship(named: name)!.destinationEntityName)
                for destination in destinations {
                    guard let kind = model.entityIfPresent(destination.entityName), kind.isKind(of: expected),
                          state.rows[kind.rootName]?[destination.rawKey]?.entityName == kind.name else {
                        throw refuse("object \(object.objectID)'s '\(name)' names \(destination), which is not a stored \(expected.name)")
                    }
                }
            }
        }
        try InMemoryStore.applyToMany(toMany, permanent: { $0 }, to: &state, model: model)
        state.sequence = lastKeys
        for (root, rows) in state.rows { state.sequence[root] = max(lastKeys[root] ?? 0, rows.keys.max() ?? 0) }
        state.metadata = metadata
        return state
    }
}

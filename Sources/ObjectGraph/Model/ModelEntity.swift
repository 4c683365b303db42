import PredicateFormat

/// An entity of a built ``Model``: its declaration with inheritance flattened and relationships resolved.
///
/// Immutable and shared by every context on the model. Attribute and relationship positions are stable, so objects
/// and snapshots keep values in arrays indexed by them rather than in dictionaries keyed by name.
public final class ModelEntity: Sendable {
    /// The entity's declaration, as given.
    public let description: EntityDescription
    /// The entity's name.
    public let name: String
    /// The root of this entity's inheritance tree; its table holds the rows of every entity in the tree.
    public let rootName: String
    /// The names of this entity and every entity below it.
    public let selfAndDescendantNames: [String]
    /// The table that holds the rows of this entity's tree in an SQL store (see `StorageNames`).
    public let tableName: String
    /// Every attribute, inherited ones first, in declaration order.
    public let attributes: [AttributeDescription]
    /// The column of each attribute, by position, in an SQL store (see `StorageNames`).
    public let attributeColumns: [String]
    /// Every relationship, inherited ones first, with storage resolved.
    public let relationships: [ModelRelationship]
    /// Whether the entity has no instances of its own.
    public var isAbstract: Bool { description.isAbstract }
    /// The uniqueness constraints of the entity and its ancestors.
    public let uniquenessConstraints: [[String]]

    /// Each attribute's position in ``attributes`` (and in a row's values), by name.
    public let attributeIndex: [String: Int]
    /// Each attribute's name and type, by position: what per-value paths (typed accessors, setters) read, without
    /// copying a whole ``AttributeDescription`` (and retaining its strings) for every value.
    let attributeNames: [String]
    /// The relationships' names, in order: what a typed getter compares its macro-given position with.
    let relationshipNames: [String]
    let attributeTypes: [AttributeType]
    let relationshipIndex: [String: Int]
    /// The position of each to-one relationship in an object's to-one slots (nil for to-many).
    public let toOneSlot: [Int?]
    /// The number of to-one slots.
    let toOneCount: Int
    /// The number of to-one slots a store keeps: the first ones (the rest are transient relationships').
    public let storedToOneCount: Int
    /// The class whose instances represent this entity's objects.
    let objectType: ManagedObject.Type
    /// The values a new object starts with, already in their stored form.
    let defaultValues: AttributeValues
    /// The attributes that have a rule to check at save (required, ranges, lengths, patterns).
    let validatedAttributes: [Int]
    /// Which kinds of rule each of ``validatedAttributes`` has, so that saving many objects checks a required
    /// attribute without copying its description.
    let validationKinds: [(isOptional: Bool, hasRange: Bool, hasLength: Bool, hasPattern: Bool)]
    /// The attributes whose values a store could change without a word (strings with a NUL character, NaN, -0.0),
    /// so that saving refuses those values instead.
    let unstorableValueAttributes: [Int]
    /// Whether any relationship has a rule to check at save (required, counts).
    let hasRelationshipRules: Bool
    /// Whether the entity's class may override ``ManagedObject/validateValue(_:forKey:)``, which a save then calls
    /// for each value (see ``ManagedObject/_mayValidateValues(_:)``).
    let validatesValues: Bool
    /// The attributes a store keeps (all but the transient ones), by position.
    public let storedAttributes: [Int]
    /// The transient attributes, by position: kept in memory only.
    let transientAttributes: [Int]
    /// The stored Binary and Transformable attributes whose large values an SQLite store keeps in files
    /// (``AttributeDescription/allowsExternalBinaryDataStorage``), by position.
    package let externalBinaryAttributes: [Int]
    /// The fetched properties of the entity and its ancestors.
    public var fetchedProperties: [FetchedPropertyDescription] { fetched }
    let fetched: [FetchedPropertyDescription]
    /// The key paths Swift's Observation tracks each property by: attributes, then relationships.
    let observationKeyPaths: [KeyPath<ManagedObject, Int> & Sendable]
    /// The derived attributes, by position, with what the store computes them from.
    package let derivedAttributes: [(index: Int, derivation: Derivation)]
    /// The entity's name alone, and with its descendants', as sets (what every fetch filters rows by).
    private let nameSet: Set<String>
    private let selfAndDescendantNameSet: Set<String>

    init(
        description: EntityDescription, rootName: String, selfAndDescendantNames: [String], tableName: String,
        attributes: [AttributeDescription], attributeColumns: [String], relationships: [ModelRelationship], uniquenessConstraints: [[String]],
        fetchedProperties: [FetchedPropertyDescription],
        objectType: ManagedObject.Type
    ) {
        self.description = description
        self.name = description.name
        self.rootName = rootName
        self.selfAndDescendantNames = selfAndDescendantNames
        self.tableName = tableName
        self.attributes = attributes
        self.attributeColumns = attributeColumns
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.objectType = objectType
        var attributeIndex: [String: Int] = [:]
        for (index, attribute) in attributes.enumerated() { attributeIndex[attribute.name] = index }
        self.attributeIndex = attributeIndex
        self.attributeNames = attributes.map(\.name)
        self.relationshipNames = relationships.map(\.name)
        self.attributeTypes = attributes.map(\.type)
        var relationshipIndex: [String: Int] = [:]
        // Stored to-ones take the first slots, transient ones the last: a store's rows hold the stored ones, in
        // slot order, and a row read from a store leaves the transient slots nil.
        var toOneSlot: [Int?] = Array(repeating: nil, count: relationships.count)
        var slots = 0
        let toOnes = relationships.indices.filter { !relationships[$0].isToMany }
        for index in toOnes.filter({ !relationships[$0].isTransient }) + toOnes.filter({ relationships[$0].isTransient }) {
            toOneSlot[index] = slots
            slots += 1
        }
        self.storedToOneCount = toOnes.count { !relationships[$0].isTransient }
        for (index, relationship) in relationships.enumerated() { relationshipIndex[relationship.name] = index }
        self.relationshipIndex = relationshipIndex
        self.toOneSlot = toOneSlot
        self.toOneCount = slots
        // Attributes whose values never fit a word get their side-list entry now, so an insert's copy of these
        // defaults has room for its strings and replaces entries rather than growing the list.
        self.defaultValues = AttributeValues(count: attributes.count, othersCapacity: attributes.count { !$0.type.fitsWord }) { row in
            for (position, attribute) in attributes.enumerated() {
                let value = attribute.type.coerce(attribute.defaultValue)
                if attribute.type.fitsWord { row.set(value, at: position) } else { row.setAside(value, at: position) }
            }
        }
        self.fetched = fetchedProperties
        self.observationKeyPaths = (0..<(attributes.count + relationships.count)).map { index -> KeyPath<ManagedObject, Int> & Sendable in
            \ManagedObject.[_observedProperty: index]
        }
        self.derivedAttributes = attributes.indices.compactMap { index in attributes[index].derivation.flatMap(Derivation.init).map { (index, $0) } }
        // A derived attribute has no value until the store computes it: no rule of it is the app's to keep.
        self.validatedAttributes = attributes.indices.filter { index in
            let a = attributes[index]
            guard a.derivation == nil else { return false }
            return !a.isOptional || a.minValue != nil || a.maxValue != nil || a.minLength != nil || a.maxLength != nil || a.pattern != nil
        }
        self.validationKinds = validatedAttributes.map { index in
            let a = attributes[index]
            return (a.isOptional, a.minValue != nil || a.maxValue != nil, a.minLength != nil || a.maxLength != nil, a.pattern != nil)
        }
        self.unstorableValueAttributes = attributes.indices.filter { [.string, .double, .float].contains(attributes[$0].type) }
        self.storedAttributes = attributes.indices.filter { !attributes[$0].isTransient }
        self.transientAttributes = attributes.indices.filter { attributes[$0].isTransient }
        self.externalBinaryAttributes = attributes.indices.filter { index in
            let attribute = attributes[index]
            guard attribute.allowsExternalBinaryDataStorage, !attribute.isTransient, attribute.derivation == nil else { return false }
            if case .binary = attribute.type { return true }
            if case .codable = attribute.type { return true }
            return false
        }
        self.nameSet = [description.name]
        self.selfAndDescendantNameSet = Set(selfAndDescendantNames)
        self.hasRelationshipRules = relationships.contains { r in
            !r.description.isOptional || r.description.minCount != nil || r.description.maxCount != nil
        }
        self.validatesValues = objectType._mayValidateValues(objectType)
    }

    /// The attribute named `name`, if the entity has one.
    public func attribute(named name: String) -> AttributeDescription? {
        attributeIndex[name].map { attributes[$0] }
    }

    /// The relationship named `name`, if the entity has one.
    public func relationship(named name: String) -> ModelRelationship? {
        relationshipIndex[name].map { relationships[$0] }
    }

    /// Whether `key`'s values have an order a predicate's `[FIRST]`, `[LAST]` or `[n]` may pick from: false only for
    /// an unordered to-many relationship (see `KeyValueSource.keepsOrder(forKey:)`).
    func keepsOrder(forKey key: String) -> Bool {
        relationship(named: key).map { $0.isOrdered || !$0.isToMany } ?? true
    }

    /// The names of the entities a fetch of this entity returns: this one, and its descendants when asked.
    func names(includingSubentities: Bool) -> Set<String> {
        includingSubentities ? selfAndDescendantNameSet : nameSet
    }

    /// Whether `other` is this entity or one of its descendants.
    public func isKind(of other: ModelEntity) -> Bool {
        other.selfAndDescendantNames.contains(name)
    }
}

/// How a relationship is kept in a store.
public enum RelationshipStorage: Sendable, Hashable {
    /// A column of the source's table holds the destination's primary key.
    case foreignKey(column: String)
    /// The destination's table holds the source's key in `column`, and the position in `orderColumn` when ordered.
    case inverseForeignKey(column: String, orderColumn: String?)
    /// A join table; `isSourceSide` says whether this relationship's objects are the table's `source` column.
    case joinTable(table: String, isSourceSide: Bool)
    /// Nowhere: a transient relationship lives in memory only (``RelationshipDescription/isTransient``).
    case transient
}

/// A relationship of a built ``Model``: its declaration with its inverse and storage resolved.
public struct ModelRelationship: Sendable, Hashable {
    /// The relationship's declaration.
    public let description: RelationshipDescription
    /// How a store keeps it.
    public let storage: RelationshipStorage
    /// Whether it is a many-to-many relationship ordered on both sides: its join table keeps the target side's
    /// positions too, in `inverse_position`.
    public package(set) var isOrderedBothWays = false
    /// The relationship's name.
    public var name: String { description.name }
    /// The destination entity's name.
    public var destinationEntityName: String { description.destinationEntityName }
    /// The inverse relationship's name; empty when it has none.
    public var inverseName: String { description.inverseName }
    /// Whether the relationship has an inverse.
    public var hasInverse: Bool { description.hasInverse }
    /// Whether it holds many objects.
    public var isToMany: Bool { description.isToMany }
    /// Whether it keeps its objects in order.
    public var isOrdered: Bool { description.isOrdered }
    /// Its delete rule.
    public var deleteRule: DeleteRule { description.deleteRule }
    /// Whether it is kept in memory only (``RelationshipDescription/isTransient``).
    public var isTransient: Bool { description.isTransient }

    /// Whether a store keeps this to-many's contents apart from its destinations' to-one columns: the side of a join
    /// table that names it (both sides when both keep an order), or an ordered one-to-many's positions. These are
    /// the relationships a ``ChangeSet``'s ``ChangeSet/toMany`` lists a store must write.
    public var keepsContentsApart: Bool {
        switch storage {
        case .joinTable(_, let isSourceSide): isSourceSide || isOrderedBothWays
        case .inverseForeignKey(_, let orderColumn): orderColumn != nil
        case .foreignKey, .transient: false
        }
    }
}

extension ModelEntity {
    /// Whether `predicate` reads any of this entity's relationships: then a row's own values do not decide it, and
    /// pending rows of other entities (a chapter moved to a book) may change what it selects.
    func isJudgedThroughRelationships(by predicate: FormatPredicate?) -> Bool {
        // Asked by every fetch: an entity without relationships answers without walking the predicate.
        guard !relationshipIndex.isEmpty else { return false }
        return predicate?.keyPathHeads.contains { relationshipIndex[$0] != nil } == true
    }
}

/// The declaration of an entity: its name, properties, constraints and place in an inheritance tree.
///
/// Build one by hand for models made at run time, or let the `@Entity` macro derive it from a class.
/// A ``Model`` checks a set of descriptions together and resolves inheritance and inverses.
///
/// ```swift
/// let author = EntityDescription("Author", attributes: [.init("name", .string, isOptional: false)],
///                                relationships: [.init("books", destination: "Book", inverse: "author", isToMany: true)])
/// ```
public struct EntityDescription: Sendable, Hashable, Codable {
    /// The entity's name, unique in its model.
    public var name: String
    /// The attributes this entity declares (not those it inherits).
    public var attributes: [AttributeDescription]
    /// The relationships this entity declares (not those it inherits).
    public var relationships: [RelationshipDescription]
    /// The parent entity's name, for a sub-entity.
    public var parentName: String?
    /// Whether the entity can have no instances of its own, only of its sub-entities.
    public var isAbstract: Bool
    /// Sets of attribute names whose values together must be unique among this entity's objects.
    public var uniquenessConstraints: [[String]]
    /// Compound indexes, each a list of attribute names; a name starting with `-` is kept in descending order.
    public var indexes: [[String]]
    /// The Swift class that represents the entity's objects, when one is registered.
    public var className: String?

    /// Fetched properties: named fetches run for an object of this entity (see ``FetchedPropertyDescription``).
    @OmittedWhenEmpty public var fetchedProperties: [FetchedPropertyDescription] = []
    /// The name the entity had in the model a migration comes from (Xcode's renaming ID, `elementID`).
    public var renamingIdentifier: String?
    /// Text that changes the model's version hash without changing the entity (Xcode's hash modifier).
    public var versionHashModifier: String?
    /// Free-form information for the app (Xcode's user info). It does not change the model's version hash.
    @OmittedWhenEmpty public var userInfo: [String: String] = [:]

    /// Creates an entity description.
    public init(
        _ name: String, attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        parent: String? = nil, isAbstract: Bool = false, uniquenessConstraints: [[String]] = [],
        indexes: [[String]] = [], className: String? = nil
    ) {
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.parentName = parent
        self.isAbstract = isAbstract
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
        self.className = className
    }
}

/// What happens to a relationship's destination when its source object is deleted.
public enum DeleteRule: String, Sendable, Hashable, Codable {
    /// Remove the deleted object from the destination's inverse relationship (the default).
    case nullify
    /// Delete the destination objects too.
    case cascade
    /// Refuse the save while the relationship still holds objects.
    case deny
    /// Do nothing; the destination keeps a dangling reference until the app fixes it.
    case noAction
}

/// A relationship of an entity: its destination, inverse, cardinality and delete rule.
///
/// A relationship should name its inverse, and the inverse must name it back: the graph then keeps both sides in
/// step. A relationship without an inverse (`inverse: nil`), which Core Data accepts with a warning, is kept on its
/// side alone: deleting its destination leaves nothing pointing back to clear, so the store clears the reference
/// (a to-one reads as nil, a to-many loses the member), and so does every context holding the reference in memory
/// when the deletion is saved.
///
/// ```swift
/// let books = RelationshipDescription("books", destination: "Book", inverse: "author", isToMany: true)
/// ```
public struct RelationshipDescription: Sendable, Hashable, Codable {
    /// The relationship's name.
    public var name: String
    /// The name of the destination entity.
    public var destinationEntityName: String
    /// The name of the inverse relationship on the destination entity; empty for a relationship without an inverse.
    public var inverseName: String
    /// Whether the relationship has an inverse.
    public var hasInverse: Bool { !inverseName.isEmpty }
    /// Whether the relationship holds many objects.
    public var isToMany: Bool
    /// Whether a to-many relationship keeps its objects in order.
    public var isOrdered: Bool
    /// Whether a to-one relationship may be nil (and a to-many empty) at save time.
    public var isOptional: Bool
    /// What deleting the source does to the destination.
    public var deleteRule: DeleteRule
    /// The fewest objects a to-many relationship may hold at save time.
    public var minCount: Int?
    /// The most objects a to-many relationship may hold at save time.
    public var maxCount: Int?
    /// Whether the relationship is kept in memory only, as Core Data's transient relationships are: the graph tracks
    /// it (inverse, delete rule, undo of a rollback, a child's save to its parent), no store keeps it, and an object
    /// read again from its store (a refault, another context) holds nothing there. Its inverse must be transient too.
    ///
    /// ```swift
    /// RelationshipDescription("selection", destination: "Book", inverse: "selectedBy", isTransient: true)
    /// ```
    @OmittedWhenEmpty public var isTransient: Bool = false

    /// The name the relationship had in the model a migration comes from (Xcode's renaming ID, `elementID`).
    public var renamingIdentifier: String?
    /// Text that changes the model's version hash without changing the relationship (Xcode's hash modifier).
    public var versionHashModifier: String?
    /// Free-form information for the app (Xcode's user info). It does not change the model's version hash.
    @OmittedWhenEmpty public var userInfo: [String: String] = [:]

    /// Creates a relationship description.
    public init(
        _ name: String, destination: String, inverse: String?, isToMany: Bool = false, isOrdered: Bool = false,
        isOptional: Bool = true, deleteRule: DeleteRule = .nullify, minCount: Int? = nil, maxCount: Int? = nil,
        originalName: String? = nil, isTransient: Bool = false
    ) {
        self.name = name
        self.destinationEntityName = destination
        self.inverseName = inverse ?? ""
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.isOptional = isOptional
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount
        self.renamingIdentifier = originalName
        self.isTransient = isTransient
    }
}

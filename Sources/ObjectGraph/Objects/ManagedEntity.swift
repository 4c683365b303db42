/// A ``ManagedObject`` subclass with a static entity description: what the ``Entity()`` macro makes of a class.
public protocol ManagedEntity: ManagedObject {
    /// The entity this class represents, derived from its declaration.
    static var entityDescription: EntityDescription { get }
    /// The persisted properties' key paths and their names.
    static var _keyPathNames: [AnyKeyPath: String] { get }
}

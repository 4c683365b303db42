/// A ``ManagedObject`` subclass with a static entity description: what the `@Entity` macro makes of a class.
public protocol ManagedEntity: ManagedObject {
    /// The entity this class represents, derived from its declaration.
    static var entityDescription: EntityDescription { get }
    /// The name of the entity this class represents: its class name. The `@Entity` macro writes it as a literal
    /// (a small query asks for it every time, and describing a type at run time cost a twentieth of one).
    static var entityName: String { get }
    /// The persisted properties' key paths and their names.
    static var _keyPathNames: [AnyKeyPath: String] { get }
}

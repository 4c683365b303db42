/// The moments of an object's life a model class can act on, called where Core Data calls them. Override them in an
/// `@Entity` class (or a `ManagedObject` subclass); the defaults do nothing. They run on the object's context's
/// queue, inside the work that caused them: keep them to the object itself (its own values), as Core Data asks.
///
/// ```swift
/// @Entity final class Note: ManagedObject {
///     var text: String = ""
///     var modified: Date?
///     override func willSave() { if hasPersistentChangedValues && !isDeleted { modified = .now } }
/// }
/// ```
extension ManagedObject {
    /// Whether the object has changes to stored properties (attributes and relationships that are not transient),
    /// as Core Data's `hasPersistentChangedValues`: what a `willSave()` that stamps a date checks, so that the stamp
    /// itself does not count as a reason to stamp again.
    public var hasPersistentChangedValues: Bool {
        guard !isFaultStorage else { return false }
        if isInserted { return true }
        let transient = Set(entity.attributes.filter(\.isTransient).map(\.name) + entity.relationships.filter(\.isTransient).map(\.name))
        return changedKeys().contains { !transient.contains($0) }
    }
}

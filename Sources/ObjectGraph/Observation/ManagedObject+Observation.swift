import Observation

/// Managed objects take part in Swift's Observation: `withObservationTracking` (and so SwiftUI and `@Observable`
/// view models) sees a typed property read and hears its change, whether the app set it, a merge or a child's save
/// brought it, or a refresh or rollback restored it.
///
/// ```swift
/// withObservationTracking { _ = book.title } onChange: { print("the title will change") }
/// ```
///
/// The registrar is made on the first read an object's typed accessors report, so objects nobody reads pay nothing.
extension ManagedObject: Observable {}

extension ManagedObject {
    /// Stands for property `index` (attributes first, then relationships) in key paths the registrar tracks.
    public subscript(_observedProperty index: Int) -> Int { index }

    /// Reports a read of property `index` (an attribute's index, or the attribute count plus a relationship's).
    @inline(__always)
    func observedAccess(_ index: Int) {
        guard index >= 0, index < entity.observationKeyPaths.count else { return }
        if observationRegistrar == nil { observationRegistrar = ObservationRegistrar() }
        observationRegistrar.unsafelyUnwrapped.access(self, keyPath: entity.observationKeyPaths[index])
    }

    /// Reports a change of property `index` around `change`, when anyone may be tracking it.
    @inline(__always)
    func observedMutation<T>(_ index: Int, _ change: () throws -> T) rethrows -> T {
        guard let registrar = observationRegistrar, index >= 0, index < entity.observationKeyPaths.count else { return try change() }
        let keyPath = entity.observationKeyPaths[index]
        registrar.willSet(self, keyPath: keyPath)
        defer { registrar.didSet(self, keyPath: keyPath) }
        return try change()
    }

    /// The tracking key index of relationship `name`.
    func observedRelationshipIndex(_ name: String) -> Int {
        entity.relationshipIndex[name].map { entity.attributes.count + $0 } ?? -1
    }

    /// Tells trackers that values changed under the object (a merge, a child's save, a refresh, a rollback):
    /// attributes that differ from `before`, and every relationship.
    func observedReplacement(attributesBefore before: AttributeValues?) {
        guard let registrar = observationRegistrar else { return }
        for (index, keyPath) in entity.observationKeyPaths.enumerated() {
            if index < entity.attributes.count, let before, !isFaultStorage, before[index] == values[index] { continue }
            registrar.willSet(self, keyPath: keyPath)
            registrar.didSet(self, keyPath: keyPath)
        }
    }
}

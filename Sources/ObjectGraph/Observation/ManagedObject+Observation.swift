import Observation

/// Managed objects take part in Swift's Observation: `withObservationTracking` (and so SwiftUI and `@Observable`
/// view models) sees a typed property read and hears its change, whether the app set it, a merge or a child's save
/// brought it, or a refresh or rollback restored it.
///
/// ```swift
/// withObservationTracking { _ = book.title } onChange: { print("the title will change") }
/// ```
///
/// Reads are reported for the objects of main-queue contexts, where views and view models read them: a registrar
/// per object and a report per read would cost a large fetch on a private queue a third of its time, for nothing
/// (no view tracks it there). Changes are reported for any object a read was reported for.
extension ManagedObject: Observable {}

/// An object's Observation registrar, in a box (see ``ManagedObject``'s `observationRegistrar`).
final class ObservationRegistrarBox {
    let registrar = ObservationRegistrar()
}

extension ManagedObject {
    /// Stands for property `index` (attributes first, then relationships) in key paths the registrar tracks.
    public subscript(_observedProperty index: Int) -> Int { index }

    /// Reports a read of property `index` (an attribute's index, or the attribute count plus a relationship's), on a
    /// main-queue context.
    @inline(__always)
    func observedAccess(_ index: Int) {
        guard let state, state.tracksReads else { return }
        reportAccess(index)
    }

    /// The report itself, kept out of the accessors it would be inlined into: the registrar's size is known only
    /// at run time, so a function that holds one asks for its type's metadata and makes room on its stack on every
    /// call, which every typed read on a private queue paid for a report it never makes.
    @inline(never)
    private func reportAccess(_ index: Int) {
        guard index >= 0, index < entity.observationKeyPaths.count else { return }
        if observationRegistrar == nil { observationRegistrar = ObservationRegistrarBox() }
        observationRegistrar.unsafelyUnwrapped.registrar.access(self, keyPath: entity.observationKeyPaths[index])
    }

    /// Reports a read of relationship `name`, on a main-queue context; elsewhere it looks nothing up.
    @inline(__always)
    func observedRelationshipAccess(_ name: String) {
        guard let state, state.tracksReads else { return }
        observedAccess(observedRelationshipIndex(name))
    }

    /// Reports a change of property `index` around `change`, when anyone may be tracking it.
    @inline(__always)
    func observedMutation<T>(_ index: Int, _ change: () throws -> T) rethrows -> T {
        guard let registrar = observationRegistrar?.registrar, index >= 0, index < entity.observationKeyPaths.count else { return try change() }
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
        guard let registrar = observationRegistrar?.registrar else { return }
        for (index, keyPath) in entity.observationKeyPaths.enumerated() {
            if index < entity.attributes.count, let before, !isFaultStorage, before[index] == values[index] { continue }
            registrar.willSet(self, keyPath: keyPath)
            registrar.didSet(self, keyPath: keyPath)
        }
    }
}

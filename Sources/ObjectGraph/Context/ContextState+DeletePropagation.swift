import Foundation

/// Core Data runs a deletion's rules when the context processes its pending changes, which `perform` does when its
/// block ends: the deleted object's cascades are deleted and what pointed at it lets go, before any save. The same
/// here: a deletion queues the rules to run after the work running now, and ``ObjectContext/processPendingChanges()``
/// runs them at once. Deny rules wait for the save, which refuses the deletion there; the save runs every rule again
/// for what is left.
extension ContextState {
    /// Queues ``propagatePendingDeletions()`` after the work running now, once.
    func scheduleDeletePropagation() {
        guard !isDeletePropagationScheduled, !isApplyingDeleteRules, let owner else { return }
        isDeletePropagationScheduled = true
        owner.enqueue { $0.state.propagatePendingDeletions() }
    }

    /// Runs the cascade and nullify rules of the deletions made since they last ran. A failure to read what the
    /// rules follow leaves them to the save, which runs them again and throws what it meets.
    func propagatePendingDeletions() {
        isDeletePropagationScheduled = false
        // By membership, not by count: a merged save may have taken an own deletion out of `deleted` since.
        guard deleted.keys.contains(where: { !propagatedDeletions.contains($0) }) else { return }
        do {
            try applyDeleteRules(propagating: true)
        } catch {
            ObjectGraphLogging.logger.debug("context \(name) left its deletions' rules to the save: \(error)")
        }
    }
}

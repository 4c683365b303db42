/// The release queue of destinations that freed objects held (see ``HeldDestination``): a context lets go of a
/// graph one object at a time, however deep the graph.
extension ContextState {
    /// Releases the destinations freed objects held (``heldAwaitingRelease``), one relationship's at a time rather
    /// than nested.
    ///
    /// A freed object releases what it held, which may free that, and so on: a chain of 100,000 objects each holding
    /// the next would nest 100,000 deinitializers and overflow the thread's stack. The first freed object drains the
    /// queue instead, and every object freed meanwhile only adds its destinations to it.
    func releaseHeldAwaitingRelease() {
        guard !isReleasingHeld else { return }
        isReleasingHeld = true
        while let next = heldAwaitingRelease.popLast() {
            // Released here, at the end of the iteration, after the queue's access has ended.
            _ = next
        }
        isReleasingHeld = false
    }
}

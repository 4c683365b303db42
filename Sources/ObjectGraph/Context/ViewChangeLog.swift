/// The objects whose values a context shows changed, in order, for its children (and theirs) to follow.
///
/// An object with nothing pending in a child shows what lies below (ARCHITECTURE.md, "What a context shows"). Its
/// parent's edits, its siblings' saves pushed into the parent and the parent's merges change that without telling
/// the child, so the child reads this log at its next fetch or list read and reads the objects named there again
/// from below, those it holds, in one read (``ContextState/followChangesBelow()``). Objects the child is changing
/// keep their values, and are read again once its save or rollback leaves them with nothing pending.
///
/// The log holds a bounded number of IDs: a child that fell further behind than the log reaches refreshes every
/// object instead. A context records only once it has children (``isRead``), so a lone root pays nothing.
final class ViewChangeLog: Sendable {
    /// What changed since a reader's position.
    struct Changes {
        /// The objects named, as recorded (temporary IDs included).
        var objects: Set<ObjectID> = []
        /// Whether every object may have changed (a reset, a refresh of everything, or a reader the log left behind).
        var everything = false
    }

    /// One object changed, or (`objectID` nil) every object.
    private struct Entry {
        var objectID: ObjectID?
        /// The child whose save into this context made the change: that child shows it already.
        var source: ObjectIdentifier?
    }

    private struct State {
        /// The position of `entries[0]`.
        var first = 0
        var entries: [Entry] = []
        var end: Int { first + entries.count }
    }

    /// How many IDs the log keeps before it drops its oldest entries.
    static let capacity = 100_000

    private let state = Protected(State())
    /// Set once a child exists; until then nothing is recorded.
    let isRead = AtomicFlag(false)

    /// The position after the last change: where a new reader starts.
    var end: Int { state.withLock { $0.end } }

    /// Records that `objects` show other values now; `source` is the child whose save made the change, if one did.
    func record(_ objects: some Sequence<ObjectID>, source: ObjectIdentifier? = nil) {
        guard isRead.value else { return }
        state.withLock { state in
            state.entries.append(contentsOf: objects.lazy.map { Entry(objectID: $0, source: source) })
            Self.trim(&state)
        }
    }

    /// Records that any object may show other values now.
    func recordEverything() {
        guard isRead.value else { return }
        state.withLock { state in
            state.entries.append(Entry(objectID: nil, source: nil))
            Self.trim(&state)
        }
    }

    /// The changes after `position` that `reader` did not make itself, and the position to read from next time.
    func changes(after position: Int, for reader: ObjectIdentifier) -> (changes: Changes, end: Int) {
        state.withLock { state in
            var changes = Changes()
            guard position >= state.first else {
                changes.everything = true
                return (changes, state.end)
            }
            for entry in state.entries[(position - state.first)...] where entry.source != reader {
                if let id = entry.objectID { changes.objects.insert(id) } else { changes.everything = true }
            }
            return (changes, state.end)
        }
    }

    private static func trim(_ state: inout State) {
        guard state.entries.count > capacity else { return }
        let dropped = state.entries.count - capacity / 2
        state.entries.removeFirst(dropped)
        state.first += dropped
    }
}

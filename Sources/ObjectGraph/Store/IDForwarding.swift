import PredicateFormat

/// The coordinator's memory of which temporary IDs became which permanent ones, readable from any thread.
///
/// Each save's mapping is one immutable segment (a ``PermanentIDMap``, runs of consecutive keys), built before it is
/// published, so a reader (the main thread resolving an ID) never waits while a large import is recorded: the lock
/// only guards swapping the list of segments. Segments are merged, off the lock, once there are many, so a lookup
/// stays a handful of binary searches.
final class IDForwarding: Sendable {
    /// One map per save, oldest first.
    private let segments = Protected<[PermanentIDMap]>([])
    private let merging = Protected(false)

    /// The permanent ID `id` became, if it was saved.
    func permanent(for id: ObjectID) -> ObjectID? {
        Self.permanent(for: id, in: current)
    }

    private static func permanent(for id: ObjectID, in segments: [PermanentIDMap]) -> ObjectID? {
        // Temporary keys are handed out in sequence, so the IDs of objects inserted after a save fall outside its
        // span: asking whether a fresh import's IDs were saved (every save asks it of its rows) is then a comparison
        // per segment, not a search.
        for segment in segments.reversed() where segment.temporaryKeys?.contains(id.rawKey) == true {
            if let permanent = segment[id] { return permanent }
        }
        return nil
    }

    /// The temporary ID `id` had, if it was assigned in this process.
    func temporary(for id: ObjectID) -> ObjectID? {
        for segment in current.reversed() {
            if let temporary = segment.temporaryID(for: id) { return temporary }
        }
        return nil
    }

    /// The permanent IDs of those of `ids` that were saved.
    func permanentIDs(for ids: some Sequence<ObjectID>) -> [ObjectID: ObjectID] {
        let segments = current
        var found: [ObjectID: ObjectID] = [:]
        for id in ids where id.isTemporaryID {
            if let permanent = Self.permanent(for: id, in: segments) { found[id] = permanent }
        }
        return found
    }

    /// Records one save's mapping.
    func record(_ mapping: PermanentIDMap) {
        let count = segments.withLock { segments in
            segments.append(mapping)
            return segments.count
        }
        if count > 8 { compact() }
    }

    private var current: [PermanentIDMap] { segments.withLock { $0 } }

    /// Merges the newest segments into one, off the lock: as many as together outweigh half the segment before
    /// them, so segments grow geometrically (few of them, and each run is copied only a few times).
    private func compact() {
        guard merging.withLock({ busy in defer { busy = true }; return !busy }) else { return }
        defer { merging.withLock { $0 = false } }
        let snapshot = current
        var start = snapshot.count - 1
        var total = snapshot[start].count
        while start > 0, snapshot[start - 1].count <= total * 2 {
            start -= 1
            total += snapshot[start].count
        }
        guard snapshot.count - start >= 2 else { return }
        let merged = PermanentIDMap(merging: Array(snapshot[start...]))
        // Only this merge removes segments (others only append), so `start..<snapshot.count` are still those merged.
        let replaced = segments.withLock { segments in
            let replaced = Array(segments[start..<snapshot.count])
            segments.replaceSubrange(start..<snapshot.count, with: [merged])
            return replaced
        }
        // The old maps are freed here, not under the lock.
        withExtendedLifetime(replaced) {}
    }
}

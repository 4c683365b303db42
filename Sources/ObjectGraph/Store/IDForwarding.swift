import PredicateFormat

/// The coordinator's memory of which temporary IDs became which permanent ones, readable from any thread.
///
/// Each save's mapping is one immutable segment, built before it is published, so a reader (the main thread
/// resolving an ID) never waits while a large import is recorded: the lock only guards swapping the list of
/// segments. Segments are merged, off the lock, once there are many, so a lookup stays a handful of hash probes.
final class IDForwarding: Sendable {
    /// One save's mapping, both ways.
    struct Segment: Sendable {
        var toPermanent: [ObjectID: ObjectID] = [:]
        var toTemporary: [ObjectID: ObjectID] = [:]
        /// The span of the temporary keys in `toPermanent`. Temporary keys are handed out in sequence, so the IDs
        /// of objects inserted after a save fall outside its span: asking whether a fresh import's IDs were saved
        /// (every save asks it of its rows) is then a comparison per segment, not a hash probe.
        var temporaryKeys: ClosedRange<Int64>?

        /// Whether the segment can hold `id`.
        func mayHold(_ id: ObjectID) -> Bool { temporaryKeys?.contains(id.rawKey) == true }

        mutating func widen(to keys: ClosedRange<Int64>?) {
            guard let keys else { return }
            temporaryKeys = temporaryKeys.map { min($0.lowerBound, keys.lowerBound)...max($0.upperBound, keys.upperBound) } ?? keys
        }
    }

    private let segments = Protected<[Segment]>([])
    private let merging = Protected(false)

    /// The permanent ID `id` became, if it was saved.
    func permanent(for id: ObjectID) -> ObjectID? {
        Self.permanent(for: id, in: current)
    }

    private static func permanent(for id: ObjectID, in segments: [Segment]) -> ObjectID? {
        for segment in segments.reversed() where segment.mayHold(id) {
            if let permanent = segment.toPermanent[id] { return permanent }
        }
        return nil
    }

    /// The temporary ID `id` had, if it was assigned in this process.
    func temporary(for id: ObjectID) -> ObjectID? {
        for segment in current.reversed() {
            if let temporary = segment.toTemporary[id] { return temporary }
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
    func record(_ mapping: [ObjectID: ObjectID]) {
        var segment = Segment()
        segment.toPermanent = mapping
        segment.toTemporary.reserveCapacity(mapping.count)
        var lowest = Int64.max, highest = Int64.min
        for (temporary, permanent) in mapping {
            segment.toTemporary[permanent] = temporary
            lowest = min(lowest, temporary.rawKey)
            highest = max(highest, temporary.rawKey)
        }
        if lowest <= highest { segment.temporaryKeys = lowest...highest }
        let count = segments.withLock { segments in
            segments.append(segment)
            return segments.count
        }
        if count > 8 { compact() }
    }

    private var current: [Segment] { segments.withLock { $0 } }

    /// Merges the newest segments into one, off the lock: as many as together outweigh half the segment before
    /// them, so segments grow geometrically (few of them, and each mapping is copied only a few times).
    private func compact() {
        guard merging.withLock({ busy in defer { busy = true }; return !busy }) else { return }
        defer { merging.withLock { $0 = false } }
        let snapshot = current
        var start = snapshot.count - 1
        var total = snapshot[start].toPermanent.count
        while start > 0, snapshot[start - 1].toPermanent.count <= total * 2 {
            start -= 1
            total += snapshot[start].toPermanent.count
        }
        guard snapshot.count - start >= 2 else { return }
        var merged = Segment()
        merged.toPermanent.reserveCapacity(total)
        merged.toTemporary.reserveCapacity(total)
        for segment in snapshot[start...] {
            merged.toPermanent.merge(segment.toPermanent) { _, new in new }
            merged.toTemporary.merge(segment.toTemporary) { _, new in new }
            merged.widen(to: segment.temporaryKeys)
        }
        // Only this merge removes segments (others only append), so `start..<snapshot.count` are still those merged.
        let replaced = segments.withLock { segments in
            let replaced = Array(segments[start..<snapshot.count])
            segments.replaceSubrange(start..<snapshot.count, with: [merged])
            return replaced
        }
        // The old tables are freed here, not under the lock.
        withExtendedLifetime(replaced) {}
    }
}

import Synchronization

/// Whether a large fetch reads ahead on a second thread (``RowPipeline``): only while reading ahead has paid.
///
/// Reading ahead pays when a second core is free to read while the fetch's own thread makes objects. On a virtual
/// machine whose host takes its processors away for stretches (steal time), each thread keeps waiting for the
/// other, and a fetch read ahead took longer than one read on one thread: 0.54–0.59 s against 0.41–0.53 s for
/// 200,000 rows, in minutes where the host took 5–25% of the processors (the same fetch read ahead took 0.30–0.41 s
/// in quiet minutes). So each fetch that reads ahead compares its pace after the hand-over with its own pace on one
/// thread just before it; when reading ahead was not clearly faster, the next few large fetches read on one thread,
/// and then reading ahead is tried again.
final class ReadAheadPolicy: Sendable {
    /// Large fetches still to read on one thread.
    private let pausedFetches = Atomic<Int>(0)

    /// How many large fetches read on one thread after reading ahead did not pay.
    static let pause = 8
    /// The pace reading ahead must beat, as a fraction of the pace on one thread, to count as paying. In quiet
    /// minutes, W2's fetches read ahead at 0.34–0.87 times their one-thread pace (the timed rows are few, and the
    /// machine noisy), so a pause needs reading ahead to have gained almost nothing.
    static let requiredGain = 0.9
    /// The fewest rows on each side of the hand-over for a comparison to count: fewer are too few to time.
    static let minimumRows = 512

    /// Whether the next large fetch reads ahead; a fetch told no counts toward the pause.
    func allowsReadingAhead() -> Bool {
        var paused = pausedFetches.load(ordering: .relaxed)
        while paused > 0 {
            let (exchanged, original) = pausedFetches.compareExchange(expected: paused, desired: paused - 1, ordering: .relaxed)
            if exchanged { return false }
            paused = original
        }
        return true
    }

    /// Records a fetch that read ahead: `oneThread` is its time per row just before the hand-over, `readAhead` its
    /// time per row after it, each timed over at least ``minimumRows`` rows.
    func record(oneThread: Duration, readAhead: Duration) {
        if readAhead / oneThread >= Self.requiredGain { pausedFetches.store(Self.pause, ordering: .relaxed) }
    }
}

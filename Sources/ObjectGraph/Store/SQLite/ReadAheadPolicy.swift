import Synchronization

/// Whether a large fetch reads ahead on a second thread (``RowPipeline``): only while reading ahead has paid.
///
/// Reading ahead pays when a second core is free to read while the fetch's own thread makes objects. On a virtual
/// machine whose host takes its processors away for stretches (steal time), each thread keeps waiting for the
/// other, and a fetch read ahead took longer than one read on one thread: 0.54–0.59 s against 0.41–0.53 s for
/// 200,000 rows, in minutes where the host took 5–25% of the processors (the same fetch read ahead took 0.30–0.41 s
/// in quiet minutes). So each fetch that reads ahead compares its pace after the hand-over with its own pace on one
/// thread just before it. When two fetches in a row read ahead no faster than that, the next few large fetches
/// read on one thread, and then reading ahead is tried again.
///
/// One comparison is not enough to decide: it times a thousand rows just after the statement started, and in quiet
/// minutes it read 0.5–1.15 for fetches that read ahead in a quarter less time overall (W2 alone, reading ahead
/// always: 0.111–0.135 s; never: 0.148–0.177 s). A single slow comparison paused the next eight fetches, and W2
/// read 2.5 times raw SQLite's time on one thread. In steal minutes, reading ahead read 1.13–1.83 times the
/// one-thread pace fetch after fetch, so two in a row still find them.
final class ReadAheadPolicy: Sendable {
    /// Large fetches still to read on one thread.
    private let pausedFetches = Atomic<Int>(0)
    /// Fetches in a row that read ahead without gaining.
    private let losses = Atomic<Int>(0)

    /// How many large fetches read on one thread after reading ahead did not pay.
    static let pause = 8
    /// How many fetches in a row must read ahead without gaining before reading ahead pauses.
    static let lossesBeforePause = 2
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
    /// time per row after it, each timed over at least ``minimumRows`` rows. Reading ahead gained when it was the
    /// faster of the two.
    func record(oneThread: Duration, readAhead: Duration) {
        guard readAhead >= oneThread else {
            losses.store(0, ordering: .relaxed)
            return
        }
        // Fetches on other threads may record at once: each loss counts, and the one that completes a series pauses.
        if losses.add(1, ordering: .relaxed).newValue >= Self.lossesBeforePause {
            losses.store(0, ordering: .relaxed)
            pausedFetches.store(Self.pause, ordering: .relaxed)
        }
    }
}

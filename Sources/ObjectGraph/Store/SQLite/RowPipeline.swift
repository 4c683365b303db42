import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The rest of a large fetch, read on a thread of its own while the caller turns the rows already read into objects.
///
/// A fetch of many rows spends about half its time in SQLite and in decoding rows, and a third in making and
/// registering objects, which must happen on the context's executor. Past ``SQLiteStore/pipelineThreshold`` rows, a
/// reading thread takes over the statement (stepping it, decoding rows into snapshots, in batches) while the
/// caller's thread registers the batches already read, so the two halves overlap on two cores. A small fetch, the
/// usual query, never starts a thread.
///
/// Ownership is handed over, never shared: from ``start()`` until the reading thread reports it has finished, only
/// that thread touches the statement and the row reader; the caller waits for that report before it returns, also
/// when its own handling of a row throws (it asks the reader to stop, then waits).
///
/// Batches cross through a ring of a few slots, counted by two atomics, one written by each side. A side that finds
/// nothing to do spins briefly, yielding its core, before it sleeps: waking a sleeping thread is a system call and,
/// on a virtual machine, an interrupt sent to the other processor, and waking the caller for every batch of 512 rows
/// cost a seventh of the reading thread's time. Batches therefore grow from 512 rows to 2,048: the first ones reach
/// the caller soon, and the later ones wake it a quarter as often. The caller, usually the faster side, spins only
/// briefly: spinning until each batch came was two fifths of its time, and W2's CPU time 3.7 times raw SQLite's
/// (2.8–3.0 times with these batches, for 1–7% more wall time).
final class RowPipeline: @unchecked Sendable {
    // @unchecked Sendable: sound because the statement and `reader` are used by one thread at a time (the reading
    // thread from `start()` until it sets `finished`, the caller before that), a slot is written only by
    // the reading thread while `taken` says the caller is done with it and read only by the caller once `published`
    // says it is filled, and `failure` is written before `finished` is set and read after it is seen. The atomics'
    // sequentially consistent stores and loads order all of that.
    private let statement: OpaquePointer
    private let reader: RowReader
    private let slots: UnsafeMutablePointer<[Snapshot]>
    /// Batches the reading thread has published, and batches the caller has taken.
    private let published = Atomic<Int>(0), taken = Atomic<Int>(0)
    /// Whether the reading thread is done with the statement (all rows read, an error, or asked to stop).
    private let finished = Atomic<Bool>(false)
    /// Whether the caller asked the reading thread to stop (its handling of a row threw).
    private let stopRequested = Atomic<Bool>(false)
    /// What stopped the reading thread early, thrown to the caller after the rows read before it.
    private var failure: (any Error)?
    /// Where a side sleeps once spinning found nothing, and whether it does: the other side then wakes it.
    private let sleep = NSCondition()
    private let callerSleeps = Atomic<Bool>(false), readerSleeps = Atomic<Bool>(false)

    /// Rows in the first batch and in the largest, and batches read ahead at most: the reading thread waits rather
    /// than run far ahead. The largest stays small enough that the caller's last batch, handled after the reading
    /// ends, adds little to the fetch.
    static let firstBatch = 512
    static let largestBatch = 2_048
    static let capacity = 4

    /// Takes over `statement`, positioned on a row already handled, and `reader`, which decoded the rows so far.
    init(statement: OpaquePointer, reader: RowReader) {
        self.statement = statement
        self.reader = reader
        slots = .allocate(capacity: Self.capacity)
        slots.initialize(repeating: [], count: Self.capacity)
    }

    deinit {
        slots.deinitialize(count: Self.capacity)
        slots.deallocate()
    }

    /// Starts the reading thread; false when the system refuses a thread (too many threads, or no memory for its
    /// stack): the caller then reads on by itself, as it would have without the pipeline, rather than wait for a
    /// thread that never runs.
    func start() -> Bool {
        Self.spawn { [self] in read() }
    }

    /// Hands every row the started reading thread reads to `body`, in order, on the calling thread.
    ///
    /// - Throws: what `body` throws (the reading thread is stopped first), or the error that stopped the reading
    ///   thread, after the rows read before it.
    func run(_ body: (Snapshot) throws -> Void) throws {
        while let batch = next() {
            do {
                // Each snapshot is lent to `body` where the batch keeps it: iterating would copy every one out,
                // retaining its values and its to-one list, and release them again.
                try batch.withUnsafeBufferPointer { snapshots in
                    for index in snapshots.indices { try body(snapshots[index]) }
                }
            } catch {
                stop()
                throw error
            }
        }
        if let failure { throw failure }
    }

    // MARK: The caller's side

    /// The next batch, waiting for one; nil once the reading thread finished and every batch was taken.
    private func next() -> [Snapshot]? {
        let index = taken.load(ordering: .sequentiallyConsistent)
        wait(as: callerSleeps, spinning: Self.callerSpin) {
            published.load(ordering: .sequentiallyConsistent) > index || finished.load(ordering: .sequentiallyConsistent)
        }
        // The reading thread publishes its last batch before it sets `finished`: once that is seen, this second look
        // sees every batch.
        guard published.load(ordering: .sequentiallyConsistent) > index else { return nil }
        let batch = slots[index % Self.capacity]
        slots[index % Self.capacity] = []
        taken.store(index + 1, ordering: .sequentiallyConsistent)
        wake(readerSleeps)
        return batch
    }

    /// Asks the reading thread to stop, and waits until it no longer touches the statement.
    private func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        wake(readerSleeps)
        wait(as: callerSleeps, spinning: Self.callerSpin) { finished.load(ordering: .sequentiallyConsistent) }
    }

    // MARK: The reading thread

    /// Steps the statement to its end (or an error, or a stop), a batch at a time.
    private func read() {
        // A local copy, handed over with the statement: the stored one, a class's property, would be checked for
        // overlapping accesses on every row.
        var reader = self.reader
        // The rows the caller read before are its own: this thread fills blocks of its own.
        reader.sealBlocks()
        var size = Self.firstBatch
        var batch: [Snapshot] = []
        batch.reserveCapacity(size)
        var error: (any Error)?
        reading: while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                error = Statement.lastError(of: statement)
                break
            }
            do {
                batch.append(try reader.snapshot(statement))
            } catch let failure {
                error = failure
                break
            }
            if batch.count == size {
                // No block of this batch grows once the caller may read it.
                reader.sealBlocks()
                guard publish(batch) else { break reading }
                size = min(size * 2, Self.largestBatch)
                batch = []
                batch.reserveCapacity(size)
            }
        }
        if !batch.isEmpty {
            reader.sealBlocks()
            _ = publish(batch)
        }
        failure = error
        finished.store(true, ordering: .sequentiallyConsistent)
        wake(callerSleeps)
    }

    /// Puts a batch in the next slot, waiting while every slot is full; false when the caller asked to stop.
    private func publish(_ batch: [Snapshot]) -> Bool {
        let index = published.load(ordering: .sequentiallyConsistent)
        wait(as: readerSleeps, spinning: Self.readerSpin) {
            stopRequested.load(ordering: .sequentiallyConsistent) || index - taken.load(ordering: .sequentiallyConsistent) < Self.capacity
        }
        guard !stopRequested.load(ordering: .sequentiallyConsistent) else { return false }
        slots[index % Self.capacity] = batch
        published.store(index + 1, ordering: .sequentiallyConsistent)
        wake(callerSleeps)
        return true
    }

    // MARK: Threads

    /// Runs `body` on a new detached thread; false when the thread could not be created. (Foundation's `Thread`
    /// does not report that, and the caller would wait for it forever.)
    private static func spawn(_ body: @escaping @Sendable () -> Void) -> Bool {
        final class Start: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let start = Unmanaged.passRetained(Start(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        let code = pthread_create(&thread, nil, { raw in
            Unmanaged<Start>.fromOpaque(raw).takeRetainedValue().body()
            return nil
        }, start)
        #else
        var thread = pthread_t()
        let code = pthread_create(&thread, nil, { raw in
            if let raw { Unmanaged<Start>.fromOpaque(raw).takeRetainedValue().body() }
            return nil
        }, start)
        #endif
        guard code == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            return false
        }
        #if canImport(Darwin)
        if let thread { pthread_detach(thread) }
        #else
        pthread_detach(thread)
        #endif
        return true
    }

    // MARK: Waiting

    /// How long the caller checks again before it sleeps: briefly, so that a caller waiting for the slower reading
    /// thread sleeps through most of its wait rather than burn a core, woken once per (growing) batch.
    private static let callerSpin = Duration.microseconds(50)
    /// How long the reading thread checks again: briefly, since the caller, slower when it waits for room, can afford
    /// to wake it, and a reading thread spinning for long would take a core the caller's process may need.
    private static let readerSpin = Duration.microseconds(200)

    /// Returns once `ready` holds: at first by checking again after yielding the core, for up to `spin`, then asleep
    /// until the other side's ``wake(_:)``. The sleeper's flag is set before its last check and the waker's change is
    /// made before it reads the flag (both sequentially consistent), so one of them sees the other: no wake-up is lost.
    private func wait(as sleeper: borrowing Atomic<Bool>, spinning spin: Duration, until ready: () -> Bool) {
        let clock = ContinuousClock()
        let deadline = clock.now + spin
        var round = 0
        while round & 15 != 0 || clock.now < deadline {
            if ready() { return }
            sched_yield()
            round += 1
        }
        sleep.lock()
        defer { sleep.unlock() }
        sleeper.store(true, ordering: .sequentiallyConsistent)
        while !ready() { sleep.wait() }
        sleeper.store(false, ordering: .sequentiallyConsistent)
    }

    /// Wakes the other side if it sleeps.
    private func wake(_ sleeper: borrowing Atomic<Bool>) {
        guard sleeper.load(ordering: .sequentiallyConsistent) else { return }
        // Taking the lock once orders this after the sleeper's last check (it holds the lock until it waits);
        // broadcasting after releasing it spares the woken thread from waiting for the lock again at once.
        sleep.lock()
        sleep.unlock()
        sleep.broadcast()
    }
}

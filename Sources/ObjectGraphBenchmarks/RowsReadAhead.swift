import Dispatch
import Foundation
import GRDBSQLite
import Synchronization

extension RawSQLite {
    /// How many rows a statement read ahead steps on the caller's thread before a reading thread takes it over: what
    /// ObjectGraph's store waits for before its large fetches read ahead (`SQLiteStore.pipelineThreshold`).
    static let readAheadThreshold = 2_048

    /// Steps `sql` to its end, handing each row, as `decode` makes it, to `body` in order on the calling thread.
    ///
    /// `readingAhead`: past `threshold` rows, a thread of its own steps the statement and decodes its rows, in
    /// batches, while the caller hands the rows already decoded to `body`, as ObjectGraph's large fetches do (a
    /// read-ahead thread, values decoded in batches): the object baseline made with the same technique.
    func rows<Row: Sendable>(
        _ sql: String, readingAhead: Bool, threshold: Int = RawSQLite.readAheadThreshold,
        decode: @escaping @Sendable (OpaquePointer) -> Row, _ body: (Row) -> Void
    ) throws {
        guard readingAhead else { return try each(sql) { body(decode($0)) } }
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        for _ in 0..<threshold {
            guard sqlite3_step(statement) == SQLITE_ROW else { return }
            body(decode(statement))
        }
        let reader = ReadAhead(statement: statement, decode: decode)
        reader.start()
        while let batch = reader.next() {
            for row in batch { body(row) }
        }
    }
}

/// A statement stepped on a thread of its own, its rows handed to the caller in batches of ``batchRows``, at most
/// ``aheadBatches`` batches ahead: the plain way (a lock, two semaphores) of what `RowPipeline` does for ObjectGraph.
private final class ReadAhead<Row: Sendable>: Sendable {
    /// The statement, lent to the reading thread from ``start()`` until it publishes the end (nil): the caller does
    /// not touch it meanwhile, and finalizes it only after ``next()`` returned nil.
    private struct LentStatement: @unchecked Sendable {
        // Sound: one thread at a time uses the statement (above); the semaphores order the hand-overs.
        let pointer: OpaquePointer
    }

    static var batchRows: Int { 2_048 }
    static var aheadBatches: Int { 4 }

    private let statement: LentStatement
    private let decode: @Sendable (OpaquePointer) -> Row
    /// Published batches, oldest first; nil marks the end.
    private let batches = Mutex<[[Row]?]>([])
    private let filled = DispatchSemaphore(value: 0)
    private let free = DispatchSemaphore(value: ReadAhead.aheadBatches)

    init(statement: OpaquePointer, decode: @escaping @Sendable (OpaquePointer) -> Row) {
        self.statement = LentStatement(pointer: statement)
        self.decode = decode
    }

    func start() {
        Thread { [self] in read() }.start()
    }

    /// The next batch, waiting for it; nil once every row was handed out and the reading thread let the statement go.
    func next() -> [Row]? {
        filled.wait()
        let batch = batches.withLock { $0.removeFirst() }
        free.signal()
        return batch
    }

    private func read() {
        var batch: [Row] = []
        batch.reserveCapacity(Self.batchRows)
        while sqlite3_step(statement.pointer) == SQLITE_ROW {
            batch.append(decode(statement.pointer))
            if batch.count == Self.batchRows {
                publish(batch)
                batch = []
                batch.reserveCapacity(Self.batchRows)
            }
        }
        if !batch.isEmpty { publish(batch) }
        publish(nil)
    }

    private func publish(_ batch: [Row]?) {
        free.wait()
        batches.withLock { $0.append(batch) }
        filled.signal()
    }
}

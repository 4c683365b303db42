import Foundation
import Testing
@testable import ObjectGraph

/// Past a threshold, a fetch reads the rest of its rows on a second thread while the first makes objects of the rows
/// already read. Whatever the threshold: the same rows in the same order as a read on one thread, an error on
/// either side ends the fetch with that error after the rows before it, and the store reads on afterwards.
@Suite struct RowPipelineTests {
    /// 1,300 books and 700 movies (one table, two entities) with authors, and the store under them.
    /// Enough rows for the reading thread's batches to grow to their largest (512, 1,024, then 2,048 rows).
    static let mediaCount = 5_000

    private func library() async throws -> (folder: TemporaryFolder, coordinator: PersistentStoreCoordinator, store: SQLiteStore) {
        let folder = try TemporaryFolder()
        let coordinator = try PersistentStoreCoordinator(model: try Fixtures.model(), storeURL: folder.storeURL)
        let context = ObjectContext(coordinator: coordinator, name: "writer")
        try await context.perform { ctx in
            let authors = try (0..<7).map { index in
                let author = try ctx.insert("Author")
                try author.setValue("author \(index)", forKey: "name")
                return author
            }
            for index in 0..<Self.mediaCount {
                let media = try ctx.insert(index % 20 < 13 ? "Book" : "Movie")
                try media.setValue("title \(index)", forKey: "title")
                if index % 20 < 13 {
                    try media.setValue(Int32(1 + index % 900), forKey: "pages")
                    // Every third book has no author: null and non-null to-one columns alternate.
                    if index % 3 != 0 { try media.setObject(authors[index % 7], forKey: "author") }
                } else {
                    try media.setValue(Int64(index), forKey: "minutes")
                }
            }
            try ctx.save()
        }
        return (folder, coordinator, try #require(coordinator.store as? SQLiteStore))
    }

    private func requests() throws -> [StoreFetchRequest] {
        var all = StoreFetchRequest(entityName: "Media")
        all.sortKeys = [SortKey("-title")]
        var long = StoreFetchRequest(entityName: "Book")
        long.predicate = try FormatPredicate("pages > %d", 100)
        var slice = StoreFetchRequest(entityName: "Media")
        (slice.offset, slice.limit) = (150, 1_700)
        return [all, long, slice, StoreFetchRequest(entityName: "Movie")]
    }

    @Test func everyThresholdReadsTheRowsOfAReadOnOneThread() async throws {
        let (folder, coordinator, store) = try await library()
        _ = folder
        for request in try requests() {
            store.pipelineThreshold.store(0, ordering: .relaxed)
            let expected = try store.fetch(request)
            #expect(expected.count > 600)
            // One row, the middle of a batch, a batch boundary, and past the end (never handed over).
            for threshold in [1, 7, 512, 600, expected.count + 1] {
                store.pipelineThreshold.store(threshold, ordering: .relaxed)
                #expect(try store.fetch(request) == expected, "threshold \(threshold)")
            }
            // A system that refuses the reading thread: the fetch's own thread reads on, nothing lost or repeated.
            store.refusesReadingThreads.store(true, ordering: .relaxed)
            #expect(try store.fetch(request) == expected, "without a reading thread")
            store.refusesReadingThreads.store(false, ordering: .relaxed)
        }
        // Through a context: the objects made on the caller's thread hold the rows read on the other.
        store.pipelineThreshold.store(0, ordering: .relaxed)
        let context = ObjectContext(coordinator: coordinator, name: "reader")
        let oneThread = try await context.perform { ctx in
            let rows = try ctx.fetch(FetchRequest(entityName: "Media", sortKeys: [SortKey("title")])).map { try $0.value(forKey: "title") }
            ctx.reset()
            return rows
        }
        store.pipelineThreshold.store(5, ordering: .relaxed)
        let pipelined = try await context.perform { ctx in
            try ctx.fetch(FetchRequest(entityName: "Media", sortKeys: [SortKey("title")])).map { try $0.value(forKey: "title") }
        }
        #expect(oneThread.count == Self.mediaCount && pipelined == oneThread)
    }

    /// Reading ahead that did not pay in two fetches in a row pauses it for the next ``ReadAheadPolicy/pause``
    /// large fetches, which read the same rows on one thread; the fetch after them reads ahead again. One fetch that
    /// did not pay is not enough, and a fetch that gained starts the count again.
    @Test func readingAheadThatDidNotPayTwiceInARowPausesItForTheNextLargeFetches() async throws {
        let (folder, _, store) = try await library()
        _ = folder
        let request = try requests()[0]
        store.pipelineThreshold.store(0, ordering: .relaxed)
        let expected = try store.fetch(request)
        let policy = store.readAheadPolicy
        policy.record(oneThread: .microseconds(10), readAhead: .microseconds(5))
        #expect(policy.allowsReadingAhead(), "reading ahead at half the one-thread pace paid")
        policy.record(oneThread: .microseconds(10), readAhead: .microseconds(12))
        #expect(policy.allowsReadingAhead(), "one fetch that did not pay does not pause reading ahead")
        policy.record(oneThread: .microseconds(10), readAhead: .microseconds(9))
        policy.record(oneThread: .microseconds(10), readAhead: .microseconds(10))
        #expect(policy.allowsReadingAhead(), "a fetch that gained in between starts the count again")
        policy.record(oneThread: .microseconds(10), readAhead: .microseconds(11))
        #expect(!policy.allowsReadingAhead(), "reading ahead at no better than the one-thread pace, twice in a row, did not pay")
        // Small thresholds time nothing, so these fetches only count down the rest of the pause.
        store.pipelineThreshold.store(8, ordering: .relaxed)
        for fetch in 1..<ReadAheadPolicy.pause {
            #expect(try store.fetch(request) == expected, "paused fetch \(fetch)")
            // Seven authors: below the threshold, so not counted.
            #expect(try store.fetch(StoreFetchRequest(entityName: "Author")).count == 7)
        }
        #expect(policy.allowsReadingAhead(), "the pause is over after \(ReadAheadPolicy.pause) large fetches")
        #expect(try store.fetch(request) == expected)
        // After the pause, a single fetch that does not pay is again not enough.
        policy.record(oneThread: .microseconds(10), readAhead: .microseconds(20))
        #expect(policy.allowsReadingAhead())
    }

    private struct Enough: Error {}

    @Test func aRowHandlerThatThrowsStopsTheReadingThreadAndTheStoreReadsOn() async throws {
        let (folder, _, store) = try await library()
        _ = folder
        store.pipelineThreshold.store(10, ordering: .relaxed)
        let request = StoreFetchRequest(entityName: "Media")
        // Right after the hand-over, inside a batch, at a batch's end, inside a batch of the largest size, and at
        // the very last row.
        for stop in [11, 700, 10 + 512 + 1_024, 10 + 512 + 1_024 + 2_048 + 5, Self.mediaCount] {
            var handled = 0
            #expect(throws: Enough.self) {
                try store.fetch(request) { _ in
                    handled += 1
                    if handled == stop { throw Enough() }
                }
            }
            #expect(handled == stop)
            #expect(try store.fetch(request).count == Self.mediaCount)
        }
    }

    @Test func aRowTheReadingThreadCannotDecodeEndsTheFetchAfterTheRowsBeforeIt() async throws {
        let (folder, _, store) = try await library()
        _ = folder
        // Another program writes a row of an entity the model does not have, far past the hand-over.
        try await store.writer.writeWithoutTransaction { try $0.execute(sql: "UPDATE Media SET \"row.entity\" = 'Ghost' WHERE \"row.id\" = 1500") }
        store.pipelineThreshold.store(10, ordering: .relaxed)
        var keys: [Int64] = []
        do {
            try store.fetch(StoreFetchRequest(entityName: "Media")) { keys.append($0.objectID.rawKey) }
            Issue.record("the fetch read a row of an unknown entity")
        } catch let error as ObjectGraphError {
            #expect(error == .unknownEntity("Ghost"))
        }
        #expect(keys == Array(1...1_499))
        try await store.writer.writeWithoutTransaction { try $0.execute(sql: "UPDATE Media SET \"row.entity\" = 'Book' WHERE \"row.id\" = 1500") }
        #expect(try store.fetch(StoreFetchRequest(entityName: "Media")).count == Self.mediaCount)
    }

    /// SQLite failing mid-fetch on the reading thread (a damaged page) ends the fetch with the store's read error,
    /// after the rows read before the damage, in order.
    @Test func aDamagedPageFoundByTheReadingThreadEndsTheFetchWithTheStoresError() async throws {
        let folder = try TemporaryFolder()
        let model = try Fixtures.model()
        do {
            let coordinator = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
            let context = ObjectContext(coordinator: coordinator, name: "writer")
            try await context.perform { ctx in
                for index in 0..<3_000 {
                    let author = try ctx.insert("Author")
                    try author.setValue("author \(index) " + String(repeating: "·", count: 20), forKey: "name")
                }
                try ctx.save()
            }
            let store = try #require(coordinator.store as? SQLiteStore)
            _ = try await store.writer.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        }
        // Opening checks the file (a damaged one is refused), so the page is damaged once the store is open. Only
        // authors were written, last: the file's last page holds the last authors' rows.
        let store = try #require(try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL).store as? SQLiteStore)
        store.pipelineThreshold.store(10, ordering: .relaxed)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: folder.storeURL.path)[.size] as? Int)
        let pageSize = 4_096
        #expect(size % pageSize == 0 && size > pageSize * 20)
        let file = try FileHandle(forWritingTo: folder.storeURL)
        try file.seek(toOffset: UInt64(size - pageSize))
        try file.write(contentsOf: Data(repeating: 0xA5, count: pageSize))
        try file.close()

        var keys: [Int64] = []
        do {
            try store.fetch(StoreFetchRequest(entityName: "Author")) { keys.append($0.objectID.rawKey) }
            Issue.record("read every row of a damaged table")
        } catch let error as ObjectGraphError {
            guard case .storeReadFailed(let path, let reason) = error else {
                Issue.record("expected a failed read, got \(error)")
                return
            }
            #expect(path == folder.storeURL.path)
            #expect(reason.contains("malformed"), "\(reason)")
        }
        // The rows before the damaged page, every one in key order, and more than the first thread read alone.
        #expect(keys.count > 10 && keys.count < 3_000)
        #expect(keys == Array(1...Int64(keys.count)))
    }
}

import Foundation
import GRDB
import Testing
@testable import ObjectGraph

/// Keys are read as a range exactly when they are every key of one, and reading rows by keys either way returns each
/// row asked for once, and only rows of the entity asked for.
@Suite struct KeyChunkTests {
    @Test(arguments: [0 as UInt64, 1, 2])
    func aChunkIsARangeExactlyWhenItsKeysAreConsecutive(seed: UInt64) {
        var random = SplitMix(state: seed)
        for _ in 0..<500 {
            let start = Int64.random(in: -3...1_000, using: &random)
            var keys = (0..<Int64.random(in: 1...40, using: &random)).map { start + $0 }
            if Bool.random(using: &random) { keys += keys.prefix(Int.random(in: 0...3, using: &random)) }
            if Bool.random(using: &random), keys.count > 2 { keys.remove(at: Int.random(in: 1..<(keys.count - 1), using: &random)) }
            keys.shuffle(using: &random)
            let distinct = Set(keys)
            let consecutive = distinct.max()! - distinct.min()! + 1 == Int64(distinct.count)
            let chunk = KeyChunk(keys)
            #expect(chunk.isRange == consecutive, "\(keys)")
            if consecutive {
                #expect(chunk.arguments == [distinct.min()!.databaseValue, distinct.max()!.databaseValue])
                #expect(chunk.condition(on: "k") == "k BETWEEN ? AND ?")
            } else {
                #expect(chunk.arguments == keys.map(\.databaseValue))
                #expect(chunk.condition(on: "k") == "k IN (" + Array(repeating: "?", count: keys.count).joined(separator: ",") + ")")
            }
        }
    }

    @Test func rowsReadByKeysAreTheRowsAskedFor() async throws {
        let folder = try TemporaryFolder()
        let coordinator = try StoreKind.sqlite.coordinator(try Fixtures.model(), folder)
        let (books, movies, tags) = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try seedLibrary(ctx)
            return try (ctx.fetch(FetchRequest(entityName: "Book")).map(\.objectID), ctx.fetch(FetchRequest(entityName: "Movie")).map(\.objectID),
                        ctx.fetch(FetchRequest(entityName: "Tag")).map(\.objectID))
        }
        let store = coordinator.store
        // Books and the movie share one table: a range of book keys may hold the movie's row, which is not a book's.
        let movie = try #require(movies.first)
        let asMovieKeyAsBook = ObjectID(entityName: "Book", rawKey: movie.rawKey)
        let noRow = ObjectID(entityName: "Book", rawKey: 999_999)
        for asked in [books, books.reversed() + books, Array(books.prefix(3)) + [asMovieKeyAsBook], tags + tags, books + tags + [movie],
                      [books[0], books[3], books[5]], [asMovieKeyAsBook], [movie], [books[2]], [noRow]] {
            let found = try store.snapshots(for: asked).map(\.objectID)
            let expected = Set(asked).subtracting([asMovieKeyAsBook, noRow])
            #expect(Set(found) == expected, "asked \(asked)")
            #expect(found.count == expected.count, "asked \(asked): a row came twice")
        }
    }
}

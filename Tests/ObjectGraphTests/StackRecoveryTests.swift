import Foundation
import GRDBSQLite
import Testing
@testable import ObjectGraph

/// Another connection holding the store's write lock, as another process would (through SQLite's C API: GRDB
/// does not let a transaction outlive one access).
final class WriteLockHolder {
    private var connection: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
              sqlite3_exec(connection, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK else {
            throw ObjectGraphError.storeUnavailable(path: path, reason: "the test could not lock it")
        }
    }

    func release() {
        guard let connection else { return }
        sqlite3_exec(connection, "COMMIT", nil, nil, nil)
        sqlite3_close_v2(connection)
        self.connection = nil
    }

    deinit { release() }
}

/// The seeds' stack after a failed write to disk: nothing lost, nothing shown that is neither saved nor pending,
/// and one documented step to go on, in both layouts.
@MainActor
@Suite struct StackRecoveryTests {
    let folder: TemporaryFolder
    var path: String { folder.url.appendingPathComponent("db.sqlite").path }

    init() throws { folder = try TemporaryFolder() }

    func makeStack(_ layout: DataStack.Layout, busyTimeout: TimeInterval = SQLiteStore.defaultBusyTimeout) throws -> DataStack {
        let store = try SQLiteStore(url: URL(fileURLWithPath: path), model: StackTests.model, busyTimeout: busyTimeout)
        return DataStack(coordinator: PersistentStoreCoordinator(model: StackTests.model, store: store), layout: layout)
    }

    func onDisk() async throws -> [String] { try await StackTests().onDisk(folder) }

    func names(_ stack: DataStack) throws -> [String] { try Book.filter(in: stack, orderBy: ["name"]).map(\.name) }

    /// Through a background block, whose write runs off the main thread in both layouts (the siblings layout's
    /// main context writes on the main thread, where this test releases the lock).
    ///
    /// The busy timeout is far longer than the release can take on a loaded machine (the main actor, which
    /// releases the lock, may be busy with other tests for seconds): the test is about waiting, not about when.
    @Test(arguments: DataStack.Layout.allCases)
    func aLockHeldElsewhereIsWaitedFor(_ layout: DataStack.Layout) async throws {
        let stack = try makeStack(layout, busyTimeout: 600)
        let holder = try WriteLockHolder(path: path)
        let saving = Task { try await stack.background { db in try db.insert(Book.self).name = "Waited" } }
        await Task.yield()
        holder.release()
        try await saving.value
        #expect(try await onDisk() == ["Waited"])
    }

    @Test(arguments: DataStack.Layout.allCases)
    func aFailedSaveLeavesItsChangesPendingInMain(_ layout: DataStack.Layout) async throws {
        let stack = try makeStack(layout, busyTimeout: 0.05)
        try Book.insert(into: stack) { $0.name = "Kept" }
        try await stack.save()
        let kept = try #require(try Book.one(in: stack, where: "name = 'Kept'"))
        let holder = try WriteLockHolder(path: path)
        kept.author = "Changed"
        try Book.insert(into: stack) { $0.name = "New" }
        let error = await #expect(throws: ObjectGraphError.self) { try await stack.save() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("longer than the busy timeout"))
        // Neither saved nor lost: pending in main, shown there, absent on disk.
        #expect(stack.onMain { $0.hasChanges })
        #expect(try names(stack) == ["Kept", "New"])
        #expect(kept.author == "Changed")
        #expect(try await onDisk() == ["Kept"])
        // The next save after the lock goes writes everything, an unrelated change included.
        holder.release()
        try Book.insert(into: stack) { $0.name = "Later" }
        try await stack.save()
        #expect(!stack.onMain { $0.hasChanges })
        #expect(try await onDisk() == ["Kept", "Later", "New"])
        #expect(try await StackTests().onDisk(folder, "author = 'Changed'") == ["Kept"])
    }

    @Test(arguments: DataStack.Layout.allCases)
    func aRollbackDiscardsWhatAFailedSaveHandedBack(_ layout: DataStack.Layout) async throws {
        let stack = try makeStack(layout, busyTimeout: 0.05)
        try Book.insert(into: stack) { $0.name = "Kept"; $0.author = "Original" }
        try await stack.save()
        let kept = try #require(try Book.one(in: stack, where: "name = 'Kept'"))
        let holder = try WriteLockHolder(path: path)
        kept.author = "Changed"
        let doomed = try Book.insert(into: stack) { $0.name = "Doomed" }
        await #expect(throws: ObjectGraphError.self) { try await stack.save() }
        holder.release()
        await stack.main.perform { $0.rollback() }
        #expect(!stack.onMain { $0.hasChanges })
        #expect(try names(stack) == ["Kept"])
        #expect(kept.author == "Original")
        #expect(throws: ObjectGraphError.self) { _ = try doomed.value(forKey: "name") }
        try await stack.save()
        #expect(try await onDisk() == ["Kept"])
        #expect(try await StackTests().onDisk(folder, "author = 'Original'") == ["Kept"])
    }

    @Test(arguments: DataStack.Layout.allCases)
    func backgroundChangesTheStoreRefusedWaitInMain(_ layout: DataStack.Layout) async throws {
        let stack = try makeStack(layout, busyTimeout: 0.05)
        let holder = try WriteLockHolder(path: path)
        let failure: String? = await waitFor { done in
            stack.asyncBackground({ db in try db.insert(Book.self).name = "Imported" }, completion: { done($0.map { "\($0)" }) })
        }
        #expect(failure?.contains("longer than the busy timeout") == true, "\(failure ?? "no error")")
        #expect(try await onDisk().isEmpty)
        #expect(stack.onMain { $0.hasChanges })
        #expect(try names(stack) == ["Imported"])
        holder.release()
        try await stack.save()
        #expect(try await onDisk() == ["Imported"])
        #expect(!stack.onMain { $0.hasChanges })
    }

    @Test(arguments: DataStack.Layout.allCases)
    func aBackgroundBlockThatThrowsLeavesNothingAnywhere(_ layout: DataStack.Layout) async throws {
        let stack = try makeStack(layout)
        await #expect(throws: ObjectGraphError.self) {
            try await stack.background { db in
                try db.insert(Book.self).name = "Half done"
                throw ObjectGraphError.invalidFetch(entity: "Book", reason: "the block failed on purpose")
            }
        }
        await #expect(throws: ObjectGraphError.self) {
            try await stack.background { db in try db.insert(Book.self).name = "" }
        }
        #expect(!stack.onMain { $0.hasChanges })
        #expect(try names(stack).isEmpty)
        try await stack.save()
        #expect(try await onDisk().isEmpty)
    }

    @Test(arguments: DataStack.Layout.allCases)
    func aConflictWithAnotherProcessIsSettledByTheStacksPolicy(_ layout: DataStack.Layout) async throws {
        let stack = try makeStack(layout)
        #expect(stack.mergePolicy == .mergeByPropertyObjectTrump)
        try Book.insert(into: stack) { $0.name = "Shared"; $0.author = "Original" }
        try await stack.save()
        let book = try #require(try Book.one(in: stack, where: "name = 'Shared'"))
        _ = book.author
        // Another process changes the author on disk.
        let other = ObjectContext(coordinator: try PersistentStoreCoordinator(model: StackTests.model, storeURL: URL(fileURLWithPath: path)))
        try await other.perform { ctx in
            try ctx.fetch(Book.self, where: "name = 'Shared'")[0].author = "Elsewhere"
            try ctx.save()
        }
        book.name = "Renamed here"
        try await stack.save()
        #expect(try await StackTests().onDisk(folder, "author = 'Elsewhere'") == ["Renamed here"])
        #expect(!stack.onMain { $0.hasChanges })
    }

    @Test(arguments: DataStack.Layout.allCases)
    func theAsynchronousFilterSeesMainsUnsavedObjects(_ layout: DataStack.Layout) async throws {
        let stack = try makeStack(layout)
        try Book.insert(into: stack) { $0.name = "Saved"; $0.author = "A" }
        try await stack.save()
        try Book.insert(into: stack) { $0.name = "Unsaved"; $0.author = "A" }
        try Book.one(in: stack, where: "name = 'Saved'")?.author = "B"
        let found = try await stack.filter(Book.self, where: "author = %@", "A")
        #expect(found.map(\.name) == ["Unsaved"])
        #expect(stack.onMain { ctx in found.allSatisfy { ctx.owns($0) } })
    }
}

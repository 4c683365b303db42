import Foundation
import Testing

/// Type-checks snippets against the ObjectGraph module this test run was built with: what must not compile fails
/// with the expected diagnostic, and the same code written correctly compiles.
@Suite struct CompileTimeSafetyTests {
    /// The build folder holding the test binary, and so the built modules.
    static var buildFolder: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// Type-checks `source` as the one file of a module named `snippet`; `arguments` go to `swiftc` before it.
    static func typecheck(_ source: String, arguments: [String] = []) throws -> (succeeded: Bool, output: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("snippet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("snippet.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let build = buildFolder
        let checkouts = build.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("checkouts")
        return try run(["swiftc", "-typecheck", "-swift-version", "6",
                        "-I", build.appendingPathComponent("Modules").path,
                        "-I", checkouts.appendingPathComponent("GRDB.swift/Sources/GRDBSQLite").path]
                       + arguments + [file.path])
    }

    /// Runs `arguments` (found on the path) with its output and errors gathered in one pipe, and waits for it.
    ///
    /// Spawned with `posix_spawnp` rather than Foundation's `Process`: on Linux, `Process.run()` crashed now and then
    /// (a bad pointer in `memcpy` while it set the child up) when exit tests spawned their own children at the same
    /// moment on other threads.
    static func run(_ arguments: [String]) throws -> (succeeded: Bool, output: String) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SpawnError(arguments: arguments, code: errno) }
        // Not inherited by children other threads spawn meanwhile: one holding the writing end would keep the read
        // below waiting until it exits. (The child's copies on 1 and 2, made by `dup2`, stay open across its exec.)
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var child = pid_t()
        let code = posix_spawnp(&child, arguments[0], &actions, nil, &argv, environ)
        close(fds[1])
        guard code == 0 else {
            close(fds[0])
            throw SpawnError(arguments: arguments, code: code)
        }
        let output = String(decoding: FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile(), as: UTF8.self)
        var status: Int32 = 0
        while waitpid(child, &status, 0) == -1 && errno == EINTR {}
        // Exited (low seven bits zero) with status 0.
        return (status & 0x7f == 0 && (status >> 8) & 0xff == 0, output)
    }

    struct SpawnError: Error, CustomStringConvertible {
        let arguments: [String]
        let code: Int32
        var description: String { "could not run \(arguments.joined(separator: " ")): \(String(cString: strerror(code)))" }
    }

    static let cases: [(name: String, wrong: String, diagnostic: String, right: String)] = [
        ("an object returned out of perform",
         """
         import ObjectGraph
         func leak(_ context: ObjectContext) async throws {
             let tag = try await context.perform { ctx in try ctx.insert("Tag") }
             _ = tag
         }
         """,
         "type 'ManagedObject' does not conform to the 'Sendable' protocol",
         """
         import ObjectGraph
         func pass(_ context: ObjectContext) async throws -> ObjectID {
             try await context.perform { ctx in try ctx.insert("Tag").objectID }
         }
         """),
        ("an object captured into another context's perform",
         """
         import ObjectGraph
         func smuggle(_ a: ObjectContext, _ b: ObjectContext) async throws {
             try await a.perform { ctx in
                 let tag = try ctx.insert("Tag")
                 try b.performAndWait { other in try other.delete(tag) }
             }
         }
         """,
         "capture of 'tag' with non-Sendable type 'ManagedObject' in a '@Sendable' closure",
         """
         import ObjectGraph
         func handOver(_ a: ObjectContext, _ b: ObjectContext) async throws {
             try await a.perform { ctx in
                 let id = try ctx.insert("Tag").objectID
                 try ctx.save()
                 try b.performAndWait { other in try other.delete(try other.existingObject(with: id)) }
             }
         }
         """),
        ("a main-context call from a nonisolated function",
         """
         import ObjectGraph
         func touch(_ main: ObjectContext) throws {
             _ = try main.insert("Tag")
         }
         """,
         "call to actor-isolated instance method 'insert' in a synchronous nonisolated context",
         """
         import ObjectGraph
         func touch(_ main: ObjectContext) async throws {
             try await main.perform { ctx in _ = try ctx.insert("Tag") }
         }
         """),
        ("a main-thread helper called off the main actor",
         """
         import ObjectGraph
         final class Tome: ManagedObject, ManagedEntity {
             static var entityDescription: EntityDescription { EntityDescription("Tome") }
             static var _keyPathNames: [AnyKeyPath: String] { [:] }
         }
         func fromBackground() throws -> Int {
             try Tome.items(where: "TRUEPREDICATE").count
         }
         """,
         "call to main actor-isolated static method 'items(in:where:_:)' in a synchronous nonisolated context",
         """
         import ObjectGraph
         final class Tome: ManagedObject, ManagedEntity {
             static var entityDescription: EntityDescription { EntityDescription("Tome") }
             static var _keyPathNames: [AnyKeyPath: String] { [:] }
         }
         @MainActor func fromMain() throws -> Int {
             try Tome.items(where: "TRUEPREDICATE").count
         }
         """),
    ]

    @Test(arguments: cases.indices)
    func wrongCodeFailsToCompileAndTheRightCodeCompiles(_ index: Int) throws {
        let (name, wrong, diagnostic, right) = Self.cases[index]
        let failed = try Self.typecheck(wrong)
        #expect(!failed.succeeded, "\(name) compiled")
        #expect(failed.output.contains(diagnostic), "\(name): \(failed.output)")
        let passed = try Self.typecheck(right)
        #expect(passed.succeeded, "\(name), written correctly: \(passed.output)")
    }
}

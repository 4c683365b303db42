import Foundation
import Testing

/// Type-checks snippets against the ObjectGraph module this test run was built with: what must not compile fails
/// with the expected diagnostic, and the same code written correctly compiles.
@Suite struct CompileTimeSafetyTests {
    /// The build folder holding the test binary, and so the built modules.
    static var buildFolder: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    static func typecheck(_ source: String) throws -> (succeeded: Bool, output: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("snippet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("snippet.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let build = buildFolder
        let checkouts = build.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("checkouts")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc", "-typecheck", "-swift-version", "6",
                             "-I", build.appendingPathComponent("Modules").path,
                             "-I", checkouts.appendingPathComponent("GRDB.swift/Sources/GRDBSQLite").path,
                             file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus == 0, output)
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

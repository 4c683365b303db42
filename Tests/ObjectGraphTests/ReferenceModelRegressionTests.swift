import Foundation
import Testing
@testable import ObjectGraph

/// Seeds on which the graph once disagreed with ``ReferenceModel``, each named for what went wrong and run whole,
/// with the smallest layout that shows it beside it.
@Suite struct ReferenceModelRegressionTests {
    static let model = ConvergenceTests.model

    /// Seed 75: a grandchild set a key to another value and back (held, nothing to save), its parent changed the key,
    /// and the grandchild saved: the grandchild kept showing its own old value, not its parent's.
    @Test(arguments: StoreKind.allCases)
    func aSavedObjectWithNothingChangedShowsItsParentsValue(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(Self.model, folder)
        let id = try await ConvergenceTests.storedEntry(coordinator, pages: 1)
        let root = ObjectContext(coordinator: coordinator, name: "root")
        let child = ObjectContext(parent: root, name: "child")
        let grandchild = ObjectContext(parent: child, name: "grandchild")
        try await grandchild.perform { ctx in
            let entry = try ctx.existingObject(with: id)
            try entry.setValue(Int64(3), forKey: "pages")
            try entry.setValue(Int64(1), forKey: "pages")
        }
        try await child.perform { ctx in try ctx.existingObject(with: id).setValue(Int64(4), forKey: "pages") }
        try await grandchild.perform { ctx in try ctx.save() }
        // ARCHITECTURE.md, "What a context shows": an object with nothing pending shows what lies below.
        let shown = try await grandchild.perform { ctx in
            try ctx.fetch(FetchRequest(entityName: "Entry")).map { try $0.value(forKey: "pages") }
        }
        #expect(shown == [.int(4)])
    }

    @Test(arguments: [5, 23, 59, 65, 75])
    func theSeedAgreesWithTheModel(_ seed: Int) async throws {
        for kind in [StoreKind.sqlite, .memory] {
            #expect(try await !ReferenceModelTests.run(seed: UInt64(seed), kind: kind))
        }
    }
}

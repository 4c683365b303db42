import Foundation
import Testing
@testable import ObjectGraph

@Entity final class Periodical: ManagedObject {
    #Unique<Periodical>([\.publisher, \.issue])
    #Index<Periodical>([\.title], [\.publisher, \.issue])
    @Attribute(.unique) var issn: String = ""
    @Attribute(.preserveValueOnDeletion) var title: String = ""
    @Attribute(.externalStorage, isIndexed: true) var cover: Data?
    var publisher: String = ""
    var issue: Int = 0
    var shout: String { title.uppercased() }
}

/// SwiftData's schema spellings on `@Entity` classes: `@Attribute(.unique)`, `.externalStorage`,
/// `.preserveValueOnDeletion`, `#Unique` and `#Index` in the class body, and sorts by key path
/// (`SortDescriptor(\Book.title)`), each the same model and behaviour as the spelled-out form.
@Suite struct SwiftDataStyleTests {
    @Test func attributeOptionsUniqueAndIndexMacrosBuildTheSameDescription() throws {
        let entity = Periodical.entityDescription
        let attribute = { (name: String) in entity.attributes.first { $0.name == name }! }
        #expect(entity.uniquenessConstraints == [["issn"], ["publisher", "issue"]])
        #expect(entity.indexes == [["title"], ["publisher", "issue"]])
        #expect(attribute("cover").allowsExternalBinaryDataStorage && attribute("cover").isIndexed)
        #expect(attribute("title").preservesValueInHistoryOnDeletion && !attribute("issn").preservesValueInHistoryOnDeletion)
        _ = try Model([Periodical.self])
    }

    @Test(arguments: StoreKind.allCases)
    func theConstraintsHoldAndKeyPathSortsOrderFetches(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try kind.coordinator(try Model([Periodical.self]), folder))
        try await context.perform { ctx in
            for (issn, title, issue) in [("1", "Beta", 2), ("2", "Alpha", 1), ("3", "Gamma", 3)] {
                let periodical = try ctx.insert(Periodical.self)
                (periodical.issn, periodical.title, periodical.publisher, periodical.issue) = (issn, title, "P", issue)
            }
            try ctx.save()
            var request = Periodical.fetchRequest()
            request.sortKeys = [try SortKey(\Periodical.title)]
            #expect(try ctx.fetch(Periodical.self, request).map(\.title) == ["Alpha", "Beta", "Gamma"])
            request.sortKeys = [try SortKey(\Periodical.issue, ascending: false)]
            #expect(try ctx.fetch(Periodical.self, request).map(\.issue) == [3, 2, 1])
            let computed = #expect(throws: ObjectGraphError.self) { try SortKey(\Periodical.shout) }
            #expect(computed?.message.contains("not a persisted property of Periodical") == true, "\(computed?.message ?? "")")
            // `.unique` and `#Unique` are uniqueness constraints: a second "1" or a second (P, 2) is refused.
            let twin = try ctx.insert(Periodical.self)
            (twin.issn, twin.publisher, twin.issue) = ("1", "Q", 9)
            #expect(throws: ObjectGraphError.self) { try ctx.save() }
            ctx.rollback()
            let sameIssue = try ctx.insert(Periodical.self)
            (sameIssue.issn, sameIssue.publisher, sameIssue.issue) = ("9", "P", 2)
            #expect(throws: ObjectGraphError.self) { try ctx.save() }
        }
    }
}

import Foundation
import Testing
@testable import ObjectGraph

/// Relationships without an inverse, as Core Data accepts them: stored on their side alone, and cleared, in the
/// store and in every context holding them, when their destination's deletion is saved.
@Suite struct OneSidedRelationshipTests {
    static let entities: [EntityDescription] = [
        EntityDescription("Post", attributes: [.init("title", .string)], relationships: [
            .init("pinned", destination: "User", inverse: nil),
            .init("readers", destination: "User", inverse: nil, isToMany: true),
            .init("attachments", destination: "File", inverse: nil, isToMany: true, isOrdered: true, deleteRule: .cascade),
        ]),
        EntityDescription("User", attributes: [.init("name", .string)]),
        EntityDescription("File", attributes: [.init("name", .string)]),
    ]


    @Test(arguments: StoreKind.allCases)
    func oneSidedRelationshipsAreStoredAndClearedWhenTheirDestinationGoes(_ kind: StoreKind) async throws {
        let model = try Model(entities: Self.entities)
        #expect(model.entityIfPresent("Post")?.relationship(named: "readers")?.storage == .joinTable(table: "Post.readers", isSourceSide: true))
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(model, folder)
        let first = ObjectContext(coordinator: coordinator)
        let postID = try await first.perform { ctx in
            let users = try ["Ann", "Bo", "Cy"].map { name in
                let user = try ctx.insert("User")
                try user.setValue(name, forKey: "name")
                return user
            }
            let files = try ["b.txt", "a.txt"].map { name in
                let file = try ctx.insert("File")
                try file.setValue(name, forKey: "name")
                return file
            }
            let post = try ctx.insert("Post")
            try post.setValue("Hello", forKey: "title")
            try post.setObject(users[0], forKey: "pinned")
            try post.setObjects([users[1], users[2]], forKey: "readers")
            try post.setObjects(files, forKey: "attachments")
            try ctx.save()
            return post.objectID
        }
        let reading = kind == .sqlite ? try kind.coordinator(model, folder) : coordinator
        try await ObjectContext(coordinator: reading).perform { ctx in
            let post = try ctx.existingObject(with: postID)
            #expect(try post.object(forKey: "pinned")?.value(forKey: "name") == .string("Ann"))
            #expect(try stringValues(try post.objects(forKey: "readers"), "name").sorted() == ["Bo", "Cy"])
            #expect(try stringValues(try post.objects(forKey: "attachments"), "name") == ["b.txt", "a.txt"])
            #expect(try ctx.count(for: FetchRequest(entityName: "Post", format: "pinned.name == 'Ann' AND ANY readers.name == 'Cy'")) == 1)
            // Deleted where the post is not registered: the store clears the references.
            for user in try ctx.fetch(FetchRequest(entityName: "User", format: "name IN {'Ann', 'Bo'}")) { try ctx.delete(user) }
            try ctx.save()
        }
        try await first.perform { ctx in
            // Registered here with the references loaded: the deletion saved here clears them too.
            let post = try ctx.existingObject(with: postID)
            try ctx.refresh(post, mergeChanges: false)
            #expect(try post.object(forKey: "pinned") == nil)
            #expect(try stringValues(try post.objects(forKey: "readers"), "name") == ["Cy"])
            try ctx.delete(try #require(try post.objects(forKey: "readers").first))
            try ctx.save()
            #expect(try post.objects(forKey: "readers").isEmpty)
            let changed = ctx.hasChanges
            #expect(!changed)
            // Cascade follows a relationship without an inverse.
            try ctx.delete(post)
            try ctx.save()
            #expect(try ctx.count(for: FetchRequest(entityName: "File")) == 0)
        }
        let reopened = kind == .sqlite ? try kind.coordinator(model, folder) : coordinator
        let counts = try await ObjectContext(coordinator: reopened).perform { ctx in
            (try ctx.count(for: FetchRequest(entityName: "User")), try ctx.count(for: FetchRequest(entityName: "Post")))
        }
        #expect(counts == (0, 0))
    }
}

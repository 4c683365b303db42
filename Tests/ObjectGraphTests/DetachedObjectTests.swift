import Foundation
import Testing
import ObjectGraph

@Entity
final class Poet: ManagedObject {
    var name: String = ""
    @Relationship(inverse: "poet", deleteRule: .cascade) var poems: [Poem]

    init(name: String) {
        super.init()
        self.name = name
    }
}

@Entity
final class Poem: ManagedObject {
    var title: String = ""
    var lines: Int32 = 0
    var stamp: String = ""
    @Relationship(inverse: "poems") var poet: Poet?
    @Relationship(inverse: "poems") var anthologies: Set<Anthology>

    init(title: String, lines: Int32 = 14, poet: Poet? = nil) {
        super.init()
        self.title = title
        self.lines = lines
        self.poet = poet
    }

    override func awakeFromInsert() {
        super.awakeFromInsert()
        stamp = "awoken"
        title = "Untitled"
    }
}

/// No initializer of its own: `Anthology()` is ManagedObject's.
@Entity
final class Anthology: ManagedObject {
    var name: String = ""
    @Relationship(inverse: "anthologies") var poems: Set<Poem>
}

/// Objects made by their class's own initializer, then inserted, as SwiftData's models are (`Poem(title:)` then
/// `context.insert(poem)`) and as Core Data's `init(entity:insertInto: nil)` then `insert(_:)` makes them; Core Data
/// calls `awakeFromInsert` "when the receiver is first inserted into a managed object context".
@Suite struct DetachedObjectTests {
    static func context() throws -> ObjectContext {
        let model = try Model([Poet.self, Poem.self, Anthology.self])
        return ObjectContext(coordinator: .inMemory(model: model))
    }

    @Test func anObjectMadeByItsInitializerIsInsertedWithItsValuesAndTheNewObjectsItLinks() async throws {
        let context = try Self.context()
        let ids = try await context.perform { ctx in
            let poet = Poet(name: "Ann")
            let poem = Poem(title: "Ode", lines: 12, poet: poet)
            // Before: its own values, no context, the link on its side only.
            #expect(poem.title == "Ode" && poem.lines == 12 && poem.poet === poet)
            #expect(poem.managedObjectContext == nil && poem.objectID.isTemporaryID && poem.objectID.entityName == "Poem")
            #expect(poet.poems.isEmpty)
            #expect(poem.stamp == "", "awakeFromInsert runs at the insert, not before")
            try ctx.insert(poem)
            #expect(poem.managedObjectContext === ctx && poet.managedObjectContext === ctx)
            #expect(poem.isInserted && poet.isInserted)
            #expect(poet.poems.map(\.title) == ["Ode"], "the inverse shows once both are inserted")
            #expect(poem.stamp == "awoken" && poem.title == "Ode", "the initializer's values win over awakeFromInsert's")
            try ctx.insert(poem)
            #expect(ctx.insertedObjects.count == 2, "inserting again changes nothing")
            try ctx.save()
            return (poem.objectID, poet.objectID)
        }
        let read = ObjectContext(coordinator: context.coordinator)
        try await read.perform { ctx in
            let poem = try ctx.existingObject(with: ids.0, as: Poem.self)
            #expect(poem.title == "Ode" && poem.lines == 12 && poem.stamp == "awoken")
            #expect(poem.poet?.objectID == ids.1 && poem.poet?.name == "Ann")
        }
    }

    @Test func aToManySetBeforeTheInsertKeepsItsMembers() async throws {
        try await Self.context().perform { ctx in
            let existing = try ctx.insert(Poem.self)
            existing.title = "Sonnet"
            let anthology = Anthology()
            anthology.name = "Best"
            anthology.poems = [Poem(title: "Elegy"), existing]
            #expect(anthology.poems.count == 2 && existing.anthologies.isEmpty)
            try ctx.insert(anthology)
            #expect(Set(anthology.poems.map(\.title)) == ["Elegy", "Sonnet"])
            #expect(existing.anthologies.map(\.name) == ["Best"])
            try ctx.save()
            #expect(try ctx.count(for: FetchRequest(entityName: "Poem")) == 2)
        }
    }

    @Test func anObjectIsInsertedOnceIntoOneContext() async throws {
        let context = try Self.context()
        let poem = try await context.perform { ctx -> ObjectID in
            let poem = Poem(title: "Ode")
            try ctx.insert(poem)
            // Another context cannot be handed it: an object is not Sendable, so the compiler refuses the hand-over.
            // An insert rolled back lets the object go for good.
            ctx.rollback()
            let gone = #expect(throws: ObjectGraphError.self) { try ctx.insert(poem) }
            #expect(gone?.description.contains("rolled back") == true)
            return poem.objectID
        }
        #expect(poem.isTemporaryID)
    }

    @Test func aModelWithoutTheClassAndALinkToAnotherKindAreRefused() async throws {
        let model = try Model(entities: [EntityDescription("Poem", attributes: [.init("title", .string)])])
        await ObjectContext(coordinator: .inMemory(model: model)).perform { ctx in
            let error = #expect(throws: ObjectGraphError.self) { try ctx.insert(Poem(title: "Ode")) }
            #expect(error?.description.contains("Model([Poem.self") == true)
        }
        let poem = Poem(title: "Ode")
        let wrong = #expect(throws: ObjectGraphError.self) { try poem.setObject(Anthology(), forKey: "poet") }
        #expect(wrong?.description.contains("Poet") == true)
        #expect(throws: ObjectGraphError.self) { try poem.setValue(3, forKey: "title") }
        #expect(throws: ObjectGraphError.self) { try poem.setValue("x", forKey: "missing") }
    }
}

import Foundation
import Testing
import ObjectGraph

struct Shelf: Codable, Equatable {
    var room: String
    var level: Int
}

@Entity
final class Writer: ManagedObject {
    @Attribute(minLength: 1) var name: String = ""
    var born: Date?
    @Relationship(inverse: "writer", deleteRule: .cascade) var novels: Set<Novel>
    @Transient var scratch = 0
}

@Entity(isAbstract: true)
class Work: ManagedObject {
    @Attribute(isIndexed: true) var title: String = "Untitled"
}

@Entity(uniquenessConstraints: [["isbn"]])
final class Novel: Work {
    @Attribute(minValue: 1, maxValue: 5000) var pages: Int32 = 1
    var isbn: String?
    var price: Decimal = 0
    var shelf: Shelf?
    var rating: Double?
    @Relationship(inverse: "novels") var writer: Writer?
    @Relationship(inverse: "novel", deleteRule: .cascade) var parts: [Part]
}

@Entity
final class Part: ManagedObject {
    var number: Int = 0
    @Relationship(inverse: "parts") var novel: Novel?
}

@Suite struct MacroEntityTests {
    static func model() throws -> Model { try Model([Writer.self, Work.self, Novel.self, Part.self]) }

    @Test func theEntityDescriptionFollowsTheDeclaration() throws {
        let model = try Self.model()
        let novel = try model.entity(named: "Novel")
        #expect(novel.rootName == "Work")
        #expect(novel.attributes.map(\.name) == ["title", "pages", "isbn", "price", "shelf", "rating"])
        let pages = try #require(novel.attribute(named: "pages"))
        #expect(pages.type == .int32 && !pages.isOptional && pages.defaultValue == .int(1) && pages.minValue == 1 && pages.maxValue == 5000)
        #expect(novel.attribute(named: "isbn")?.isOptional == true)
        #expect(novel.attribute(named: "shelf")?.type == .codable(typeName: "Shelf"))
        #expect(novel.attribute(named: "title")?.isIndexed == true)
        #expect(novel.attribute(named: "title")?.defaultValue == .string("Untitled"))
        #expect(novel.relationship(named: "parts")?.isOrdered == true)
        #expect(novel.uniquenessConstraints == [["isbn"]])
        #expect(try model.entity(named: "Work").isAbstract)
        let writer = try model.entity(named: "Writer")
        #expect(writer.attribute(named: "scratch") == nil)
        #expect(writer.relationship(named: "novels")?.deleteRule == .cascade)
        #expect(Novel.propertyName(for: \Novel.pages) == "pages")
        #expect(Novel.propertyName(for: \Novel.title) == "title")
        #expect(Writer.propertyName(for: \Writer.novels) == "novels")
    }

    /// A relationship getter given another relationship's position, or none, or one past the end, reads by name.
    @Test func aRelationshipPositionTheModelContradictsFallsBackToTheName() async throws {
        let context = ObjectContext(coordinator: PersistentStoreCoordinator.inMemory(model: try Self.model()))
        try await context.perform { ctx in
            let writer = try ctx.insert(Writer.self)
            writer.name = "Ann"
            let novel = try ctx.insert(Novel.self)
            novel.writer = writer
            let part = try ctx.insert(Part.self)
            part.novel = novel
            for position in [-1, 0, 1, 7] {
                #expect(novel._toOne("writer", at: position, as: Writer.self) === writer, "at \(position)")
                #expect(novel._toMany("parts", at: position, as: Part.self) == [part], "at \(position)")
                #expect(part._toOne("novel", at: position, as: Novel.self) === novel, "at \(position)")
                #expect(writer._toMany("novels", at: position, as: Novel.self) == [novel], "at \(position)")
            }
        }
    }

    @Test func typedAccessorsPersistAndReloadThroughAFile() async throws {
        let folder = try TemporaryFolder()
        let model = try Self.model()
        let born = Date(timeIntervalSince1970: -1_000_000)
        let ids = try await ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)).perform { ctx in
            let writer = try ctx.insert(Writer.self)
            writer.name = "约翰史蒂芬"
            writer.born = born
            let novel = try ctx.insert(Novel.self)
            #expect(novel.title == "Untitled" && novel.pages == 1 && novel.isbn == nil)
            novel.title = "拿破仑"
            novel.pages = 412
            novel.price = Decimal(string: "19.99")!
            novel.shelf = Shelf(room: "B", level: 2)
            novel.writer = writer
            #expect(writer.novels == [novel])
            let parts = try (1...3).map { number in
                let part = try ctx.insert(Part.self)
                part.number = number
                return part
            }
            novel.parts = parts.reversed()
            #expect(parts[0].novel === novel)
            try ctx.save()
            return (writer.objectID, novel.objectID)
        }
        let reopened = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL))
        try await reopened.perform { ctx in
            let novel = try ctx.existingObject(with: ids.1, as: Novel.self)
            #expect(novel.title == "拿破仑" && novel.pages == 412 && novel.price == Decimal(string: "19.99")!)
            #expect(novel.shelf == Shelf(room: "B", level: 2) && novel.rating == nil)
            #expect(novel.writer?.name == "约翰史蒂芬" && novel.writer?.born == born)
            #expect(novel.parts.map(\.number) == [3, 2, 1])
            let works = try ctx.fetch(Work.self, sortedBy: ["title"])
            #expect(works.count == 1 && works[0] === novel)
            let writer = try ctx.existingObject(with: ids.0, as: Writer.self)
            try ctx.delete(writer)
            try ctx.save()
            #expect(try ctx.fetch(Part.self).isEmpty)
            #expect(try ctx.fetch(Novel.self).isEmpty)
        }
    }
}

/// An Int property is written to its word directly when the usual case holds; what it writes must be tracked as
/// any other setter's write is.
@Suite struct TypedIntegerSetterTests {
    @Test func settingAnIntegerIsAChangeOnlyWhenTheValueDiffers() async throws {
        let folder = try TemporaryFolder()
        let model = try MacroEntityTests.model()
        let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL))
        let id = try await context.perform { ctx in
            let part = try ctx.insert(Part.self)
            part.number = 7
            part.number = -3
            #expect(try part.value(forKey: "number") == .int(-3))
            try ctx.save()
            return part.objectID
        }
        try await context.perform { ctx in
            ctx.reset()
            let part = try ctx.existingObject(with: id, as: Part.self)
            part.number = -3
            let (unchanged, pendingAtSameValue) = (try part.changedValues(), ctx.hasChanges)
            #expect(!pendingAtSameValue && unchanged.isEmpty)
            part.number = 8
            let pendingAtNewValue = ctx.hasChanges
            #expect(pendingAtNewValue)
            #expect(try part.changedValues() == ["number": .int(8)])
            #expect(try part.committedValues(forKeys: ["number"]) == ["number": .int(-3)])
            // Back to the saved value: nothing left to write.
            part.number = -3
            let pendingWhenSetBack = ctx.hasChanges
            #expect(!pendingWhenSetBack)
            part.number = Int.max
            try ctx.save()
        }
        let reopened = ObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL))
        let stored = try await reopened.perform { ctx in try ctx.existingObject(with: id, as: Part.self).number }
        #expect(stored == Int.max)
    }

    @Test func settingAnIntegerOfADeletedObjectTrapsNamingIt() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let context = ObjectContext(coordinator: .inMemory(model: try MacroEntityTests.model()), name: "parts")
            try await context.perform { ctx in
                let part = try ctx.insert(Part.self)
                try ctx.save()
                try ctx.delete(part)
                part.number = 2
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Part Part/p1") && output.contains("it is deleted"), "\(output)")
    }
}

@Suite struct TypedFetchTests {
    @Test func typedRequestsFormatsAndPredicatesReturnTypedObjects() async throws {
        let folder = try TemporaryFolder()
        let context = ObjectContext(coordinator: try PersistentStoreCoordinator(model: try MacroEntityTests.model(), storeURL: folder.storeURL))
        try await context.perform { ctx in
            let writer = try ctx.insert(Writer.self)
            writer.name = "约翰史蒂芬"
            for (title, pages) in [("拿破仑", 412), ("Waterloo", 230), ("Elba", 90)] {
                let novel = try ctx.insert(Novel.self)
                novel.title = title
                novel.pages = Int32(pages)
                novel.writer = writer
            }
            try ctx.save()
            let long: [Novel] = try ctx.fetch(Novel.self, sortedBy: ["-pages"], where: "pages > %d", 100)
            #expect(long.map(\.title) == ["拿破仑", "Waterloo"])
            let minimum: Int32 = 100
            let typed = try ctx.fetch(Novel.self, matching: #Predicate { $0.pages > minimum && $0.writer?.name == "约翰史蒂芬" }, sortedBy: ["title"])
            #expect(typed.map(\.title) == ["Waterloo", "拿破仑"])
            var request = Novel.fetchRequest()
            request.sortKeys = [SortKey("title")]
            request.fetchBatchSize = 2
            let batched = try ctx.fetchResults(request, as: Novel.self)
            #expect(batched.map(\.title) == ["Elba", "Waterloo", "拿破仑"])
            // Each class names its own entity, also through a generic caller and a sub-entity.
            func name<T: ManagedEntity>(_: T.Type) -> String { T.entityName }
            #expect([Work.entityName, Novel.entityName, name(Novel.self), Novel.fetchRequest().entityName] == ["Work", "Novel", "Novel", "Novel"])
            let works = try ctx.fetch(Work.fetchRequest(), as: Work.self)
            #expect(works.count == 3 && works.allSatisfy { $0 is Novel })
            let writers = try ctx.fetch(Writer.self, where: "novels.@sum.pages == 732")
            #expect(writers == [writer])
        }
    }
}

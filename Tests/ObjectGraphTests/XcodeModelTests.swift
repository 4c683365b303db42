import Foundation
import Testing
@testable import ObjectGraph

@Suite struct XcodeModelTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    @Test func theCurrentVersionLoadsWithEveryProperty() throws {
        let model = try Model(xcodeModelNamed: "Library", in: Self.fixtures, classes: [Book.self])
        let book = try model.entity(named: "Book")
        let media = try model.entity(named: "Media")
        #expect(book.rootName == "Media" && !book.isAbstract && media.isAbstract)
        #expect(book.objectType == Book.self)
        #expect(book.attributes.map(\.name) == ["name", "author", "isbn", "pages", "price", "rating", "inPrint", "code", "site", "cover", "edition", "sold", "weight"])
        func attribute(_ name: String) throws -> AttributeDescription { try #require(book.attribute(named: name)) }
        #expect(try attribute("name").type == .string && !attribute("name").isOptional && attribute("name").defaultValue == .string("Untitled"))
        #expect(try attribute("author").isOptional)
        #expect(try attribute("isbn").pattern == "[0-9]{3}-[0-9]{4}")
        let pages = try attribute("pages")
        #expect(pages.type == .int32 && pages.minValue == 1 && pages.maxValue == 5000 && pages.defaultValue == .int(1) && !pages.isOptional)
        #expect(try attribute("price").type == .decimal && attribute("price").defaultValue == .decimal(Decimal(string: "9.99")!))
        #expect(try attribute("rating").type == .double && attribute("rating").defaultValue == .double(0.5))
        #expect(try attribute("inPrint").type == .bool && attribute("inPrint").defaultValue == .bool(true))
        #expect(try attribute("code").type == .uuid && attribute("site").type == .uri && attribute("cover").type == .binary)
        #expect(try attribute("edition").type == .int16 && attribute("sold").type == .int64 && attribute("weight").type == .float)
        #expect(book.uniquenessConstraints == [["isbn"]])
        #expect(media.description.indexes == [["name"]])
        let writer = try #require(book.relationship(named: "writer"))
        #expect(!writer.isToMany && writer.inverseName == "books" && writer.deleteRule == .nullify && writer.destinationEntityName == "Author")
        let chapters = try #require(book.relationship(named: "chapters"))
        #expect(chapters.isToMany && chapters.isOrdered && chapters.deleteRule == .cascade)
        #expect(chapters.description.minCount == 1 && chapters.description.maxCount == 50)
        #expect(book.relationship(named: "tags")?.deleteRule == .noAction)
        let author = try model.entity(named: "Author")
        #expect(author.attribute(named: "name")?.minLength == 1 && author.attribute(named: "name")?.maxLength == 40)
        #expect(author.attribute(named: "name")?.isIndexed == true)
        #expect(author.attribute(named: "born")?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: -3_187_296_000)))
        #expect(author.attribute(named: "scratch")?.isTransient == true)
        #expect(author.relationship(named: "profile")?.deleteRule == .deny)
        #expect(author.relationship(named: "books")?.deleteRule == .cascade)
    }

    @Test func theFirstVersionLoadsOnItsOwnAndDiffersInHash() throws {
        let first = try Model(contentsOf: Self.fixtures.appendingPathComponent("Library.xcdatamodeld/Library.xcdatamodel"))
        let current = try Model(contentsOf: Self.fixtures.appendingPathComponent("Library.xcdatamodeld"))
        #expect(first.entities.map(\.name) == ["Author", "Book"])
        #expect(try first.entity(named: "Book").relationship(named: "writer")?.inverseName == "books")
        #expect(first.versionHash != current.versionHash)
    }

    @Test func aModelFileDrivesAStackWithMacroClasses() async throws {
        let folder = try TemporaryFolder()
        let model = try Model(xcodeModelNamed: "Library", in: Self.fixtures, classes: [Book.self])
        let stack = try DataStack(databaseFileName: "xcode.sqlite", directory: folder.url, model: model)
        let name = try await stack.background { db in
            let book = try db.insert(Book.self)
            book.name = "拿破仑"
            book.author = "约翰史蒂芬"
            try book.setValue(412, forKey: "pages")
            return book.name
        }
        #expect(name == "拿破仑")
        let pages = try await stack.onMainContext { ctx in
            try ctx.fetch(Book.self, where: "author = %@", "约翰史蒂芬").first?.value(forKey: "pages")
        }
        #expect(pages == .int(412))
    }

    /// Writes a one-version model with `contents` and returns its folder.
    func malformed(_ contents: String, currentVersion: String? = nil) throws -> (URL, TemporaryFolder) {
        let folder = try TemporaryFolder()
        let model = folder.url.appendingPathComponent("Bad.xcdatamodeld")
        let version = model.appendingPathComponent("Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try contents.write(to: version.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        if let currentVersion {
            let plist = try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": currentVersion], format: .xml, options: 0)
            try plist.write(to: model.appendingPathComponent(".xccurrentversion"))
        }
        return (model, folder)
    }

    static let brokenModels: [(String, String, String)] = [
        ("<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"Integer 128\"/></entity></model>",
         "entity A, attribute x", "unknown attributeType 'Integer 128'"),
        ("<model><entity name=\"A\"><relationship name=\"b\" destinationEntity=\"B\"/></entity></model>",
         "entity A, property b", "its destination entity 'B' is not in the model"),
        ("<model><entity name=\"A\"><attribute name=\"n\" attributeType=\"UUID\" defaultValueString=\"many\"/></entity></model>",
         "entity A, attribute n", "defaultValueString 'many' does not fit type UUID"),
        ("<model><entity><attribute name=\"x\" attributeType=\"String\"/></entity></model>", "entity at line 1", "it has no name"),
        ("<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\"", "line", "malformed XML"),
        ("<model>\n  <entity name=\"A\">\n    <attribute name=\"x\" attributeType=\"String\"/>\n</model>",
         "line 4, column", "a closing tag does not match the open element); <entity> opened on line 2 is not closed"),
        ("<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\" derived=\"YES\" derivationExpression=\"now()\"/></entity></model>",
         "entity A, property x", "now() derives a Date, but the attribute is String"),
        ("<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\" derived=\"YES\" derivationExpression=\"title.@sum\"/></entity></model>",
         "entity A, property x", "its derivation 'title.@sum' is not one Core Data allows"),
        ("<model><entity name=\"A\"><fetchedProperty name=\"recent\"><fetchRequest name=\"f\" entity=\"Ghost\"/></fetchedProperty></entity></model>",
         "entity A, property recent", "it fetches 'Ghost', which is not in the model"),
        ("<model><entity name=\"A\"><gadget/></entity></model>", "<gadget> at line 1", "not one this release reads"),
        ("<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\"/><fetchIndex name=\"i\"><fetchIndexElement property=\"x\" type=\"RTree\"/></fetchIndex></entity></model>",
         "entity A, fetch index element at line 1", "RTree indexes are not supported"),
        ("<model><entity name=\"A\"><relationship name=\"b\" destinationEntity=\"B\" inverseName=\"a\" inverseEntity=\"C\"/></entity>"
            + "<entity name=\"B\"><relationship name=\"a\" destinationEntity=\"A\" inverseName=\"b\" inverseEntity=\"A\"/></entity><entity name=\"C\"/></model>",
         "entity A, relationship b", "its inverseEntity C has no relationship 'a'"),
        ("<model><entity name=\"A\"/><fetchRequest name=\"f\" entity=\"A\" predicateString=\"x ==\"/></model>",
         "fetch request f", "its predicate"),
        ("<model><entity name=\"A\"/><configuration name=\"Cloud\"><memberEntity name=\"Ghost\"/></configuration></model>",
         "entity Ghost", "configuration 'Cloud' names it"),
        ("<model><entity name=\"A\"><relationship name=\"b\" destinationEntity=\"Ghost\" inverseName=\"a\"/></entity></model>",
         "entity A, property b", "its destination entity 'Ghost' is not in the model"),
        ("<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\" minValueString=\"few\"/></entity></model>",
         "entity A, attribute x", "minValueString 'few' is not a number"),
        ("<notAModel/>", "model", "no <model> element"),
        // Core Data allows the Undefined type (no attributeType) on a transient attribute only.
        ("<model><entity name=\"A\"><attribute name=\"scratch\" optional=\"YES\"/></entity></model>",
         "entity A, attribute scratch", "it has no attributeType (Undefined), which Core Data allows on a transient attribute only"),
    ]

    @Test(arguments: brokenModels.indices)
    func aBadFileNamesTheFileAndTheElement(_ index: Int) throws {
        let (contents, element, reason) = Self.brokenModels[index]
        let (url, folder) = try malformed(contents)
        defer { _ = folder }
        do {
            _ = try Model(contentsOf: url)
            Issue.record("the model loaded")
        } catch let error as ObjectGraphError {
            let message = error.description
            #expect(message.contains(url.appendingPathComponent("Bad.xcdatamodel/contents").path), "\(message)")
            #expect(message.contains(element) && message.contains(reason), "\(message)")
        }
    }

    @Test func aMissingCurrentVersionIsNamed() throws {
        let (url, folder) = try malformed("<model/>", currentVersion: "Bad 7.xcdatamodel")
        defer { _ = folder }
        do {
            _ = try Model(contentsOf: url)
            Issue.record("the model loaded")
        } catch {
            #expect("\(error)".contains(".xccurrentversion, _XCCurrentVersionName: it names Bad 7.xcdatamodel, which is not in the model"), "\(error)")
        }
        #expect(throws: ObjectGraphError.self) { try Model(xcodeModelNamed: "Nope", in: Self.fixtures) }
    }
}

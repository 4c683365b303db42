import Foundation
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing
@testable import ObjectGraphMacroExpansions

private let macros: [String: MacroSpec] = [
    "Entity": MacroSpec(type: EntityMacro.self, conformances: ["ManagedEntity"]),
    "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
    "ObjectGraph._PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
    "Relationship": MacroSpec(type: MarkerMacro.self),
    "Attribute": MacroSpec(type: MarkerMacro.self),
    "Transient": MacroSpec(type: MarkerMacro.self),
    "Unique": MacroSpec(type: SchemaMarkerMacro.self),
    "Index": MacroSpec(type: SchemaMarkerMacro.self),
]

private func expect(_ source: String, expands expected: String, diagnostics: [DiagnosticSpec] = [], sourceLocation: SourceLocation = #_sourceLocation) {
    assertMacroExpansion(source, expandedSource: expected, diagnostics: diagnostics, macroSpecs: macros, indentationWidth: .spaces(4)) { failure in
        Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
    }
}

@Suite struct EntityMacroTests {
    @Test func expandsAttributesRelationshipsAndConformance() {
        expect(
            """
            @Entity
            final class Book: ManagedObject {
                @Attribute(minLength: 1) var title: String = ""
                var isbn: String?
                var cover: Cover?
                @Relationship(inverse: "books", deleteRule: .deny, isOptional: false) var author: Author?
                @Relationship(inverse: "book") var chapters: [Chapter]
                @Transient var cache = 0
                static var shared = 1
                var computed: Int { 1 }
            }
            """,
            expands: #"""
            final class Book: ManagedObject {
                @ObjectGraph._PersistedProperty(position: 0) var title: String = ""
                @ObjectGraph._PersistedProperty(position: 1)
                var isbn: String?
                @ObjectGraph._PersistedProperty(position: 2)
                var cover: Cover?
                @ObjectGraph._PersistedProperty(position: 0) var author: Author?
                @ObjectGraph._PersistedProperty(position: 1) var chapters: [Chapter]
                var cache = 0
                static var shared = 1
                var computed: Int { 1 }

                /// The entity this class represents, derived from its declaration by `@Entity`.
                public class var entityDescription: ObjectGraph.EntityDescription {
                    ObjectGraph.EntityDescription("Book",
                        attributes: [ObjectGraph.AttributeDescription("title", ObjectGraph._attributeType(String.self), isOptional: false, defaultValue: ObjectGraph._defaultAttributeValue("" as (String)?), minLength: 1),
                            ObjectGraph.AttributeDescription("isbn", ObjectGraph._attributeType(String.self), isOptional: true, defaultValue: .null),
                            ObjectGraph.AttributeDescription("cover", ObjectGraph.AttributeType.codable(typeName: "Cover"), isOptional: true, defaultValue: .null)],
                        relationships: [ObjectGraph.RelationshipDescription("author", destination: "Author", inverse: "books", isOptional: false, deleteRule: .deny),
                            ObjectGraph.RelationshipDescription("chapters", destination: "Chapter", inverse: "book", isToMany: true, isOrdered: true)],
                        className: "Book")
                }

                /// The name of the entity this class represents.
                public class var entityName: String {
                    "Book"
                }

                /// Whether instances of `type` may validate values themselves, as `@Entity` read this class's body.
                public override class func _mayValidateValues(_ type: AnyClass) -> Bool {
                    type != Book.self
                }

                /// The persisted properties' key paths and names, for typed queries.
                public class var _keyPathNames: [AnyKeyPath: String] {
                    _keyPathNames_Book(for: self)
                }

                /// The persisted properties of this class and its ancestors, as key paths rooted at `T`.
                public class func _keyPathNames_Book<T: Book>(for type: T.Type) -> [AnyKeyPath: String] {
                    [:].merging([\T.title: "title", \T.isbn: "isbn", \T.cover: "cover", \T.author: "author", \T.chapters: "chapters"] as [AnyKeyPath: String]) { _, own in
                        own
                    }
                }
            }

            extension Book: ObjectGraph.ManagedEntity {
            }
            """#)
    }

    /// SwiftData's spellings: unlabeled `@Attribute` options, `#Unique` and `#Index` join the entity's
    /// constraints and indexes beside `@Entity`'s own.
    @Test func swiftDataOptionsUniqueAndIndexJoinTheDescription() {
        expect(
            """
            @Entity(indexes: [["issue"]])
            final class Issue: ManagedObject {
                #Unique<Issue>([\\.name, \\.issue])
                #Index<Issue>([\\.name])
                @Attribute(.unique, .externalStorage, maxLength: 9) var name: String = ""
                var issue: Int = 0
            }
            """,
            expands: #"""
            final class Issue: ManagedObject {
                @ObjectGraph._PersistedProperty(position: 0) var name: String = ""
                @ObjectGraph._PersistedProperty(position: 1)
                var issue: Int = 0

                /// The entity this class represents, derived from its declaration by `@Entity`.
                public class var entityDescription: ObjectGraph.EntityDescription {
                    ObjectGraph.EntityDescription("Issue",
                        attributes: [ObjectGraph._withOptions([.externalStorage], ObjectGraph.AttributeDescription("name", ObjectGraph._attributeType(String.self), isOptional: false, defaultValue: ObjectGraph._defaultAttributeValue("" as (String)?), maxLength: 9)),
                            ObjectGraph.AttributeDescription("issue", ObjectGraph._attributeType(Int.self), isOptional: false, defaultValue: ObjectGraph._defaultAttributeValue(0 as (Int)?))],
                        relationships: [],
                        uniquenessConstraints: [["name"], ["name", "issue"]],
                        indexes: ([["issue"]]) + [["name"]],
                        className: "Issue")
                }

                /// The name of the entity this class represents.
                public class var entityName: String {
                    "Issue"
                }

                /// Whether instances of `type` may validate values themselves, as `@Entity` read this class's body.
                public override class func _mayValidateValues(_ type: AnyClass) -> Bool {
                    type != Issue.self
                }

                /// The persisted properties' key paths and names, for typed queries.
                public class var _keyPathNames: [AnyKeyPath: String] {
                    _keyPathNames_Issue(for: self)
                }

                /// The persisted properties of this class and its ancestors, as key paths rooted at `T`.
                public class func _keyPathNames_Issue<T: Issue>(for type: T.Type) -> [AnyKeyPath: String] {
                    [:].merging([\T.name: "name", \T.issue: "issue"] as [AnyKeyPath: String]) { _, own in
                        own
                    }
                }
            }

            extension Issue: ObjectGraph.ManagedEntity {
            }
            """#)
    }

    @Test func aSubEntityNamesItsParentAndChainsItsKeyPaths() {
        expect(
            """
            @Entity
            final class Novel: Work {
                var pages: Int32 = 1
            }
            """,
            expands: #"""
            final class Novel: Work {
                @ObjectGraph._PersistedProperty
                var pages: Int32 = 1

                /// The entity this class represents, derived from its declaration by `@Entity`.
                public override class var entityDescription: ObjectGraph.EntityDescription {
                    ObjectGraph.EntityDescription("Novel",
                        attributes: [ObjectGraph.AttributeDescription("pages", ObjectGraph._attributeType(Int32.self), isOptional: false, defaultValue: ObjectGraph._defaultAttributeValue(1 as (Int32)?))],
                        relationships: [],
                        parent: "Work",
                        className: "Novel")
                }

                /// The name of the entity this class represents.
                public override class var entityName: String {
                    "Novel"
                }

                /// Whether instances of `type` may validate values themselves, as `@Entity` read this class's body.
                public override class func _mayValidateValues(_ type: AnyClass) -> Bool {
                    type != Novel.self || super._mayValidateValues(Work.self)
                }

                /// The persisted properties' key paths and names, for typed queries.
                public override class var _keyPathNames: [AnyKeyPath: String] {
                    _keyPathNames_Novel(for: self)
                }

                /// The persisted properties of this class and its ancestors, as key paths rooted at `T`.
                public class func _keyPathNames_Novel<T: Novel>(for type: T.Type) -> [AnyKeyPath: String] {
                    _keyPathNames_Work(for: type).merging([\T.pages: "pages"] as [AnyKeyPath: String]) { _, own in
                        own
                    }
                }
            }
            """#)
    }

    static let accessorCases: [(declaration: String, getter: String, setter: String)] = [
        ("var title: String", #"_attribute("title", as: String.self)"#, #"_setAttribute(newValue, forKey: "title")"#),
        ("var born: Date?", #"_attribute("born", as: (Date)?.self)"#, #"_setAttribute(newValue, forKey: "born")"#),
        ("var shelf: Optional<Shelf>", #"_codable("shelf", as: (Shelf)?.self)"#, #"_setCodable(newValue, forKey: "shelf")"#),
        ("var point: Point", #"_codable("point", as: Point.self)"#, #"_setCodable(newValue, forKey: "point")"#),
        (#"@Relationship(inverse: "x") var author: Author?"#, #"_toOne("author", as: Author.self)"#, #"_setToOne(newValue, forKey: "author")"#),
        (#"@Relationship(inverse: "x") var tags: Set<Tag>"#, #"Set(_toMany("tags", as: Tag.self))"#, #"_setToMany(newValue, forKey: "tags")"#),
        (#"@Relationship(inverse: "x") var parts: [Part]"#, #"_toMany("parts", as: Part.self)"#, #"_setToMany(newValue, forKey: "parts")"#),
    ]

    /// A root entity's attribute accessors know their index; the name still decides when the index disagrees.
    @Test func aPositionReachesTheAccessors() {
        expect(
            "@_PersistedProperty(position: 3) var title: String",
            expands: """
            var title: String {
                get {
                    _attribute("title", at: 3, as: String.self)
                }
                set {
                    _setAttribute(newValue, forKey: "title", at: 3)
                }
            }
            """)
    }

    /// A root entity's relationship getters know their index among its relationships, as attributes do.
    @Test func aPositionReachesTheRelationshipGetters() {
        for (declaration, getter) in [("var author: Author?", #"_toOne("author", at: 2, as: Author.self)"#),
                                      ("var tags: Set<Tag>", #"Set(_toMany("tags", at: 2, as: Tag.self))"#),
                                      ("var parts: [Part]", #"_toMany("parts", at: 2, as: Part.self)"#)] {
            let name = declaration.split(separator: " ")[1].dropLast()
            expect(
                #"@_PersistedProperty(position: 2) @Relationship(inverse: "x") "# + declaration,
                expands: """
                \(declaration) {
                    get {
                        \(getter)
                    }
                    set {
                        \(declaration.contains("?") ? "_setToOne" : "_setToMany")(newValue, forKey: "\(name)")
                    }
                }
                """)
        }
    }

    @Test(arguments: accessorCases.indices)
    func persistedPropertiesGetTypedAccessors(_ index: Int) {
        let (declaration, getter, setter) = Self.accessorCases[index]
        let plain = declaration.replacingOccurrences(of: #"@Relationship(inverse: "x") "#, with: "")
        expect(
            "@_PersistedProperty \(declaration)",
            expands: """
            \(plain) {
                get {
                    \(getter)
                }
                set {
                    \(setter)
                }
            }
            """)
    }

    /// The test harness drops the initializer that the compiler keeps (the object-graph tests check the default
    /// reaches the entity); what matters here is the `init` accessor that makes an initial value legal.
    /// A class with an initializer of its own (SwiftData's `init(title:)`) is given the one contexts make objects with.
    @Test func anInitializerOfTheClassBringsTheContextsInitializer() {
        expect(
            """
            @Entity
            final class Note: ManagedObject {
                init(text: String) {
                    super.init()
                }
            }
            """,
            expands: """
            final class Note: ManagedObject {
                init(text: String) {
                    super.init()
                }

                /// Creates an object for a context; contexts call this.
                public required init(entity: ObjectGraph.ModelEntity, objectID: ObjectGraph.ObjectID) {
                    super.init(entity: entity, objectID: objectID)
                }

                /// The entity this class represents, derived from its declaration by `@Entity`.
                public class var entityDescription: ObjectGraph.EntityDescription {
                    ObjectGraph.EntityDescription("Note",
                        attributes: [],
                        relationships: [],
                        className: "Note")
                }

                /// The name of the entity this class represents.
                public class var entityName: String {
                    "Note"
                }

                /// Whether instances of `type` may validate values themselves, as `@Entity` read this class's body.
                public override class func _mayValidateValues(_ type: AnyClass) -> Bool {
                    type != Note.self
                }

                /// The persisted properties' key paths and names, for typed queries.
                public class var _keyPathNames: [AnyKeyPath: String] {
                    _keyPathNames_Note(for: self)
                }

                /// The persisted properties of this class and its ancestors, as key paths rooted at `T`.
                public class func _keyPathNames_Note<T: Note>(for type: T.Type) -> [AnyKeyPath: String] {
                    [:].merging([:] as [AnyKeyPath: String]) { _, own in
                        own
                    }
                }
            }

            extension Note: ObjectGraph.ManagedEntity {
            }
            """)
    }

    /// A body that mentions `validateValue` (an override can sit nowhere else) makes every answer yes, and no
    /// ancestor is asked.
    @Test func aBodyMentioningValueValidationMayValidateValues() {
        expect(
            """
            @Entity
            final class Gauge: Meter {
                override func validateValue(_ value: AttributeValue, forKey key: String) throws {}
            }
            """,
            expands: """
            final class Gauge: Meter {
                override func validateValue(_ value: AttributeValue, forKey key: String) throws {}

                /// The entity this class represents, derived from its declaration by `@Entity`.
                public override class var entityDescription: ObjectGraph.EntityDescription {
                    ObjectGraph.EntityDescription("Gauge",
                        attributes: [],
                        relationships: [],
                        parent: "Meter",
                        className: "Gauge")
                }

                /// The name of the entity this class represents.
                public override class var entityName: String {
                    "Gauge"
                }

                /// Whether instances of `type` may validate values themselves, as `@Entity` read this class's body.
                public override class func _mayValidateValues(_ type: AnyClass) -> Bool {
                    true
                }

                /// The persisted properties' key paths and names, for typed queries.
                public override class var _keyPathNames: [AnyKeyPath: String] {
                    _keyPathNames_Gauge(for: self)
                }

                /// The persisted properties of this class and its ancestors, as key paths rooted at `T`.
                public class func _keyPathNames_Gauge<T: Gauge>(for type: T.Type) -> [AnyKeyPath: String] {
                    _keyPathNames_Meter(for: type).merging([:] as [AnyKeyPath: String]) { _, own in
                        own
                    }
                }
            }
            """)
    }

    @Test func anInitialValueKeepsAnInitAccessor() {
        expect(
            "@_PersistedProperty var pages: Int = 1",
            expands: """
            var pages: Int {
                init(initialValue) {
                }
                get {
                    _attribute("pages", as: Int.self)
                }
                set {
                    _setAttribute(newValue, forKey: "pages")
                }
            }
            """)
    }

    @Test func aRelationshipWithoutInverseIsADiagnosticNamingIt() {
        expect(
            """
            @Entity
            final class Shelf: ManagedObject {
                @Relationship var books: Set<Book>
            }
            """,
            expands: #"""
            final class Shelf: ManagedObject {
                @ObjectGraph._PersistedProperty(position: 0) var books: Set<Book>

                /// The entity this class represents, derived from its declaration by `@Entity`.
                public class var entityDescription: ObjectGraph.EntityDescription {
                    ObjectGraph.EntityDescription("Shelf",
                        attributes: [],
                        relationships: [],
                        className: "Shelf")
                }

                /// The name of the entity this class represents.
                public class var entityName: String {
                    "Shelf"
                }

                /// Whether instances of `type` may validate values themselves, as `@Entity` read this class's body.
                public override class func _mayValidateValues(_ type: AnyClass) -> Bool {
                    type != Shelf.self
                }

                /// The persisted properties' key paths and names, for typed queries.
                public class var _keyPathNames: [AnyKeyPath: String] {
                    _keyPathNames_Shelf(for: self)
                }

                /// The persisted properties of this class and its ancestors, as key paths rooted at `T`.
                public class func _keyPathNames_Shelf<T: Shelf>(for type: T.Type) -> [AnyKeyPath: String] {
                    [:].merging([\T.books: "books"] as [AnyKeyPath: String]) { _, own in
                        own
                    }
                }
            }

            extension Shelf: ObjectGraph.ManagedEntity {
            }
            """#,
            diagnostics: [DiagnosticSpec(message: #"Shelf.books: @Relationship needs inverse: "<name of the Book property>""#, line: 1, column: 1)])
    }

    @Test func aStructIsRefused() {
        expect(
            "@Entity struct Point { var x = 0 }",
            expands: "struct Point { var x = 0 \n}",
            diagnostics: [DiagnosticSpec(message: "@Entity applies to a class that inherits from ManagedObject", line: 1, column: 1)])
    }
}

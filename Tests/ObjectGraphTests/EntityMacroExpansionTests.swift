import Foundation
import Testing

/// `@Entity`'s expansions, as the compiler makes them: each snippet is type-checked against the ObjectGraph module this
/// test run was built with and the macro plugin built beside it, and the compiler's dump of every expansion is compared.
/// Going through the compiler also checks that each expansion compiles, which comparing text alone would not.
@Suite struct EntityMacroExpansionTests {
    /// What one snippet's compilation gave: each non-empty expansion by a readable name (the declaration's path, the
    /// macro, its role: `"Book.title @Entity member attributes"`), and the compiler's diagnostics.
    struct Expansion {
        var succeeded: Bool
        var expansions: [String: String]
        var output: String

        /// The expansions attached to `declaration` or to its members.
        func of(_ declaration: String) -> [String: String] {
            expansions.filter { $0.key == declaration || $0.key.hasPrefix(declaration + ".") || $0.key.hasPrefix(declaration + " ") }
        }

        /// The compiler's errors, as `line:column: message` (lines of the snippet after its `import ObjectGraph`;
        /// without the compiler's "(from macro ...)" note).
        var errors: [String] {
            output.split(separator: "\n").compactMap { line in
                guard let range = line.range(of: "snippet.swift:"), let error = line.range(of: ": error: ") else { return nil }
                let place = line[range.upperBound..<error.lowerBound].split(separator: ":").compactMap { Int($0) }
                guard place.count == 2 else { return nil }
                let message = line[error.upperBound...]
                return "\(place[0] - 1):\(place[1]): \(message[..<(message.range(of: " (from macro")?.lowerBound ?? message.endIndex)])"
            }
        }
    }

    static func expand(_ source: String) throws -> Expansion {
        let build = CompileTimeSafetyTests.buildFolder
        let plugin = build.appendingPathComponent("ObjectGraphMacros-tool")
        guard FileManager.default.isExecutableFile(atPath: plugin.path) else {
            throw CompileTimeSafetyTests.SpawnError(arguments: [plugin.path], code: ENOENT)
        }
        let result = try CompileTimeSafetyTests.typecheck(
            "import ObjectGraph\n" + source,
            arguments: ["-load-plugin-executable", plugin.path + "#ObjectGraphMacros", "-Xfrontend", "-dump-macro-expansions"])
        return Expansion(succeeded: result.succeeded, expansions: try dumpedExpansions(result.output), output: result.output)
    }

    /// Reads `-dump-macro-expansions`' output: each expansion is its buffer's name, a rule, its text and a rule.
    static func dumpedExpansions(_ output: String) throws -> [String: String] {
        let rule = "------------------------------"
        let lines = output.components(separatedBy: "\n")
        var expansions: [String: String] = [:]
        var index = 0
        while index < lines.count {
            guard lines[index].hasPrefix("@__swiftmacro_"), index + 1 < lines.count, lines[index + 1] == rule else {
                index += 1
                continue
            }
            guard let end = lines[(index + 2)...].firstIndex(of: rule) else { break }
            let text = lines[(index + 2)..<end].joined(separator: "\n")
            // Markers expand to nothing; their buffers (a freestanding macro's name holds the file's hash) are not read.
            if !text.isEmpty {
                let name = try readableName(lines[index])
                #expect(expansions[name] == nil, "two expansions named \(name)")
                expansions[name] = text
            }
            index = end + 1
        }
        return expansions
    }

    struct UnreadableName: Error, CustomStringConvertible {
        let name: String
        var description: String { "an expansion's buffer name not read: \(name)" }
    }

    /// `@__swiftmacro_7snippet5ShelfC5books6EntityfMr0_.swift` -> `Shelf.books @Entity member attributes`: the
    /// mangled context is length-prefixed identifiers with kind letters between them; the last one is the macro, and
    /// the letter after `fM` its role.
    static func readableName(_ buffer: String) throws -> String {
        var rest = Substring(buffer.dropFirst("@__swiftmacro_".count))
        var identifiers: [String] = []
        while !rest.hasPrefix("fM") {
            let digits = rest.prefix(while: \.isNumber)
            if digits.isEmpty {
                guard let letter = rest.first, letter.isLetter else { throw UnreadableName(name: buffer) }
                rest = rest.dropFirst()
                continue
            }
            rest = rest.dropFirst(digits.count)
            guard let length = Int(digits), rest.count >= length else { throw UnreadableName(name: buffer) }
            identifiers.append(String(rest.prefix(length)))
            rest = rest.dropFirst(length)
        }
        let roles: [Character: String] = [
            "m": "members", "r": "member attributes", "a": "accessors", "e": "extension", "p": "peers", "f": "declarations",
        ]
        guard identifiers.count >= 3, let role = rest.dropFirst(2).first.flatMap({ roles[$0] }) else { throw UnreadableName(name: buffer) }
        // The first identifier is the module.
        return identifiers.dropFirst().dropLast().joined(separator: ".") + " @\(identifiers.last!) \(role)"
    }

    @Test func expandsAttributesRelationshipsAndConformance() throws {
        let result = try Self.expand(
            """
            struct Cover: Codable, Sendable { var url = "" }
            @Entity final class Author: ManagedObject {
                @Relationship(inverse: "author") var books: Set<Book>
            }
            @Entity final class Chapter: ManagedObject {
                @Relationship(inverse: "chapters") var book: Book?
            }
            @Entity
            final class Book: ManagedObject {
                @Attribute(minLength: 1) var title: String = ""
                var isbn: String?
                var cover: Cover?
                @Relationship(inverse: "books", deleteRule: .deny, isOptional: false) var author: Author?
                @Relationship(inverse: "book") var chapters: [Chapter]
                @Transient var cache = 0
                static let shared = 1
                var computed: Int { 1 }
            }
            """)
        #expect(result.succeeded, "\(result.output)")
        #expect(result.of("Book") == [
            "Book @Entity members": #"""
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
            """#,
            "Book @Entity extension": """
            extension Book: ObjectGraph.ManagedEntity {
            }
            """,
            // Attributes and relationships count their positions apart; `@Transient`, static and computed
            // properties get nothing.
            "Book.title @Entity member attributes": "@ObjectGraph._PersistedProperty(position: 0)",
            "Book.isbn @Entity member attributes": "@ObjectGraph._PersistedProperty(position: 1)",
            "Book.cover @Entity member attributes": "@ObjectGraph._PersistedProperty(position: 2)",
            "Book.author @Entity member attributes": "@ObjectGraph._PersistedProperty(position: 0)",
            "Book.chapters @Entity member attributes": "@ObjectGraph._PersistedProperty(position: 1)",
            "Book.title @_PersistedProperty accessors": Self.accessors(#"_attribute("title", at: 0, as: String.self)"#,
                                                                        #"_setAttribute(newValue, forKey: "title", at: 0)"#, initialValue: true),
            "Book.isbn @_PersistedProperty accessors": Self.accessors(#"_attribute("isbn", at: 1, as: (String)?.self)"#,
                                                                       #"_setAttribute(newValue, forKey: "isbn", at: 1)"#),
            "Book.cover @_PersistedProperty accessors": Self.accessors(#"_codable("cover", as: (Cover)?.self)"#,
                                                                        #"_setCodable(newValue, forKey: "cover")"#),
            "Book.author @_PersistedProperty accessors": Self.accessors(#"_toOne("author", at: 0, as: Author.self)"#,
                                                                         #"_setToOne(newValue, forKey: "author")"#),
            "Book.chapters @_PersistedProperty accessors": Self.accessors(#"_toMany("chapters", at: 1, as: Chapter.self)"#,
                                                                           #"_setToMany(newValue, forKey: "chapters")"#),
        ])
    }

    /// The accessors `@_PersistedProperty` gives a property; an initial value keeps an `init` accessor, which makes
    /// the initial value legal on what is now a computed property.
    static func accessors(_ getter: String, _ setter: String, initialValue: Bool = false) -> String {
        (initialValue ? "{\n    init(initialValue) {\n    }\n" : "{\n") + """
            get {
                \(getter)
            }
            set {
                \(setter)
            }
        }
        """
    }

    /// SwiftData's spellings: unlabeled `@Attribute` options, `#Unique` and `#Index` join the entity's
    /// constraints and indexes beside `@Entity`'s own.
    @Test func swiftDataOptionsUniqueAndIndexJoinTheDescription() throws {
        let result = try Self.expand(
            """
            @Entity(indexes: [["issue"]])
            final class Issue: ManagedObject {
                #Unique<Issue>([\\.name, \\.issue])
                #Index<Issue>([\\.name])
                @Attribute(.unique, .externalStorage, maxLength: 9) var name: String = ""
                var issue: Int = 0
            }
            """)
        #expect(result.succeeded, "\(result.output)")
        #expect(result.of("Issue")["Issue @Entity members"]?.hasPrefix(#"""
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
            """#) == true, "\(result.expansions)")
        // The markers expand to nothing.
        #expect(Set(result.of("Issue").keys) == [
            "Issue @Entity members", "Issue @Entity extension",
            "Issue.name @Entity member attributes", "Issue.issue @Entity member attributes",
            "Issue.name @_PersistedProperty accessors", "Issue.issue @_PersistedProperty accessors",
        ])
    }

    /// A sub-entity names its parent, overrides the class members and chains its key paths onto its parent's; its
    /// properties get no position, since a sub-entity's stored row lays attributes out after its ancestors'.
    @Test func aSubEntityNamesItsParentAndChainsItsKeyPaths() throws {
        let result = try Self.expand(
            """
            @Entity class Work: ManagedObject {
                var title: String = ""
            }
            @Entity
            final class Novel: Work {
                var pages: Int32 = 1
            }
            """)
        #expect(result.succeeded, "\(result.output)")
        #expect(result.of("Novel") == [
            "Novel @Entity members": #"""
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
            """#,
            "Novel.pages @Entity member attributes": "@ObjectGraph._PersistedProperty",
            "Novel.pages @_PersistedProperty accessors": Self.accessors(#"_attribute("pages", as: Int32.self)"#,
                                                                         #"_setAttribute(newValue, forKey: "pages")"#, initialValue: true),
        ])
    }

    static let accessorCases: [(declaration: String, getter: String, setter: String)] = [
        ("var title: String", #"_attribute("title", as: String.self)"#, #"_setAttribute(newValue, forKey: "title")"#),
        ("var born: Date?", #"_attribute("born", as: (Date)?.self)"#, #"_setAttribute(newValue, forKey: "born")"#),
        ("var shelf: Optional<Place>", #"_codable("shelf", as: (Place)?.self)"#, #"_setCodable(newValue, forKey: "shelf")"#),
        ("var point: Place", #"_codable("point", as: Place.self)"#, #"_setCodable(newValue, forKey: "point")"#),
        (#"@Relationship(inverse: "x") var author: Probe?"#, #"_toOne("author", as: Probe.self)"#, #"_setToOne(newValue, forKey: "author")"#),
        (#"@Relationship(inverse: "x") var tags: Set<Probe>"#, #"Set(_toMany("tags", as: Probe.self))"#, #"_setToMany(newValue, forKey: "tags")"#),
        (#"@Relationship(inverse: "x") var parts: [Probe]"#, #"_toMany("parts", as: Probe.self)"#, #"_setToMany(newValue, forKey: "parts")"#),
    ]

    /// `@_PersistedProperty` alone, on a class `@Entity` did not read: without a position, the accessors find the
    /// value by name.
    @Test(arguments: accessorCases.indices)
    func persistedPropertiesGetTypedAccessors(_ index: Int) throws {
        let (declaration, getter, setter) = Self.accessorCases[index]
        let name = declaration.components(separatedBy: "var ")[1].split(separator: ":")[0]
        let result = try Self.expand(
            """
            import Foundation
            struct Place: Codable, Sendable { var x = 0 }
            final class Probe: ManagedObject {
                @_PersistedProperty \(declaration)
            }
            """)
        #expect(result.succeeded, "\(result.output)")
        #expect(result.expansions == ["Probe.\(name) @_PersistedProperty accessors": Self.accessors(getter, setter)])
    }

    /// A root entity's accessors know their index; the name still decides when the index disagrees.
    @Test func aPositionReachesTheAccessorsAndRelationshipGetters() throws {
        let result = try Self.expand(
            """
            final class Probe: ManagedObject {
                @_PersistedProperty(position: 3) var title: String
                @_PersistedProperty(position: 2) @Relationship(inverse: "x") var author: Probe?
                @_PersistedProperty(position: 2) @Relationship(inverse: "x") var tags: Set<Probe>
                @_PersistedProperty(position: 2) @Relationship(inverse: "x") var parts: [Probe]
            }
            """)
        #expect(result.succeeded, "\(result.output)")
        #expect(result.expansions == [
            "Probe.title @_PersistedProperty accessors": Self.accessors(#"_attribute("title", at: 3, as: String.self)"#,
                                                                         #"_setAttribute(newValue, forKey: "title", at: 3)"#),
            "Probe.author @_PersistedProperty accessors": Self.accessors(#"_toOne("author", at: 2, as: Probe.self)"#,
                                                                          #"_setToOne(newValue, forKey: "author")"#),
            "Probe.tags @_PersistedProperty accessors": Self.accessors(#"Set(_toMany("tags", at: 2, as: Probe.self))"#,
                                                                        #"_setToMany(newValue, forKey: "tags")"#),
            "Probe.parts @_PersistedProperty accessors": Self.accessors(#"_toMany("parts", at: 2, as: Probe.self)"#,
                                                                         #"_setToMany(newValue, forKey: "parts")"#),
        ])
    }

    /// A class with an initializer of its own (SwiftData's `init(title:)`) is given the one contexts make objects
    /// with, which it no longer inherits.
    @Test func anInitializerOfTheClassBringsTheContextsInitializer() throws {
        let result = try Self.expand(
            """
            @Entity
            final class Note: ManagedObject {
                init(text: String) {
                    super.init()
                }
            }
            """)
        #expect(result.succeeded, "\(result.output)")
        #expect(result.of("Note")["Note @Entity members"]?.hasPrefix("""
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
            """) == true, "\(result.expansions)")
        #expect(result.of("Note")["Note @Entity members"]?.hasSuffix("""
            public class func _keyPathNames_Note<T: Note>(for type: T.Type) -> [AnyKeyPath: String] {
                [:].merging([:] as [AnyKeyPath: String]) { _, own in
                    own
                }
            }
            """) == true, "\(result.expansions)")
    }

    /// A body that mentions `validateValue` (an override can sit nowhere else) makes every answer yes, and no
    /// ancestor is asked.
    @Test func aBodyMentioningValueValidationMayValidateValues() throws {
        let result = try Self.expand(
            """
            @Entity class Meter: ManagedObject {}
            @Entity
            final class Gauge: Meter {
                override func validateValue(_ value: AttributeValue, forKey key: String) throws {}
            }
            """)
        #expect(result.succeeded, "\(result.output)")
        #expect(result.of("Gauge")["Gauge @Entity members"]?.contains("""
            public override class func _mayValidateValues(_ type: AnyClass) -> Bool {
                true
            }
            """) == true, "\(result.expansions)")
        #expect(result.of("Meter")["Meter @Entity members"]?.contains("""
            public override class func _mayValidateValues(_ type: AnyClass) -> Bool {
                type != Meter.self
            }
            """) == true, "\(result.expansions)")
    }

    @Test func aRelationshipWithoutInverseIsADiagnosticNamingIt() throws {
        let result = try Self.expand(
            """
            @Entity final class Book: ManagedObject {}
            @Entity
            final class Shelf: ManagedObject {
                @Relationship var books: Set<Book>
            }
            """)
        #expect(!result.succeeded)
        // The compiler adds its own "missing argument for parameter 'inverse'" at the property.
        #expect(result.errors.first == #"2:1: Shelf.books: @Relationship needs inverse: "<name of the Book property>""#, "\(result.output)")
        // The rest still expands, so that one mistake does not bury the class under errors of missing members.
        #expect(result.of("Shelf")["Shelf @Entity members"]?.contains("""
                ObjectGraph.EntityDescription("Shelf",
                    attributes: [],
                    relationships: [],
                    className: "Shelf")
            """) == true, "\(result.expansions)")
    }

    @Test func aStructIsRefused() throws {
        let result = try Self.expand("@Entity struct Point { var x = 0 }")
        #expect(!result.succeeded)
        #expect(result.errors.first == "1:1: @Entity applies to a class that inherits from ManagedObject", "\(result.output)")
        #expect(result.expansions.isEmpty)
    }
}

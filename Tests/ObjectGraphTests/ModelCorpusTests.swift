import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import ObjectGraph

/// The corpus of model files the project writes itself (`Fixtures/Corpus`): every attribute type and option of
/// Xcode's model editor, and three apps' shapes (a sports league, a chat, receipts). Each file is loaded and compared,
/// field by field, with its XML read independently (`XMLDocument`), then round-tripped: one object per entity, every
/// attribute and relationship set, saved, and read back from a reopened store.
@Suite struct ModelCorpusTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/Corpus")
    static let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { $0.hasSuffix(".xcdatamodel") }.map { String($0.dropLast(".xcdatamodel".count)) }.sorted()

    static func load(_ name: String) throws -> Model {
        try Model(contentsOf: folder.appendingPathComponent("\(name).xcdatamodel"))
    }

    @Test func theCorpusCoversEveryAttributeTypeAndOption() throws {
        #expect(Self.names.count >= 12)
        let models = try Self.names.map(Self.load)
        let attributes = models.flatMap { $0.entities.flatMap(\.description.attributes) }
        let types = Set(attributes.map(\.type.name))
        #expect(types.isSuperset(of: ["String", "Boolean", "Integer 16", "Integer 32", "Integer 64", "Double", "Float", "Decimal", "Date",
                                      "Binary", "UUID", "URI", "Undefined"]), "\(types.sorted())")
        #expect(attributes.contains { if case .codable = $0.type { $0.valueTransformerName != nil } else { false } })
        #expect(attributes.contains { if case .codable = $0.type { $0.valueTransformerName == nil } else { false } })
        #expect(attributes.contains(where: \.isTransient) && attributes.contains(where: \.isIndexed))
        #expect(attributes.contains { $0.pattern != nil } && attributes.contains { $0.minLength != nil } && attributes.contains { $0.minValue != nil })
        let relationships = models.flatMap { $0.entities.flatMap(\.description.relationships) }
        #expect(Set(relationships.map(\.deleteRule)) == [.nullify, .cascade, .deny, .noAction])
        #expect(relationships.contains { !$0.hasInverse } && relationships.contains(where: \.isOrdered) && relationships.contains { $0.minCount != nil })
        #expect(relationships.contains { $0.isTransient })
        #expect(models.contains { $0.entities.contains { $0.relationships.contains(where: \.isOrderedBothWays) } })
        #expect(models.contains { !$0.configurations.isEmpty } && models.contains { !$0.fetchRequestTemplates.isEmpty })
        #expect(models.contains { $0.entities.contains { $0.description.parentName != nil } })
        #expect(Set(attributes.compactMap(\.derivation).compactMap(Derivation.init).map { "\($0)".prefix(while: { $0 != "(" }) })
                == ["toOne", "count", "now", "lowercase", "uppercase", "canonical"])
        #expect(models.contains { $0.entities.contains { !$0.fetchedProperties.isEmpty } })
        #expect(models.contains { $0.entities.contains { $0.description.indexes.contains { $0.contains { $0.hasPrefix("-") } } } })
    }

    /// Constructs real apps' models carry that Core Data accepts: defaults Xcode left loosely after a type change,
    /// read as `NSString` reads them (Apple's `boolValue`: true for a leading Y, y, T, t or digit 1-9, after
    /// whitespace, a sign and zeros; `integerValue`: the leading decimal integer, else 0); `valueTransformerName` on
    /// attributes that are not transformable, which Core Data ignores (kept in the description); and a fetch index
    /// naming a to-one relationship beside an attribute.
    @Test func looseConstructsLoadAsCoreDataReadsThem() throws {
        let item = try Self.load("LooseDefaults").entity(named: "Item").description
        func attribute(_ name: String) throws -> AttributeDescription { try #require(item.attributes.first { $0.name == name }) }
        #expect(try attribute("isArchived").defaultValue == .bool(false))   // "0.0"
        #expect(try attribute("isPinned").defaultValue == .bool(true))      // "1"
        #expect(try attribute("count").defaultValue == .int(0))             // "0.0"
        #expect(try attribute("rank").defaultValue == .int(0))              // "NO"
        #expect(try attribute("level").defaultValue == .int(7))             // "7.9"
        #expect(try attribute("ratio").defaultValue == .double(0))          // "NO"
        #expect(try attribute("name").valueTransformerName == "NSStringTransformer")
        #expect(try attribute("link").valueTransformerName == "NSURLTransformer")
        #expect(item.indexes == [["shelf", "-added"]])
    }

    /// A value set on an attribute whose `valueTransformerName` is ignored is stored as its type says, and the index
    /// on a to-one relationship serves a fetch by it, on every store.
    @Test(arguments: StoreKind.allCases)
    func looseConstructsWorkOnEveryStore(_ kind: StoreKind) async throws {
        let model = try Self.load("LooseDefaults")
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(model, folder)
        let context = ObjectContext(coordinator: coordinator)
        let found = try await context.perform { ctx in
            let shelf = try ctx.insert("Shelf")
            let item = try ctx.insert("Item")
            #expect(try item.value(forKey: "rank") == .int(0))
            try item.setValue("Dune", forKey: "name")
            try item.setValue(AttributeValue.url(URL(string: "https://example.com/dune")!), forKey: "link")
            try item.setObject(shelf, forKey: "shelf")
            try ctx.save()
            return try ctx.fetch(FetchRequest(entityName: "Item", format: "shelf == %@", shelf)).map { try $0.value(forKey: "name") }
        }
        #expect(found == [.string("Dune")])
    }

    /// Core Data's Undefined type, which Xcode writes as a transient attribute with no `attributeType`: the attribute
    /// holds a value of any kind in memory, which a save does not store and a refault drops, as the transient
    /// attributes of other types (Core Data: "transient properties … are not saved to the persistent store").
    @Test(arguments: StoreKind.allCases)
    func anUndefinedTransientHoldsAnyValueInMemoryOnly(_ kind: StoreKind) async throws {
        let model = try Self.load("TransientAndTransformable")
        let scratch = try #require(model.entity(named: "Draft").description.attributes.first { $0.name == "scratch" })
        #expect(scratch.type == .undefined && scratch.isTransient)
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(model, folder)
        let context = ObjectContext(coordinator: coordinator)
        let (held, afterSave, afterRefresh) = try await context.perform { ctx in
            let draft = try ctx.insert("Draft")
            var held: [AttributeValue] = []
            for value: AttributeValue in [.string("a caret"), .int(42), .data(Data([7])), .date(Date(timeIntervalSinceReferenceDate: 9))] {
                try draft.setValue(value, forKey: "scratch")
                held.append(try draft.value(forKey: "scratch"))
            }
            try draft.setValue("Dune", forKey: "body")
            try ctx.save()
            let afterSave = try draft.value(forKey: "scratch")
            try ctx.refresh(draft, mergeChanges: false)
            return (held, afterSave, try draft.value(forKey: "scratch"))
        }
        #expect(held == [.string("a caret"), .int(42), .data(Data([7])), .date(Date(timeIntervalSinceReferenceDate: 9))])
        #expect(afterSave == .date(Date(timeIntervalSinceReferenceDate: 9)))
        #expect(afterRefresh == .null)
        // A model built in code keeps the rule: Undefined on a stored attribute is refused, naming it.
        do {
            _ = try Model(entities: [EntityDescription("Note", attributes: [AttributeDescription("scratch", .undefined)])])
            Issue.record("a stored Undefined attribute was accepted")
        } catch {
            #expect("\(error)".contains("Note") && "\(error)".contains("scratch") && "\(error)".contains("transient"), "\(error)")
        }
    }

    @Test(arguments: names)
    func everyFieldMatchesItsXML(_ name: String) throws {
        let model = try Self.load(name)
        let xml = try XMLDocument(contentsOf: Self.folder.appendingPathComponent("\(name).xcdatamodel/contents"))
        let entities = try xml.nodes(forXPath: "/model/entity").compactMap { $0 as? XMLElement }
        #expect(Set(model.entities.map(\.name)) == Set(entities.map { $0.string("name") ?? "" }))
        let types: [String: String] = ["Transformable": "Codable", "": "Undefined"]
        for element in entities {
            let entity = try model.entity(named: element.string("name") ?? "")
            let description = entity.description
            #expect(description.parentName == element.string("parentEntity"), "\(entity.name)")
            #expect(description.isAbstract == (element.string("isAbstract") == "YES"), "\(entity.name)")
            #expect(description.renamingIdentifier == element.string("elementID"), "\(entity.name)")
            #expect(description.attributes.map(\.name) == element.elements(forName: "attribute").map { $0.string("name") ?? "" })
            for (attribute, xml) in zip(description.attributes, element.elements(forName: "attribute")) {
                let at = "\(entity.name).\(attribute.name)"
                let typeName = xml.string("attributeType") ?? ""
                #expect(attribute.type.name.hasPrefix(types[typeName] ?? typeName), "\(at): \(attribute.type.name)")
                #expect(attribute.isOptional == (xml.string("optional") == "YES"), "\(at)")
                #expect(attribute.isTransient == (xml.string("transient") == "YES"), "\(at)")
                #expect(attribute.allowsExternalBinaryDataStorage == (xml.string("allowsExternalBinaryDataStorage") == "YES"), "\(at)")
                #expect(attribute.isIndexed == (xml.string("indexed") == "YES"), "\(at)")
                #expect(attribute.pattern == xml.string("regularExpressionString"), "\(at)")
                #expect(attribute.valueTransformerName == xml.string("valueTransformerName"), "\(at)")
                #expect(attribute.renamingIdentifier == xml.string("elementID"), "\(at)")
                #expect(attribute.versionHashModifier == xml.string("versionHashModifier"), "\(at)")
                #expect(attribute.derivation == (xml.string("derived") == "YES" ? xml.string("derivationExpression") : nil), "\(at)")
                let isNumber = ["Integer 16", "Integer 32", "Integer 64", "Double", "Float", "Decimal"].contains(typeName)
                let limits = typeName == "Date" ? (xml.double("minDateTimeInterval"), xml.double("maxDateTimeInterval"))
                    : isNumber ? (xml.double("minValueString"), xml.double("maxValueString")) : (nil, nil)
                #expect(attribute.minValue == limits.0 && attribute.maxValue == limits.1, "\(at)")
                let lengths = isNumber || typeName == "Date" ? (nil, nil) : (xml.double("minValueString").map(Int.init), xml.double("maxValueString").map(Int.init))
                #expect(attribute.minLength == lengths.0 && attribute.maxLength == lengths.1, "\(at)")
                if let text = xml.string("defaultValueString") {
                    #expect(Self.matches(attribute.defaultValue, text), "\(at): \(attribute.defaultValue) for '\(text)'")
                } else if let seconds = xml.double("defaultDateTimeInterval") {
                    #expect(attribute.defaultValue == .date(Date(timeIntervalSinceReferenceDate: seconds)), "\(at)")
                } else {
                    #expect(attribute.defaultValue == .null, "\(at)")
                }
            }
            #expect(description.relationships.map(\.name) == element.elements(forName: "relationship").map { $0.string("name") ?? "" })
            for (relationship, xml) in zip(description.relationships, element.elements(forName: "relationship")) {
                let at = "\(entity.name).\(relationship.name)"
                #expect(relationship.destinationEntityName == xml.string("destinationEntity"), "\(at)")
                #expect(relationship.inverseName == (xml.string("inverseName") ?? ""), "\(at)")
                #expect(relationship.isToMany == (xml.string("toMany") == "YES"), "\(at)")
                #expect(relationship.isOrdered == (xml.string("ordered") == "YES"), "\(at)")
                #expect(relationship.isOptional == (xml.string("optional") == "YES"), "\(at)")
                #expect(relationship.isTransient == (xml.string("transient") == "YES"), "\(at)")
                let rules = ["Nullify": DeleteRule.nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction]
                #expect(relationship.deleteRule == rules[xml.string("deletionRule") ?? "Nullify"], "\(at)")
                if relationship.isToMany {
                    #expect(relationship.minCount == xml.double("minCount").map(Int.init) && relationship.maxCount == xml.double("maxCount").map(Int.init), "\(at)")
                }
                #expect(relationship.renamingIdentifier == xml.string("elementID"), "\(at)")
            }
            let constraints = try element.nodes(forXPath: "uniquenessConstraints/uniquenessConstraint").compactMap { $0 as? XMLElement }
                .map { $0.elements(forName: "constraint").map { $0.string("value") ?? "" } }
            #expect(description.uniquenessConstraints == constraints, "\(entity.name)")
            let indexes = element.elements(forName: "fetchIndex").map { index in
                index.elements(forName: "fetchIndexElement").map { ($0.string("order") == "descending" ? "-" : "") + ($0.string("property") ?? "") }
            }
            #expect(description.indexes == indexes, "\(entity.name)")
            let fetched = try element.nodes(forXPath: "fetchedProperty").compactMap { $0 as? XMLElement }.map { property in
                let request = property.elements(forName: "fetchRequest").first
                return FetchedPropertyDescription(
                    property.string("name") ?? "", entity: request?.string("entity") ?? "", predicate: request?.string("predicateString") ?? "")
            }
            #expect(description.fetchedProperties == fetched, "\(entity.name)")
            let info = try element.nodes(forXPath: "userInfo/entry").compactMap { $0 as? XMLElement }
            #expect(description.userInfo == Dictionary(uniqueKeysWithValues: info.map { ($0.string("key") ?? "", $0.string("value") ?? "") }))
        }
        let templates = try xml.nodes(forXPath: "/model/fetchRequest").compactMap { $0 as? XMLElement }
        #expect(Set(model.fetchRequestTemplates.keys) == Set(templates.map { $0.string("name") ?? "" }))
        for template in templates {
            let name = template.string("name") ?? ""
            #expect(model.fetchRequestTemplates[name]?.entityName == template.string("entity"))
            #expect(model.fetchRequestTemplates[name]?.predicate == (try? FormatPredicate(format: template.string("predicateString") ?? "", argumentArray: [])))
        }
        let configurations = try xml.nodes(forXPath: "/model/configuration").compactMap { $0 as? XMLElement }
        #expect(model.configurations == Dictionary(uniqueKeysWithValues: configurations.map { configuration in
            (configuration.string("name") ?? "", configuration.elements(forName: "memberEntity").map { $0.string("name") ?? "" })
        }))
    }

    /// Whether `value` is `text` read as Core Data reads a default: numbers and Booleans as Foundation's `NSString`
    /// reads them (`boolValue`, `longLongValue`, `doubleValue`).
    static func matches(_ value: AttributeValue, _ text: String) -> Bool {
        switch value {
        case .string(let string): string == text
        case .bool(let bool): bool == NSString(string: text).boolValue
        case .int(let int): NSString(string: text).longLongValue == int
        case .double(let double): NSString(string: text).doubleValue == double
        case .decimal(let decimal): Decimal(string: text) == decimal
        default: false
        }
    }

    @Test(arguments: names, StoreKind.allCases)
    func oneObjectPerEntityRoundTripsThroughAReopenedStore(_ name: String, _ kind: StoreKind) async throws {
        let model = try Self.load(name)
        let folder = try TemporaryFolder()
        try await Self.roundTrip(model, coordinator: try kind.coordinator(model, folder)) {
            kind == .sqlite ? try kind.coordinator(model, folder) : nil
        }
    }

    /// The configurations of `model` that can each have a store (whole inheritance trees, no relationship leaving
    /// them), taken in name order without sharing an entity: nil unless they hold every entity.
    static func storeConfigurations(of model: Model) -> [String]? {
        var taken: Set<String> = []
        var chosen: [String] = []
        for name in model.configurations.keys.sorted() {
            guard let part = try? model.model(forConfiguration: name) else { continue }
            let names = Set(part.entities.map(\.name))
            guard names.isDisjoint(with: taken) else { continue }
            taken.formUnion(names)
            chosen.append(name)
        }
        return taken.count == model.entities.count ? chosen : nil
    }

    /// Core Data keeps each configuration's entities in the store added for it: every corpus model whose
    /// configurations split it round-trips through one store per configuration, read back from reopened stores.
    @Test(arguments: StoreKind.allCases)
    func modelsSplitByConfigurationRoundTripThroughOneStoreEach(_ kind: StoreKind) async throws {
        let split = Self.names.compactMap { name in (try? Self.load(name)).flatMap { model in Self.storeConfigurations(of: model).map { (model, $0) } } }
        #expect(split.count >= 2, "the corpus has models split by configuration")
        for (model, configurations) in split {
            let folder = try TemporaryFolder()
            func open() throws -> PersistentStoreCoordinator {
                let stores = try configurations.map { ($0, try kind.store(model.model(forConfiguration: $0), folder, name: $0)) }
                return try PersistentStoreCoordinator(model: model, stores: Dictionary(uniqueKeysWithValues: stores))
            }
            try await Self.roundTrip(model, coordinator: try open()) { kind == .sqlite ? try open() : nil }
        }
    }

    /// Inserts one object per entity with every attribute and relationship set, saves, and compares what `reopen`'s
    /// coordinator (or the same one, when it gives none) reads back.
    static func roundTrip(
        _ model: Model, coordinator: PersistentStoreCoordinator, reopen: () throws -> PersistentStoreCoordinator?
    ) async throws {
        let written = try await ObjectContext(coordinator: coordinator).perform { ctx in
            var objects: [String: ManagedObject] = [:]
            for entity in model.entities where !entity.isAbstract { objects[entity.name] = try ctx.insert(entity.name) }
            for (entityName, object) in objects {
                let entity = try model.entity(named: entityName)
                for attribute in entity.attributes where attribute.derivation == nil {
                    if case .codable = attribute.type, attribute.valueTransformerName != nil {
                        try object.setTransformedValue(["sample", attribute.name], forKey: attribute.name)
                    } else {
                        try object.setValue(Self.sample(attribute), forKey: attribute.name)
                    }
                }
            }
            for (entityName, object) in objects {
                for relationship in try model.entity(named: entityName).relationships {
                    let destination = try model.entity(named: relationship.destinationEntityName)
                    // Every object of the destination's tree: a to-many set later must not take one away from a
                    // to-one set before.
                    let targets = destination.selfAndDescendantNames.compactMap { objects[$0] }
                    guard let target = targets.first else { continue }
                    if relationship.isToMany {
                        try object.setObjects(targets, forKey: relationship.name)
                    } else {
                        try object.setObject(target, forKey: relationship.name)
                    }
                }
            }
            try ctx.save()
            return try objects.values.map { try Self.record($0) }
        }
        let reading = try reopen() ?? coordinator
        let read = try await ObjectContext(coordinator: reading).perform { ctx in
            try written.map { record in try Self.record(try ctx.existingObject(with: record.id)) }
        }
        for (before, after) in zip(written, read) {
            // Transient attributes are not stored: they read back as their defaults.
            let entity = try model.entity(named: before.id.entityName)
            var expected = before.values
            for index in entity.transientAttributes { expected[entity.attributes[index].name] = entity.defaultValues[index] }
            #expect(after.values == expected, "\(before.id)")
            // Nor are transient relationships: they read back empty.
            var expectedLinks = before.relationships
            for relationship in entity.relationships where relationship.isTransient { expectedLinks[relationship.name] = [] }
            #expect(after.relationships == expectedLinks, "\(before.id)")
            #expect(before.relationships.values.allSatisfy { !$0.isEmpty }, "every relationship of \(before.id) was set")
        }
    }

    struct Record: Sendable {
        var id: ObjectID
        var values: [String: AttributeValue]
        var relationships: [String: [ObjectID]]
    }

    static func record(_ object: ManagedObject) throws -> Record {
        var values: [String: AttributeValue] = [:]
        for attribute in object.entity.attributes { values[attribute.name] = try object.value(forKey: attribute.name) }
        var relationships: [String: [ObjectID]] = [:]
        for relationship in object.entity.relationships {
            if relationship.isToMany {
                let members = try object.objects(forKey: relationship.name).map(\.objectID)
                // An unordered relationship's members compare as a set.
                relationships[relationship.name] = relationship.isOrdered ? members : members.sorted()
            } else {
                relationships[relationship.name] = try object.object(forKey: relationship.name).map { [$0.objectID] } ?? []
            }
        }
        return Record(id: object.objectID, values: values, relationships: relationships)
    }

    /// A value every rule of `attribute` accepts.
    static func sample(_ attribute: AttributeDescription) -> (any AttributeValueConvertible)? {
        let number = min(max(attribute.minValue ?? 7, 7), attribute.maxValue ?? 7)
        switch attribute.type {
        case .string:
            if attribute.pattern != nil { return "123-4567" }
            let length = min(max(attribute.minLength ?? 0, 5), attribute.maxLength ?? 5)
            return String(repeating: "x", count: length - 1) + "é"
        case .bool: return true
        case .int16, .int32, .int64: return Int64(number)
        case .double, .float: return attribute.maxValue.map { $0 / 2 } ?? 2.5
        case .decimal: return AttributeValue.decimal(Decimal(string: "12.75")!)
        case .date: return Date(timeIntervalSinceReferenceDate: attribute.maxValue.map { $0 / 2 } ?? 700_000_000.5)
        // A value an SQLite store keeps in a file, where the attribute allows it.
        case .binary: return attribute.allowsExternalBinaryDataStorage && attribute.maxLength == nil ? Data(repeating: 5, count: ExternalBinaryData.threshold) : Data([1, 2, 3])
        case .uuid: return UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        case .uri: return URL(string: "https://example.com/\(attribute.name)")!
        case .codable: return Data(#"{"x":1}"#.utf8)
        case .undefined: return "any value"
        }
    }
}

extension XMLElement {
    func string(_ name: String) -> String? { attribute(forName: name)?.stringValue }
    func double(_ name: String) -> Double? { string(name).flatMap(Double.init) }
}

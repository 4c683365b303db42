import Foundation
import Testing
@testable import ObjectGraph

/// What Xcode's model editor writes beyond entities and properties: transient attributes, renaming identifiers,
/// hash modifiers, user info, configurations, fetch request templates, descending indexes, date limits, and a
/// bundle without versions.
@Suite struct XcodeModelFeatureTests {
    static let contents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Event" representedClassName="Event" elementID="Happening" versionHashModifier="2" syncable="YES">
                <attribute name="id" attributeType="UUID" usesScalarValueType="NO"/>
                <attribute name="title" attributeType="String" elementID="name">
                    <userInfo><entry key="display" value="Title"/></userInfo>
                </attribute>
                <attribute name="on" optional="YES" attributeType="Date" minDateTimeInterval="0" maxDateTimeInterval="946684800"/>
                <attribute name="draft" optional="YES" transient="YES" attributeType="String" defaultValueString="none"/>
                <attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromDataTransformer" customClassName="[String]"/>
                <attribute name="secret" optional="YES" attributeType="Transformable" valueTransformerName="Reversed"/>
                <relationship name="venue" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Venue" inverseName="events" inverseEntity="Venue" elementID="place"/>
                <fetchIndex name="byOn"><fetchIndexElement property="on" type="Binary" order="descending"/></fetchIndex>
                <userInfo><entry key="owner" value="calendar"/></userInfo>
            </entity>
            <entity name="Venue" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="events" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Event" inverseName="venue" inverseEntity="Event"/>
                <fetchedProperty name="launches" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Event" predicateString="venue == $FETCH_SOURCE AND title BEGINSWITH 'Launch'"/>
                </fetchedProperty>
            </entity>
            <fetchRequest name="byTitle" entity="Event" predicateString="title == $TITLE"/>
            <configuration name="Cloud"><memberEntity name="Event"/></configuration>
            <userInfo><entry key="team" value="dates"/></userInfo>
            <elements>
                <element name="Event" positionX="-63" positionY="-18" width="128" height="104"/>
            </elements>
        </model>
        """

    /// Writes the model as a `.xcdatamodeld` with `contents` directly inside (no version folders), as some tools do.
    func load() throws -> (Model, TemporaryFolder) {
        let folder = try TemporaryFolder()
        let bundle = folder.url.appendingPathComponent("Calendar.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try Self.contents.write(to: bundle.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return (try Model(contentsOf: bundle), folder)
    }

    @Test func everyElementIsReadAndKept() throws {
        let (model, _) = try load()
        let event = try model.entity(named: "Event")
        #expect(event.description.renamingIdentifier == "Happening" && event.description.versionHashModifier == "2")
        #expect(event.description.userInfo == ["owner": "calendar"])
        #expect(event.attribute(named: "title")?.renamingIdentifier == "name")
        #expect(event.attribute(named: "title")?.userInfo == ["display": "Title"])
        #expect(event.attribute(named: "id")?.type == .uuid)
        #expect(event.attribute(named: "draft")?.isTransient == true)
        #expect(event.attribute(named: "on")?.minValue == 0 && event.attribute(named: "on")?.maxValue == 946_684_800)
        #expect(event.relationship(named: "venue")?.description.renamingIdentifier == "place")
        #expect(event.description.indexes == [["-on"]])
        #expect(model.configurations == ["Cloud": ["Event"]])
        #expect(model.userInfo == ["team": "dates"])
        let request = try model.fetchRequest(fromTemplateNamed: "byTitle", substitutionVariables: ["TITLE": "Launch"])
        let expected = try FormatPredicate("title == 'Launch'")
        #expect(request.entityName == "Event" && request.predicate == expected)
        #expect { try model.fetchRequest(fromTemplateNamed: "byTitle") } throws: { "\($0)".contains("needs a value for $TITLE") }
        #expect { try model.fetchRequest(fromTemplateNamed: "nope") } throws: { "\($0)".contains("no fetch request template 'nope' (it has: byTitle)") }
    }

    @Test func userInfoAndRenamingIdentifiersLeaveTheHashAloneAndHashModifiersChangeIt() throws {
        let (model, _) = try load()
        var plain = model.entityDescriptions
        for index in plain.indices {
            plain[index].userInfo = [:]
            plain[index].renamingIdentifier = nil
            for a in plain[index].attributes.indices {
                plain[index].attributes[a].userInfo = [:]
                plain[index].attributes[a].renamingIdentifier = nil
            }
        }
        #expect(try Model(entities: plain).versionHash == model.versionHash)
        plain[0].versionHashModifier = nil
        #expect(try Model(entities: plain).versionHash != model.versionHash)
    }

    @Test(arguments: StoreKind.allCases)
    func transientAttributesLiveInMemoryOnly(_ kind: StoreKind) async throws {
        let (model, folder) = try load()
        let coordinator = try kind.coordinator(model, folder)
        let context = ObjectContext(coordinator: coordinator)
        let id = try await context.perform { ctx in
            let event = try ctx.insert("Event")
            #expect(try event.value(forKey: "draft") == .string("none"))
            try event.setValue(UUID(), forKey: "id")
            try event.setValue("Launch", forKey: "title")
            try event.setValue("half written", forKey: "draft")
            try ctx.save()
            // Kept by the context that set it, after the save.
            #expect(try event.value(forKey: "draft") == .string("half written"))
            // A change to a transient attribute alone is a change, and saving it writes nothing.
            try event.setValue("rewritten", forKey: "draft")
            let changed = ctx.hasChanges
            #expect(changed)
            try ctx.save()
            // A refault drops it: the object reloads from the store, which never had it.
            try ctx.refresh(event, mergeChanges: false)
            #expect(try event.value(forKey: "draft") == .string("none"))
            return event.objectID
        }
        let (draft, version) = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let event = try ctx.existingObject(with: id)
            return (try event.value(forKey: "draft"), event.committed?.version)
        }
        #expect(draft == .string("none"))
        #expect(version == 1)
        await context.perform { ctx in
            // A fetch cannot test a transient attribute: neither store keeps it.
            #expect {
                try ctx.fetch(FetchRequest(entityName: "Event", format: "draft == 'rewritten'"))
            } throws: { "\($0)".contains("Event.draft is transient") }
            #expect {
                try ctx.fetch(FetchRequest(entityName: "Venue", format: "ANY events.draft == 'x'"))
            } throws: { "\($0)".contains("Event.draft is transient") }
        }
    }

    struct Reversed: AttributeValueTransformer {
        func data(from value: Any) throws -> Data { Data(((value as? String) ?? "").utf8.reversed()) }
        func value(from data: Data) throws -> Any { String(decoding: data.reversed(), as: UTF8.self) }
    }

    @Test(arguments: StoreKind.allCases)
    func transformableValuesGoThroughTheirNamedTransformer(_ kind: StoreKind) async throws {
        let (model, folder) = try load()
        #expect(try model.entity(named: "Event").attribute(named: "tags")?.valueTransformerName == "NSSecureUnarchiveFromDataTransformer")
        let coordinator = try kind.coordinator(model, folder)
        let id = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let event = try ctx.insert("Event")
            try event.setValue(UUID(), forKey: "id")
            try event.setValue("Tagged", forKey: "title")
            try event.setTransformedValue(["swift", "data"], forKey: "tags")
            ValueTransformers.register(Reversed(), named: "Reversed")
            try event.setTransformedValue("abc", forKey: "secret")
            #expect { try event.transformedValue(forKey: "title") } throws: { "\($0)".contains("Event.title") && "\($0)".contains("not a Transformable one") }
            try ctx.save()
            return event.objectID
        }
        let reading = kind == .sqlite ? try kind.coordinator(model, folder) : coordinator
        try await ObjectContext(coordinator: reading).perform { ctx in
            let event = try ctx.existingObject(with: id)
            #expect(try event.transformedValue(forKey: "tags") as? [String] == ["swift", "data"])
            #expect(try event.value(forKey: "secret") == .data(Data("cba".utf8)))
            #expect(try event.transformedValue(forKey: "secret") as? String == "abc")
            // What is stored is Core Data's keyed archive: an archive made by Foundation reads back the same way.
            let archive = try NSKeyedArchiver.archivedData(withRootObject: ["from", "core data"] as AnyObject, requiringSecureCoding: true)
            try event.setValue(archive, forKey: "tags")
            #expect(try event.transformedValue(forKey: "tags") as? [String] == ["from", "core data"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aFetchedPropertyFetchesForItsSource(_ kind: StoreKind) async throws {
        let (model, folder) = try load()
        #expect(try model.entity(named: "Venue").fetchedProperties.map(\.name) == ["launches"])
        #expect(model.fetchRequestTemplates.keys.sorted() == ["byTitle"])
        try await ObjectContext(coordinator: try kind.coordinator(model, folder)).perform { ctx in
            let hall = try ctx.insert("Venue")
            let park = try ctx.insert("Venue")
            for (title, venue) in [("Launch one", hall), ("Launch two", park), ("Party", hall)] {
                let event = try ctx.insert("Event")
                try event.setValue(UUID(), forKey: "id")
                try event.setValue(title, forKey: "title")
                try event.setObject(venue, forKey: "venue")
            }
            try ctx.save()
            let launches = try hall.fetchedObjects(forKey: "launches").map { try $0.value(forKey: "title") }
            #expect(launches == [.string("Launch one")])
            #expect { try hall.fetchedObjects(forKey: "nope") } throws: { "\($0)".contains("Venue") && "\($0)".contains("nope") }
            // Core Data apps read a fetched property as a property ("accessed like any other property", through
            // key-value coding): here through objects(forKey:), as any key that holds objects.
            #expect(try hall.objects(forKey: "launches").map(\.objectID) == [try #require(try hall.fetchedObjects(forKey: "launches").first).objectID])
            #expect { try hall.value(forKey: "launches") } throws: { "\($0)".contains("fetched property") && "\($0)".contains("objects(forKey:)") }
            #expect { try hall.object(forKey: "launches") } throws: { "\($0)".contains("fetched property") && "\($0)".contains("launches") }
        }
    }

    @Test func aTransformerTheAppHasNotRegisteredIsNamed() async throws {
        var attribute = AttributeDescription("blob", .codable(typeName: "Blob"))
        attribute.valueTransformerName = "NeverRegistered"
        let model = try Model(entities: [EntityDescription("Thing", attributes: [attribute])])
        try await ObjectContext(coordinator: .inMemory(model: model)).perform { ctx in
            let thing = try ctx.insert("Thing")
            #expect { try thing.setTransformedValue("x", forKey: "blob") } throws: {
                "\($0)".contains("Thing.blob") && "\($0)".contains("value transformer 'NeverRegistered' is not registered")
            }
        }
    }

    @Test func dateLimitsAreValidatedAndADescendingIndexIsBuilt() async throws {
        let (model, folder) = try load()
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: folder.storeURL)
        let store = try #require(coordinator.store as? SQLiteStore)
        let indexSQL = try await store.writer.read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'Event(-on)'")
        }
        #expect(indexSQL?.contains("\"on\" DESC") == true, "\(indexSQL ?? "no index")")
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let event = try ctx.insert("Event")
            try event.setValue(UUID(), forKey: "id")
            try event.setValue("Late", forKey: "title")
            try event.setValue(Date(timeIntervalSinceReferenceDate: 946_684_801), forKey: "on")
            #expect { try ctx.save() } throws: { "\($0)".contains("Event.on") && "\($0)".contains("is after the latest date") }
            try event.setValue(Date(timeIntervalSinceReferenceDate: 1000), forKey: "on")
            try ctx.save()
        }
    }
}

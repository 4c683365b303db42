import Foundation
import Testing
@testable import ObjectGraph

/// Core Data's transient relationships, as Xcode writes them (`transient="YES"` on both sides): the graph keeps them
/// as it keeps any relationship (inverses, delete rules, a child's save to its parent), and no store keeps them.
/// Core Data: "transient properties … are not saved to the persistent store"; a transient relationship is read
/// back as nil (a to-one) or empty (a to-many) by a context that did not set it, and after a refault.
@Entity final class Editor: ManagedObject {
    var name: String = ""
    @Relationship(inverse: "openedBy", isTransient: true) var openSheets: Set<Sheet>
}

@Entity final class Sheet: ManagedObject {
    var title: String = ""
    @Relationship(inverse: "openSheets", deleteRule: .nullify, isOptional: true, isTransient: true) var openedBy: Editor?
}

@Suite struct TransientRelationshipTests {
    static let contents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Player" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="team" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Team" inverseName="players" inverseEntity="Team"/>
                <relationship name="focus" optional="YES" maxCount="1" transient="YES" deletionRule="Nullify" destinationEntity="Team" inverseName="fans" inverseEntity="Team"/>
                <relationship name="marked" optional="YES" toMany="YES" transient="YES" deletionRule="Nullify" destinationEntity="Team" inverseName="markedBy" inverseEntity="Team"/>
            </entity>
            <entity name="Team" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="players" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Player" inverseName="team" inverseEntity="Player"/>
                <relationship name="fans" optional="YES" toMany="YES" transient="YES" deletionRule="Nullify" destinationEntity="Player" inverseName="focus" inverseEntity="Player"/>
                <relationship name="markedBy" optional="YES" toMany="YES" transient="YES" deletionRule="Nullify" destinationEntity="Player" inverseName="marked" inverseEntity="Player"/>
            </entity>
        </model>
        """

    static func load(_ text: String = contents) throws -> (Model, TemporaryFolder) {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("Teams.xcdatamodel")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        try text.write(to: file.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return (try Model(contentsOf: file), folder)
    }

    /// A team and two players, saved: the stored link is `team`; nothing transient is set yet.
    static func seed(_ context: ObjectContext) async throws -> (team: ObjectID, players: [ObjectID]) {
        try await context.perform { ctx in
            let team = try ctx.insert("Team")
            try team.setValue("Rovers", forKey: "name")
            var players: [ManagedObject] = []
            for name in ["Ada", "Bo"] {
                let player = try ctx.insert("Player")
                try player.setValue(name, forKey: "name")
                try player.setObject(team, forKey: "team")
                players.append(player)
            }
            try ctx.save()
            return (team.objectID, players.map(\.objectID))
        }
    }

    @Test func xcodesTransientFlagIsReadAndKeptOutOfTheStoresLayout() throws {
        let (model, _) = try Self.load()
        let player = try model.entity(named: "Player"), team = try model.entity(named: "Team")
        #expect(player.relationship(named: "focus")?.isTransient == true && player.relationship(named: "team")?.isTransient == false)
        #expect(team.relationship(named: "fans")?.storage == .transient && team.relationship(named: "markedBy")?.storage == .transient)
        // Stored to-ones take the first slots, which a store's rows hold.
        #expect(player.storedToOneCount == 1 && player.toOneCount == 2)
        #expect(player.toOneSlot[player.relationshipIndex["team"]!] == 0 && player.toOneSlot[player.relationshipIndex["focus"]!] == 1)
        // No column and no join table: the store's schema lists the relationships as transient.
        let rows = SQLiteStore.schemaRows(model).filter { $0.kind == "transient relationship" }
        #expect(Set(rows.map { "\($0.entity).\($0.property ?? "")" }) == ["Player.focus", "Player.marked", "Team.fans", "Team.markedBy"])
        #expect(rows.allSatisfy { $0.column == nil })
        #expect(SQLiteStore.joinTables(model).isEmpty)
        // The flag round-trips through the model's own encoding (what a store keeps of its model).
        let decoded = try JSONDecoder().decode([EntityDescription].self, from: JSONEncoder().encode(model.entityDescriptions))
        #expect(try Model(entities: decoded).versionHash == model.versionHash)
    }

    @Test(arguments: StoreKind.allCases)
    func aMacroEntitysTransientRelationshipIsTypedAndInMemoryOnly(_ kind: StoreKind) async throws {
        let model = try Model([Editor.self, Sheet.self])
        #expect(try model.entity(named: "Sheet").relationship(named: "openedBy")?.isTransient == true)
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(model, folder)
        let id = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let editor = try ctx.insert(Editor.self)
            editor.name = "Ada"
            let sheet = try ctx.insert(Sheet.self)
            sheet.title = "Plan"
            sheet.openedBy = editor
            #expect(editor.openSheets.map(\.objectID) == [sheet.objectID])
            try ctx.save()
            #expect(sheet.openedBy === editor)
            return sheet.objectID
        }
        let stored = try await ObjectContext(coordinator: coordinator).perform { ctx in try ctx.existingObject(with: id, as: Sheet.self).openedBy?.objectID }
        #expect(stored == nil)
    }

    @Test func aTransientRelationshipWithAStoredInverseIsRefusedNamingBoth() throws {
        let mixed = Self.contents.replacingOccurrences(
            of: #"name="fans" optional="YES" toMany="YES" transient="YES""#, with: #"name="fans" optional="YES" toMany="YES""#)
        #expect { try Self.load(mixed) } throws: { error in
            let text = "\(error)"
            return text.contains("Player") && text.contains("focus") && text.contains("Team.fans") && text.contains("make both transient or neither")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func transientRelationshipsLiveInMemoryOnly(_ kind: StoreKind) async throws {
        let (model, folder) = try Self.load()
        let coordinator = try kind.coordinator(model, folder)
        let seeded = try await Self.seed(ObjectContext(coordinator: coordinator))
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { ctx in
            let team = try ctx.existingObject(with: seeded.team)
            let (ada, bo) = (try ctx.existingObject(with: seeded.players[0]), try ctx.existingObject(with: seeded.players[1]))
            try ada.setObject(team, forKey: "focus")
            try bo.addObject(team, forKey: "marked")
            // The graph keeps the inverses, as for any relationship.
            #expect(try team.objects(forKey: "fans").map(\.objectID) == [ada.objectID])
            #expect(try team.objects(forKey: "markedBy").map(\.objectID) == [bo.objectID])
            // A change to transient relationships alone is a change, and saving it writes nothing.
            let changed = ctx.hasChanges
            #expect(changed)
            try ctx.save()
            #expect(ada.committed?.version == 1 && bo.committed?.version == 1)
            // Kept by the context that set them, after the save.
            #expect(try ada.object(forKey: "focus")?.objectID == team.objectID)
            #expect(try team.objects(forKey: "markedBy").map(\.objectID) == [bo.objectID])
        }
        // Another context reads the rows: nothing transient is there, and the stored link is.
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let ada = try ctx.existingObject(with: seeded.players[0])
            #expect(try ada.object(forKey: "focus") == nil)
            #expect(try ada.object(forKey: "team")?.objectID == seeded.team)
            #expect(try ctx.existingObject(with: seeded.team).objects(forKey: "fans").isEmpty)
            #expect(try ctx.existingObject(with: seeded.players[1]).objects(forKey: "marked").isEmpty)
        }
        try await context.perform { ctx in
            // A refault drops them: the object reloads from the store, which never had them.
            let ada = try ctx.existingObject(with: seeded.players[0])
            try ctx.refresh(ada, mergeChanges: false)
            #expect(try ada.object(forKey: "focus") == nil)
            // A fetch cannot test or go through a transient relationship: no store keeps it.
            #expect {
                try ctx.fetch(FetchRequest(entityName: "Player", format: "focus != nil"))
            } throws: { "\($0)".contains("Player.focus is transient") }
            #expect {
                try ctx.fetch(FetchRequest(entityName: "Team", format: "ANY markedBy.name == 'Bo'"))
            } throws: { "\($0)".contains("Team.markedBy is transient") }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aListLoadedAfterTheSaveHoldsTheLinksTheContextShows(_ kind: StoreKind) async throws {
        let (model, folder) = try Self.load()
        let coordinator = try kind.coordinator(model, folder)
        let seeded = try await Self.seed(ObjectContext(coordinator: coordinator))
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            // The team's list is not loaded when the players point to it, nor when they are saved. The players are
            // held: an object nothing holds and with nothing to save leaves the context, and its transient links with it
            // (as in Core Data, whose contexts hold such objects weakly).
            let players = try seeded.players.map { try ctx.existingObject(with: $0) }
            for player in players { try player.setObject(try ctx.existingObject(with: seeded.team), forKey: "focus") }
            try ctx.save()
            let fans = try ctx.existingObject(with: seeded.team).objects(forKey: "fans").map(\.objectID)
            #expect(Set(fans) == Set(players.map(\.objectID)))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aChildsSaveBringsItsTransientLinksToTheParent(_ kind: StoreKind) async throws {
        let (model, folder) = try Self.load()
        let coordinator = try kind.coordinator(model, folder)
        let seeded = try await Self.seed(ObjectContext(coordinator: coordinator))
        let parent = ObjectContext(coordinator: coordinator)
        let child = ObjectContext(parent: parent)
        try await child.perform { ctx in
            try ctx.existingObject(with: seeded.players[0]).setObject(try ctx.existingObject(with: seeded.team), forKey: "focus")
            try ctx.save()
        }
        try await parent.perform { ctx in
            let ada = try ctx.existingObject(with: seeded.players[0])
            #expect(try ada.object(forKey: "focus")?.objectID == seeded.team)
            #expect(try ctx.existingObject(with: seeded.team).objects(forKey: "fans").map(\.objectID) == [ada.objectID])
            try ctx.save()
            #expect(ada.committed?.version == 1)
        }
        let stored = try await ObjectContext(coordinator: coordinator).perform { ctx in
            try ctx.existingObject(with: seeded.players[0]).object(forKey: "focus")?.objectID
        }
        #expect(stored == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func deletingAnObjectNullifiesTheTransientLinksToIt(_ kind: StoreKind) async throws {
        let (model, folder) = try Self.load()
        let coordinator = try kind.coordinator(model, folder)
        let seeded = try await Self.seed(ObjectContext(coordinator: coordinator))
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let team = try ctx.existingObject(with: seeded.team)
            let ada = try ctx.existingObject(with: seeded.players[0])
            try ada.setObject(team, forKey: "focus")
            try ada.addObject(team, forKey: "marked")
            try ctx.delete(team)
            try ctx.save()
            #expect(try ada.object(forKey: "focus") == nil)
            #expect(try ada.objects(forKey: "marked").isEmpty)
            #expect(try ada.object(forKey: "team") == nil)
        }
    }
}

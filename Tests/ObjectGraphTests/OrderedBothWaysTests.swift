import Foundation
import Testing
@testable import ObjectGraph
#if OBJECTGRAPH_POSTGRES
import ObjectGraphPostgres
#endif

/// A many-to-many relationship ordered on both sides, which Core Data accepts and keeps an order for on each side
/// ("ordered" is a property of each relationship description, `NSRelationshipDescription.isOrdered`): a playlist's
/// songs in its order, a song's playlists in the song's. The join table keeps the second order in `inverse_position`.
@Suite struct OrderedBothWaysTests {
    static func contents(songsOrdered: Bool = true, playlistsOrdered: Bool = true) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Playlist" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="songs" optional="YES" toMany="YES" ordered="\(songsOrdered ? "YES" : "NO")" deletionRule="Nullify" destinationEntity="Song" inverseName="playlists" inverseEntity="Song"/>
            </entity>
            <entity name="Song" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="playlists" optional="YES" toMany="YES" ordered="\(playlistsOrdered ? "YES" : "NO")" deletionRule="Nullify" destinationEntity="Playlist" inverseName="songs" inverseEntity="Playlist"/>
            </entity>
        </model>
        """
    }

    static func model(songsOrdered: Bool = true, playlistsOrdered: Bool = true, in folder: TemporaryFolder) throws -> Model {
        let file = folder.url.appendingPathComponent("Music-\(songsOrdered)-\(playlistsOrdered).xcdatamodel")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        try contents(songsOrdered: songsOrdered, playlistsOrdered: playlistsOrdered)
            .write(to: file.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return try Model(contentsOf: file)
    }

    /// Names of `object`'s members through `key`, in the relationship's order.
    static func names(_ object: ManagedObject, _ key: String) throws -> [String] {
        try stringValues(try object.objects(forKey: key), "name")
    }

    /// Objects by name, fetched in `context`.
    static func byName(_ ctx: isolated ObjectContext, _ entity: String) throws -> [String: ManagedObject] {
        let objects = try ctx.fetch(FetchRequest(entityName: entity))
        return Dictionary(uniqueKeysWithValues: zip(try stringValues(objects, "name"), objects))
    }

    static func make(_ ctx: isolated ObjectContext, _ entity: String, _ name: String) throws -> ManagedObject {
        let object = try ctx.insert(entity)
        try object.setValue(name, forKey: "name")
        return object
    }

    @Test func bothSidesKeepTheirOrderInOneJoinTable() throws {
        let folder = try TemporaryFolder()
        let model = try Self.model(in: folder)
        let songs = try #require(try model.entity(named: "Playlist").relationship(named: "songs"))
        let playlists = try #require(try model.entity(named: "Song").relationship(named: "playlists"))
        #expect(songs.isOrdered && playlists.isOrdered && songs.isOrderedBothWays && playlists.isOrderedBothWays)
        // One table, named after the side whose name sorts first; the other side's order in its own column.
        #expect(songs.storage == .joinTable(table: "Playlist.songs", isSourceSide: true))
        #expect(playlists.storage == .joinTable(table: "Playlist.songs", isSourceSide: false))
        #expect(SQLiteStore.joinTables(model).map(\.isOrderedBothWays) == [true])
    }

    @Test(arguments: StoreKind.allCases)
    func eachSideReadsBackInItsOwnOrder(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Self.model(in: folder), folder)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let (a, b) = (try Self.make(ctx, "Playlist", "A"), try Self.make(ctx, "Playlist", "B"))
            let (s1, s2, s3) = (try Self.make(ctx, "Song", "1"), try Self.make(ctx, "Song", "2"), try Self.make(ctx, "Song", "3"))
            try a.setObjects([s3, s1, s2], forKey: "songs")
            try b.setObjects([s1], forKey: "songs")
            // The song's own order: B before A, whatever order the links were made in.
            try s1.setObjects([b, a], forKey: "playlists")
            #expect(try Self.names(a, "songs") == ["3", "1", "2"])
            try ctx.save()
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let (playlists, songs) = (try Self.byName(ctx, "Playlist"), try Self.byName(ctx, "Song"))
            #expect(try Self.names(playlists["A"]!, "songs") == ["3", "1", "2"])
            #expect(try Self.names(songs["1"]!, "playlists") == ["B", "A"])
            // A fetch reads each side's order: the song's first playlist, by the song's order.
            let first = try ctx.fetch(FetchRequest(entityName: "Song", format: "playlists[FIRST].name == 'B'"))
            #expect(try stringValues(first, "name") == ["1"])
            // Reordering one side leaves the other's order as it was.
            try songs["1"]!.setObjects([playlists["A"]!, playlists["B"]!], forKey: "playlists")
            try ctx.save()
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let (playlists, songs) = (try Self.byName(ctx, "Playlist"), try Self.byName(ctx, "Song"))
            #expect(try Self.names(songs["1"]!, "playlists") == ["A", "B"])
            #expect(try Self.names(playlists["A"]!, "songs") == ["3", "1", "2"])
            try playlists["A"]!.setObjects([songs["1"]!, songs["2"]!, songs["3"]!], forKey: "songs")
            try ctx.save()
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let (playlists, songs) = (try Self.byName(ctx, "Playlist"), try Self.byName(ctx, "Song"))
            #expect(try Self.names(playlists["A"]!, "songs") == ["1", "2", "3"])
            #expect(try Self.names(songs["1"]!, "playlists") == ["A", "B"])
            // A link made from one side, the other side's list not loaded, goes at the end of that list.
            try playlists["B"]!.addObject(songs["3"]!, forKey: "songs")
            try ctx.save()
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let (playlists, songs) = (try Self.byName(ctx, "Playlist"), try Self.byName(ctx, "Song"))
            #expect(try Self.names(songs["3"]!, "playlists") == ["A", "B"])
            #expect(try Self.names(playlists["B"]!, "songs") == ["1", "3"])
        }
    }

    /// A store whose model ordered one side migrates to the model ordering both: the ordered side keeps its order,
    /// the newly ordered side starts in the order of its members' keys (nothing recorded one before).
    @Test(arguments: StoreKind.allCases.filter { $0 != .memory })
    func aStoreOrderingOneSideMigratesToBoth(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let old = try Self.model(playlistsOrdered: false, in: folder)
        let versions = try SchemaVersions([old, try Self.model(in: folder)])
        #expect(try MigrationPlan(from: old, to: versions.current).additions == nil)
        try await ObjectContext(coordinator: try kind.coordinator(old, folder)).perform { ctx in
            let a = try ctx.insert("Playlist")
            try a.setValue("A", forKey: "name")
            var songs: [ManagedObject] = []
            for name in ["1", "2", "3"] {
                let song = try ctx.insert("Song")
                try song.setValue(name, forKey: "name")
                songs.append(song)
            }
            try a.setObjects(songs.reversed(), forKey: "songs")
            try ctx.save()
        }
        let coordinator: PersistentStoreCoordinator
        switch kind {
        case .sqlite, .memory:
            coordinator = try PersistentStoreCoordinator(versions: versions, storeURL: folder.storeURL)
        #if OBJECTGRAPH_POSTGRES
        case .postgres:
            let store = try PostgresStore(configuration: try TestPostgres.configuration(try #require(folder.postgresDatabase)), versions: versions)
            coordinator = PersistentStoreCoordinator(model: versions.current, store: store)
        #endif
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let (playlists, songs) = (try Self.byName(ctx, "Playlist"), try Self.byName(ctx, "Song"))
            #expect(try Self.names(playlists["A"]!, "songs") == ["3", "2", "1"])
            #expect(try Self.names(songs["2"]!, "playlists") == ["A"])
            let b = try ctx.insert("Playlist")
            try b.setValue("B", forKey: "name")
            try songs["2"]!.setObjects([b, playlists["A"]!], forKey: "playlists")
            try ctx.save()
        }
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let (playlists, songs) = (try Self.byName(ctx, "Playlist"), try Self.byName(ctx, "Song"))
            #expect(try Self.names(songs["2"]!, "playlists") == ["B", "A"])
            #expect(try Self.names(playlists["A"]!, "songs") == ["3", "2", "1"])
        }
    }
}

import Foundation
import Testing
import ObjectGraph

/// A macro entity as models are written since SwiftUI: `var id: UUID`, a model-level transient attribute, a derived
/// attribute, a relationship without an inverse, and names SQL reserves.
@Entity
final class Track: ManagedObject {
    var id: UUID = UUID()
    var order: Int = 0
    var select: String?
    @Attribute(isTransient: true) var isPlaying: Bool = false
    @Relationship(inverse: nil) var featured: Artist?
}

@Entity
final class Artist: ManagedObject {
    var id: UUID = UUID()
    var name: String = ""
    @Attribute(derivation: "canonical:(name)") var searchName: String?
}

@Suite struct MacroModelReachTests {
    @Test(arguments: StoreKind.allCases)
    func idOrderTransientAndOneSidedPropertiesWork(_ kind: StoreKind) async throws {
        let model = try Model([Track.self, Artist.self])
        #expect(try model.entity(named: "Track").attribute(named: "isPlaying")?.isTransient == true)
        #expect(try model.entity(named: "Track").relationship(named: "featured")?.hasInverse == false)
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(model, folder)
        let trackID = UUID()
        let id = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let artist = try ctx.insert(Artist.self)
            artist.name = "Nina"
            let track = try ctx.insert(Track.self)
            track.id = trackID
            track.order = 3
            track.select = "B-side"
            track.isPlaying = true
            track.featured = artist
            try ctx.save()
            #expect(track.isPlaying)
            return track.objectID
        }
        let reading = kind == .sqlite ? try kind.coordinator(model, folder) : coordinator
        try await ObjectContext(coordinator: reading).perform { ctx in
            let track = try ctx.existingObject(with: id, as: Track.self)
            #expect(track.id == trackID && track.order == 3 && track.select == "B-side")
            #expect(!track.isPlaying)
            #expect(track.featured?.name == "Nina")
            #expect(track.featured?.searchName == "nina")
            #expect(try ctx.fetch(Track.self, where: "id == %@ AND order == 3", trackID).count == 1)
        }
    }
}

import Foundation
import Testing
@testable import ObjectGraph

/// A coordinator with one store per configuration, as Core Data's `addPersistentStore(type:configuration:at:options:)`
/// builds it: "a persistent store coordinator … presents a facade … such that a group of persistent stores appears as
/// a single aggregate store"; each entity's rows are in the store of its configuration, and relationships do not
/// cross stores. The model is the corpus's `Configurations` (reference places, the user's trips).
@Suite struct ConfigurationStoresTests {
    static func model() throws -> Model { try ModelCorpusTests.load("Configurations") }

    /// Opens the `Reference` and `User` stores of `kind` in `folder` (reopening them when they exist).
    static func coordinator(
        _ kind: StoreKind, _ folder: TemporaryFolder, model: Model, wrapping wrap: (String, any PersistentStore) -> any PersistentStore = { $1 }
    ) throws -> PersistentStoreCoordinator {
        var stores: [String: any PersistentStore] = [:]
        for name in ["Reference", "User"] { stores[name] = wrap(name, try kind.store(model.model(forConfiguration: name), folder, name: name)) }
        return try PersistentStoreCoordinator(model: model, stores: stores)
    }

    static func insert(_ ctx: isolated ObjectContext, country code: String, cities: [String] = []) throws -> ManagedObject {
        let country = try ctx.insert("Country")
        try country.setValue(code, forKey: "code")
        try country.setValue("Country \(code)", forKey: "name")
        for name in cities {
            let city = try ctx.insert("City")
            try city.setValue(name, forKey: "name")
            try city.setObject(country, forKey: "country")
        }
        return country
    }

    static func insert(_ ctx: isolated ObjectContext, trip title: String, to code: String, stops: [String] = []) throws -> ManagedObject {
        let trip = try ctx.insert("Trip")
        try trip.setValue(title, forKey: "title")
        try trip.setValue(code, forKey: "countryCode")
        try trip.setObjects(try stops.map { name in
            let stop = try ctx.insert("Stop")
            try stop.setValue(name, forKey: "name")
            return stop
        }, forKey: "stops")
        return trip
    }

    /// How many rows of `entity` the store of `configuration` itself holds.
    static func stored(_ coordinator: PersistentStoreCoordinator, _ configuration: String, _ entity: String) throws -> Int {
        try #require(coordinator.persistentStore(forConfiguration: configuration)).count(StoreFetchRequest(entityName: entity))
    }

    @Test(arguments: StoreKind.allCases)
    func eachEntityLivesInItsConfigurationsStoreAndOneSaveWritesBoth(_ kind: StoreKind) async throws {
        let model = try Self.model()
        let folder = try TemporaryFolder()
        let coordinator = try Self.coordinator(kind, folder, model: model)
        let trip = try await ObjectContext(coordinator: coordinator).perform { ctx in
            _ = try Self.insert(ctx, country: "PT", cities: ["Lisbon", "Porto"])
            let trip = try Self.insert(ctx, trip: "Coast", to: "PT", stops: ["Porto", "Lisbon", "Faro"])
            try ctx.save()
            return trip.objectID
        }
        #expect(try Self.stored(coordinator, "Reference", "Place") == 3 && Self.stored(coordinator, "User", "Trip") == 1)
        #expect(try Self.stored(coordinator, "User", "Stop") == 3)
        // Each store knows its own entities only.
        #expect(throws: ObjectGraphError.self) { try Self.stored(coordinator, "User", "Country") }
        #expect(coordinator.persistentStore(forEntity: "City") === coordinator.persistentStore(forConfiguration: "Reference"))
        #expect(coordinator.persistentStore(forEntity: "Stop") === coordinator.persistentStore(forConfiguration: "User"))

        // Read back through the graph (from reopened files for SQLite): relationships within each store, the
        // fetched property across them, and fetches of an abstract parent.
        let reading = kind == .sqlite ? try Self.coordinator(kind, folder, model: model) : coordinator
        try await ObjectContext(coordinator: reading).perform { ctx in
            let read = try ctx.existingObject(with: trip)
            #expect(try read.objects(forKey: "stops").map { try $0.value(forKey: "name") } == [.string("Porto"), .string("Lisbon"), .string("Faro")])
            let country = try #require(try read.fetchedObjects(forKey: "country").first)
            #expect(try country.value(forKey: "code") == .string("PT"))
            #expect(try Set(country.objects(forKey: "cities").map { try $0.value(forKey: "name") }) == [.string("Lisbon"), .string("Porto")])
            #expect(try ctx.count(for: FetchRequest(entityName: "Place")) == 3)
            #expect(try ctx.fetch(FetchRequest(entityName: "Place", format: "name BEGINSWITH 'L'")).map(\.entity.name) == ["City"])
        }
        // Object URIs name the store that keeps the object, and resolve.
        let uri = reading.uriRepresentation(for: trip)
        #expect(uri.host == reading.persistentStore(forConfiguration: "User")?.identifier)
        #expect(try reading.managedObjectID(forURIRepresentation: uri) == trip)
    }

    /// Whatever refuses a save in one store (here a uniqueness constraint in the outer store, a conflict in the
    /// inner one) leaves every store as it was: no store keeps its part of a save another refused.
    @Test(arguments: StoreKind.allCases)
    func aSaveRefusedByEitherStoreWritesNothingToTheOther(_ kind: StoreKind) async throws {
        let model = try Self.model()
        let folder = try TemporaryFolder()
        let coordinator = try Self.coordinator(kind, folder, model: model)
        let trip = try await ObjectContext(coordinator: coordinator).perform { ctx in
            _ = try Self.insert(ctx, country: "PT")
            let trip = try Self.insert(ctx, trip: "Coast", to: "PT")
            try ctx.save()
            return trip.objectID
        }
        // A second PT (the Reference store refuses it) beside a new trip (which the User store would accept).
        let collision = try await ObjectContext(coordinator: coordinator).perform { ctx in
            _ = try Self.insert(ctx, country: "PT")
            _ = try Self.insert(ctx, trip: "Again", to: "PT", stops: ["Braga"])
            return (try? ctx.save()) == nil
        }
        #expect(collision)
        #expect(try Self.stored(coordinator, "Reference", "Country") == 1 && Self.stored(coordinator, "User", "Trip") == 1)
        #expect(try Self.stored(coordinator, "User", "Stop") == 0)

        // A trip changed in another context since it was read (the User store refuses it under .error) beside a
        // new country (which the Reference store would accept).
        let other = ObjectContext(coordinator: coordinator)
        let conflict = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let mine = try ctx.existingObject(with: trip)
            _ = try mine.value(forKey: "title")
            try other.performAndWait { other in
                try other.existingObject(with: trip).setValue("Renamed", forKey: "title")
                try other.save()
            }
            try mine.setValue("Mine", forKey: "title")
            _ = try Self.insert(ctx, country: "ES")
            do {
                try ctx.save()
                return false
            } catch ObjectGraphError.conflict { return true }
        }
        #expect(conflict)
        #expect(try Self.stored(coordinator, "Reference", "Country") == 1)
    }

    /// The motivating layout: reference data shipped in a store opened read-only, the user's data in a writable one.
    /// Saves of the user's data work; a change to the reference data is refused, naming the read-only store, and
    /// writes nothing anywhere.
    @Test func aReadOnlyReferenceStoreBesideAWritableUserStore() async throws {
        let model = try Self.model()
        let folder = try TemporaryFolder()
        let referenceURL = folder.url.appendingPathComponent("Reference.sqlite")
        let referenceModel = try model.model(forConfiguration: "Reference")
        // The app's build step: fill the reference store with the reference configuration alone.
        try await ObjectContext(coordinator: PersistentStoreCoordinator(model: referenceModel, storeURL: referenceURL)).perform { ctx in
            _ = try Self.insert(ctx, country: "PT", cities: ["Lisbon"])
            try ctx.save()
        }
        let coordinator = try PersistentStoreCoordinator(model: model, stores: [
            "Reference": try SQLiteStore(url: referenceURL, versions: SchemaVersions([referenceModel]), options: StoreOptions(isReadOnly: true)),
            "User": try SQLiteStore(url: folder.url.appendingPathComponent("User.sqlite"), versions: SchemaVersions([model.model(forConfiguration: "User")]), options: StoreOptions()),
        ])
        let refusal = try await ObjectContext(coordinator: coordinator).perform { ctx in
            let country = try #require(try ctx.fetch(FetchRequest(entityName: "Country")).first)
            let trip = try Self.insert(ctx, trip: "Coast", to: "PT", stops: ["Lisbon"])
            try ctx.save()
            #expect(try trip.fetchedObjects(forKey: "country").map(\.objectID) == [country.objectID])
            try country.setValue("Portugal", forKey: "name")
            _ = try Self.insert(ctx, trip: "Second", to: "PT")
            do {
                try ctx.save()
                return String?.none
            } catch let error as ObjectGraphError { return error.message }
        }
        let message = try #require(refusal)
        #expect(message.contains("Reference.sqlite") && message.contains("read-only"), "\(message)")
        #expect(try Self.stored(coordinator, "User", "Trip") == 1)
    }

    /// The nested stack on a coordinator with two stores: a worker's save reaches both files through the main
    /// context and the writer.
    @Test(arguments: DataStack.Layout.allCases)
    func theStackSavesWorkersChangesToEveryStore(_ layout: DataStack.Layout) async throws {
        let model = try Self.model()
        let folder = try TemporaryFolder()
        let stack = DataStack(coordinator: try Self.coordinator(.sqlite, folder, model: model), layout: layout)
        try await stack.background { db in
            _ = try Self.insert(db, country: "FR", cities: ["Lyon"])
            _ = try Self.insert(db, trip: "Alps", to: "FR", stops: ["Lyon", "Annecy"])
        }
        let reopened = try Self.coordinator(.sqlite, folder, model: model)
        #expect(try Self.stored(reopened, "Reference", "Place") == 2 && Self.stored(reopened, "User", "Stop") == 2)
    }

    /// A store that writes its part and then fails at its commit, after the stores inside its transaction committed:
    /// what an I/O error at COMMIT does. The stores on each side are named.
    final class FailingCommitStore: ForwardingStore {
        let inner: any PersistentStore
        init(_ inner: any PersistentStore) { self.inner = inner }
        func save(_ changes: ChangeSet) throws -> SaveResult { try inner.save(changes) }
        func save(_ changes: ChangeSet, beforeCommit: () throws -> Void) throws -> SaveResult {
            _ = try inner.save(changes, beforeCommit: {
                try beforeCommit()
                throw ObjectGraphError.storeWriteFailed(path: inner.location, reason: "disk I/O error at COMMIT")
            })
            return SaveResult()
        }
    }

    @Test func aCommitFailingAfterAnotherStoresCommitIsReportedAsAPartialSave() async throws {
        let model = try Self.model()
        let folder = try TemporaryFolder()
        // "Reference" sorts first: its transaction holds the User store's, which commits first.
        let coordinator = try Self.coordinator(.sqlite, folder, model: model) { name, store in
            name == "Reference" ? FailingCommitStore(store) : store
        }
        let failure = await ObjectContext(coordinator: coordinator).perform { ctx -> ObjectGraphError? in
            do {
                _ = try Self.insert(ctx, country: "PT")
                _ = try Self.insert(ctx, trip: "Coast", to: "PT")
                try ctx.save()
                return nil
            } catch { return error as? ObjectGraphError }
        }
        guard case let .partialSave(committed, notCommitted, reason) = try #require(failure) else {
            Issue.record("expected a partial save, got \(String(describing: failure))")
            return
        }
        #expect(committed == [folder.url.appendingPathComponent("User.sqlite").path] && notCommitted == [folder.url.appendingPathComponent("Reference.sqlite").path])
        #expect(reason.contains("disk I/O error at COMMIT"))
        #expect(try Self.stored(coordinator, "User", "Trip") == 1 && Self.stored(coordinator, "Reference", "Country") == 0)
        // A save to one store stays one transaction: nothing partial about it.
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            _ = try Self.insert(ctx, trip: "Solo", to: "PT")
            try ctx.save()
        }
        #expect(try Self.stored(coordinator, "User", "Trip") == 2)
    }

    @Test func configurationsThatSplitATreeOrARelationshipOrShareAnEntityAreRefusedNamingThem() throws {
        let metadata = try ModelCorpusTests.load("Metadata")
        // Local keeps Venue without Event, its relationship's destination.
        let crossing = #expect(throws: ObjectGraphError.self) { try metadata.model(forConfiguration: "Local") }
        #expect(crossing?.message.contains("Venue.events") == true && crossing?.message.contains("Event") == true, "\(crossing?.message ?? "")")
        let unknown = #expect(throws: ObjectGraphError.self) { try metadata.model(forConfiguration: "Remote") }
        #expect(unknown?.message.contains("no configuration 'Remote'") == true && unknown?.message.contains("Cloud, Local") == true)

        let model = try Self.model()
        let tree = try Model(
            entities: model.entityDescriptions, configurations: ["Cities": ["City"], "Rest": ["Place", "Country", "Trip", "Stop"]])
        let split = #expect(throws: ObjectGraphError.self) { try tree.model(forConfiguration: "Cities") }
        #expect(split?.message.contains("parent entity") == true && split?.message.contains("Place") == true, "\(split?.message ?? "")")

        let shared = try Model(
            entities: model.entityDescriptions,
            configurations: ["A": ["Place", "Country", "City"], "B": ["Place", "Country", "City", "Trip", "Stop"]])
        let twice = #expect(throws: ObjectGraphError.self) {
            try PersistentStoreCoordinator(model: shared, stores: [
                "A": InMemoryStore(model: shared.model(forConfiguration: "A")), "B": InMemoryStore(model: shared.model(forConfiguration: "B")),
            ])
        }
        #expect(twice?.message.contains("'A' and 'B' both include it") == true, "\(twice?.message ?? "")")
    }

    /// Core Data finds no objects of an entity that no added store's configuration includes, and refuses to save
    /// one ("no persistent stores" for it): the refusal names the entity and the configurations given.
    @Test func anEntityNoStoreKeepsIsFoundNowhereAndRefusedAtSave() async throws {
        let model = try Self.model()
        let coordinator = try PersistentStoreCoordinator(model: model, stores: ["User": InMemoryStore(model: model.model(forConfiguration: "User"))])
        let message = try await ObjectContext(coordinator: coordinator).perform { ctx in
            #expect(try ctx.fetch(FetchRequest(entityName: "Country")).isEmpty && ctx.count(for: FetchRequest(entityName: "Place")) == 0)
            _ = try Self.insert(ctx, country: "PT")
            do {
                try ctx.save()
                return ""
            } catch let error as ObjectGraphError { return error.message }
        }
        #expect(message.contains("no store of the coordinator keeps Country") && message.contains("User"), "\(message)")
    }

    /// History read through the coordinator comes from the one store recording it; with two recording, the
    /// coordinator says to ask each store, since a token names one store's transactions.
    @Test func historyIsReadFromTheStoreThatRecordsIt() async throws {
        let model = try Self.model()
        let reference = InMemoryStore(model: try model.model(forConfiguration: "Reference"))
        let user = InMemoryStore(model: try model.model(forConfiguration: "User"), recordsHistory: true)
        let coordinator = try PersistentStoreCoordinator(model: model, stores: ["Reference": reference, "User": user])
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            _ = try Self.insert(ctx, country: "PT")
            _ = try Self.insert(ctx, trip: "Coast", to: "PT")
            try ctx.save()
        }
        let transactions = try coordinator.history(after: nil)
        #expect(transactions.count == 1 && transactions[0].changes.map(\.changedObjectID.entityName) == ["Trip"])
        #expect(try coordinator.lastHistoryToken().storeIdentifier == user.identifier)

        let both = try PersistentStoreCoordinator(model: model, stores: [
            "Reference": InMemoryStore(model: try model.model(forConfiguration: "Reference"), recordsHistory: true),
            "User": InMemoryStore(model: try model.model(forConfiguration: "User"), recordsHistory: true),
        ])
        let ambiguous = #expect(throws: ObjectGraphError.self) { try both.history(after: nil) }
        #expect(ambiguous?.message.contains("persistentStore(forConfiguration:)") == true, "\(ambiguous?.message ?? "")")
        let token = try #require(both.persistentStore(forConfiguration: "User")).lastHistoryToken()
        #expect(try both.history(after: token).isEmpty)
    }
}

import Foundation
import Synchronization
import Testing
import ObjectGraph

/// What a model class's hooks heard, in order.
final class HookJournal: Sendable {
    private let entries = Mutex<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    func take() -> [String] { entries.withLock { entries in defer { entries = [] }; return entries } }
}

/// A model class overriding every hook Core Data calls, as an app's `NSManagedObject` subclass does.
@Entity
final class Diary: ManagedObject {
    var title: String = ""
    var count: Int = 0
    var modified: Date?
    @Transient var journal: HookJournal?
    /// The titles of the diaries whose values were read from below, by any context.
    static let awakened = Mutex<[String]>([])

    override func awakeFromFetch() { Diary.awakened.withLock { $0.append(title) } }
    override func willSave() {
        journal?.add("willSave")
        // Stamped once per change, as Core Data's documentation advises: the stamp is itself a change.
        if hasPersistentChangedValues && !isDeleted && modified == nil { modified = Date(timeIntervalSinceReferenceDate: 1) }
    }
    override func didSave() { journal?.add("didSave") }
    override func prepareForDeletion() { journal?.add("prepareForDeletion") }
    override func willTurnIntoFault() { journal?.add("willTurnIntoFault \(title)") }
    override func didTurnIntoFault() { journal?.add("didTurnIntoFault") }
    override func validateValue(_ value: AttributeValue, forKey key: String) throws {
        if key == "count", case .int(let number) = value, number < 0 {
            throw ValidationFailure(entity: "Diary", objectID: objectID, key: key, reason: "must not be negative")
        }
    }
    override func validateForInsert() throws { journal?.add("validateForInsert") }
    override func validateForUpdate() throws { journal?.add("validateForUpdate") }
    override func validateForDelete() throws {
        if count == 13 { throw ValidationFailure(entity: "Diary", objectID: objectID, key: nil, reason: "a diary at 13 is kept") }
    }
}

/// An entity whose class checks one value; its sub-entity's class says nothing of the hook and inherits it.
@Entity
class Register: ManagedObject {
    var pages: Int = 1
    override func validateValue(_ value: AttributeValue, forKey key: String) throws {
        if key == "pages", case .int(let number) = value, number < 1 {
            throw ValidationFailure(entity: entity.name, objectID: objectID, key: key, reason: "needs a page")
        }
    }
}

@Entity
final class ShipLog: Register {
    var vessel: String = ""
}

/// A class made without `@Entity`, as a subclass of one: it may override anything.
final class PlainShipLog: Register {}

/// An entity whose class has no hook.
@Entity
final class Tally: ManagedObject {
    var count: Int = 0
}

/// Core Data's lifecycle hooks, called where Core Data calls them (`NSManagedObject`'s `willSave()`, `didSave()`,
/// `prepareForDeletion()`, `awakeFromFetch()`, `willTurnIntoFault()`, `didTurnIntoFault()`, `validateValue(_:forKey:)`,
/// `validateForInsert()`, `validateForUpdate()`, `validateForDelete()`, `hasPersistentChangedValues`).
@Suite struct LifecycleHookTests {
    @Test(arguments: StoreKind.allCases)
    func eachHookIsCalledWhereCoreDataCallsIt(_ kind: StoreKind) async throws {
        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Model([Diary.self]), folder)
        let journal = HookJournal()
        let title = "diary \(UUID())"
        let id = try await ObjectContext(coordinator: coordinator).perform { ctx in
            ctx.retainsRegisteredObjects = true
            let diary = try ctx.insert(Diary.self)
            diary.journal = journal
            diary.title = title
            #expect(diary.hasPersistentChangedValues)
            try ctx.save()
            #expect(journal.take() == ["willSave", "validateForInsert", "didSave"])
            // willSave's stamp was saved with the rest, and the object has nothing left to save.
            #expect(diary.modified == Date(timeIntervalSinceReferenceDate: 1) && !diary.hasPersistentChangedValues)
            diary.count = 1
            #expect(diary.hasPersistentChangedValues)
            try ctx.save()
            #expect(journal.take() == ["willSave", "validateForUpdate", "didSave"])
            // A value the class refuses fails the save, naming the key.
            diary.count = -1
            #expect {
                try ctx.save()
            } throws: { error in
                guard case ObjectGraphError.validation(let failures) = error else { return false }
                return failures.contains { $0.key == "count" && $0.reason == "must not be negative" }
            }
            ctx.rollback()
            _ = journal.take()
            // A refresh turns it into a fault, its values still there before, and reads them again on next use.
            try ctx.refresh(diary, mergeChanges: false)
            #expect(journal.take() == ["willTurnIntoFault \(title)", "didTurnIntoFault"])
            Diary.awakened.withLock { $0.removeAll { $0 == title } }
            #expect(diary.count == 1)
            #expect(Diary.awakened.withLock { $0.filter { $0 == title }.count } == 1)
            // A deletion hears of itself at once; the class may refuse it at save.
            diary.count = 13
            try ctx.save()
            _ = journal.take()
            try ctx.delete(diary)
            #expect(journal.take() == ["prepareForDeletion"])
            #expect {
                try ctx.save()
            } throws: { error in
                guard case ObjectGraphError.validation(let failures) = error else { return false }
                return failures.contains { $0.reason == "a diary at 13 is kept" }
            }
            // willSave ran before the validation refused the save, as in Core Data; no didSave.
            #expect(journal.take() == ["willSave"])
            ctx.rollback()
            return diary.objectID
        }
        // Another context's fetch reads the row: the object awakes from it.
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            Diary.awakened.withLock { $0.removeAll { $0 == title } }
            let fetched = try ctx.fetch(Diary.self, where: "title == %@", title)
            #expect(fetched.map(\.objectID) == [id])
            #expect(Diary.awakened.withLock { $0.filter { $0 == title }.count } == 1)
            // A deleted object hears didSave once its deletion is saved.
            let diary = try #require(fetched.first)
            diary.journal = journal
            diary.count = 2
            try ctx.delete(diary)
            try ctx.save()
            #expect(journal.take() == ["prepareForDeletion", "willSave", "didSave"])
            #expect(diary.isDeleted)
        }
    }

    /// A save calls `validateValue(_:forKey:)` for every value wherever a class may override it, an ancestor's
    /// override included, and skips the calls only where `@Entity` read every class of the chain and found none.
    @Test(arguments: StoreKind.allCases)
    func valueValidationRunsWhereverAClassMayHaveIt(_ kind: StoreKind) async throws {
        #expect(Diary._mayValidateValues(Diary.self))
        #expect(ShipLog._mayValidateValues(ShipLog.self) && Register._mayValidateValues(Register.self))
        #expect(!Tally._mayValidateValues(Tally.self))
        // Asked of a class the macro did not read, every answer is yes.
        #expect(PlainShipLog._mayValidateValues(PlainShipLog.self) && Tally._mayValidateValues(PlainShipLog.self))
        #expect(ManagedObject._mayValidateValues(ShipLog.self) && !ManagedObject._mayValidateValues(ManagedObject.self))

        let folder = try TemporaryFolder()
        let coordinator = try kind.coordinator(try Model([Register.self, ShipLog.self, Tally.self]), folder)
        try await ObjectContext(coordinator: coordinator).perform { ctx in
            let logbook = try ctx.insert(ShipLog.self)
            logbook.pages = 0
            #expect {
                try ctx.save()
            } throws: { error in
                guard case ObjectGraphError.validation(let failures) = error else { return false }
                return failures.map(\.key) == ["pages"] && failures.map(\.reason) == ["needs a page"]
            }
            logbook.pages = 3
            try ctx.insert(Tally.self).count = 1
            try ctx.save()
            // An update's changed value is checked too.
            logbook.pages = -1
            #expect(throws: ObjectGraphError.self) { try ctx.save() }
        }
    }
}

import Foundation
import GRDB
@testable import PredicateFormat

/// A deterministic random source (SplitMix64), so generated tests are the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A small library of people, teams, pets and tags: rows in SQLite and the same data as key-value sources.
struct Library {
    struct Team { var id: Int64; var title: String; var rank: Int64 }
    struct Pet { var id: Int64; var name: String; var legs: Int64; var owner: Int64 }
    struct Tag { var id: Int64; var label: String }
    struct Person {
        var id: Int64; var name: String; var nick: String?; var age: Int64; var score: Double; var active: Bool
        var born: Date; var team: Int64?; var tags: [Int64]
    }

    static let words = ["Émile", "émile", "EMILE", "Straße", "STRASSE", "ZOË", "zoë", "Zoe", "ann", "Ann*", "O'Brien",
                        "拿破仑", "约翰史蒂芬", "", "a", "ab", "abc", "Σίσυφος", "ΣΊΣΥΦΟΣ", "naïve", "naive", "x-y", "x_y"]

    var teams: [Team] = []
    var pets: [Pet] = []
    var tags: [Tag] = []
    var people: [Person] = []

    init(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        for id in 1...6 { teams.append(Team(id: Int64(id), title: Self.words.randomElement(using: &random)!, rank: Int64.random(in: 0...5, using: &random))) }
        for id in 1...8 { tags.append(Tag(id: Int64(id), label: Self.words.randomElement(using: &random)!)) }
        for id in 1...60 {
            people.append(Person(
                id: Int64(id), name: Self.words.randomElement(using: &random)!,
                nick: Bool.random(using: &random) ? nil : Self.words.randomElement(using: &random)!,
                age: Int64.random(in: 0...90, using: &random), score: Double(Int.random(in: -20...20, using: &random)) / 4,
                active: Bool.random(using: &random), born: Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...100, using: &random)) * 1_000_000),
                team: Int.random(in: 0...6, using: &random) == 0 ? nil : Int64.random(in: 1...6, using: &random),
                tags: (1...8).filter { _ in Int.random(in: 0...3, using: &random) == 0 }.map(Int64.init)))
        }
        var petID: Int64 = 0
        for person in people {
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                petID += 1
                pets.append(Pet(id: petID, name: Self.words.randomElement(using: &random)!, legs: Int64.random(in: 0...8, using: &random), owner: person.id))
            }
        }
    }

    func write(to db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE Team (id INTEGER PRIMARY KEY, title TEXT, rank INTEGER);
            CREATE TABLE Person (id INTEGER PRIMARY KEY, name TEXT, nick TEXT, age INTEGER, score REAL, active INTEGER, born REAL, team_id INTEGER REFERENCES Team(id));
            CREATE TABLE Pet (id INTEGER PRIMARY KEY, name TEXT, legs INTEGER, owner_id INTEGER REFERENCES Person(id));
            CREATE TABLE Tag (id INTEGER PRIMARY KEY, label TEXT);
            CREATE TABLE Person_tags (source INTEGER, target INTEGER);
            """)
        for team in teams { try db.execute(sql: "INSERT INTO Team VALUES (?, ?, ?)", arguments: [team.id, team.title, team.rank]) }
        for tag in tags { try db.execute(sql: "INSERT INTO Tag VALUES (?, ?)", arguments: [tag.id, tag.label]) }
        for p in people {
            try db.execute(sql: "INSERT INTO Person VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           arguments: [p.id, p.name, p.nick, p.age, p.score, p.active, p.born.timeIntervalSinceReferenceDate, p.team])
            for tag in p.tags { try db.execute(sql: "INSERT INTO Person_tags VALUES (?, ?)", arguments: [p.id, tag]) }
        }
        for pet in pets { try db.execute(sql: "INSERT INTO Pet VALUES (?, ?, ?, ?)", arguments: [pet.id, pet.name, pet.legs, pet.owner]) }
    }

    // MARK: The same data as key-value sources

    struct Source: KeyValueSource {
        let library: Library
        let entity: String
        let id: Int64

        func predicateValue(forKey key: String) throws(FormatPredicateError) -> EvaluatedValue {
            switch entity {
            case "Person":
                let p = library.people[Int(id) - 1]
                switch key {
                case "name": return .value(.string(p.name))
                case "nick": return .value(p.nick.map(PredicateValue.string) ?? .null)
                case "age": return .value(.int(p.age))
                case "score": return .value(.double(p.score))
                case "active": return .value(.bool(p.active))
                case "born": return .value(.date(p.born))
                case "team": return p.team.map { .object(Source(library: library, entity: "Team", id: $0)) } ?? .value(.null)
                case "pets": return .collection(library.pets.filter { $0.owner == id }.map { .object(Source(library: library, entity: "Pet", id: $0.id)) })
                case "tags": return .collection(p.tags.map { .object(Source(library: library, entity: "Tag", id: $0)) })
                default: throw .evaluation("Person has no key '\(key)'")
                }
            case "Team":
                let t = library.teams[Int(id) - 1]
                switch key {
                case "title": return .value(.string(t.title))
                case "rank": return .value(.int(t.rank))
                default: throw .evaluation("Team has no key '\(key)'")
                }
            case "Pet":
                let pet = library.pets[Int(id) - 1]
                switch key {
                case "name": return .value(.string(pet.name))
                case "legs": return .value(.int(pet.legs))
                case "owner": return .object(Source(library: library, entity: "Person", id: pet.owner))
                default: throw .evaluation("Pet has no key '\(key)'")
                }
            default:
                guard key == "label" else { throw .evaluation("Tag has no key '\(key)'") }
                return .value(.string(library.tags[Int(id) - 1].label))
            }
        }
    }
}

/// The library's tables as the SQL compiler sees them.
struct LibrarySchema: SQLSchema {
    func table(forEntity entity: String) throws(FormatPredicateError) -> SQLTable { SQLTable(name: entity) }

    func property(_ key: String, ofEntity entity: String) throws(FormatPredicateError) -> SQLProperty {
        switch (entity, key) {
        case ("Person", "name"), ("Person", "nick"), ("Team", "title"), ("Pet", "name"), ("Tag", "label"): return .attribute(column: key, kind: .text)
        case ("Person", "age"), ("Team", "rank"), ("Pet", "legs"): return .attribute(column: key, kind: .integer)
        case ("Person", "score"): return .attribute(column: key, kind: .real)
        case ("Person", "active"): return .attribute(column: key, kind: .bool)
        case ("Person", "born"): return .attribute(column: key, kind: .date)
        case ("Person", "team"): return .toOne(column: "team_id", destination: "Team")
        case ("Pet", "owner"): return .toOne(column: "owner_id", destination: "Person")
        case ("Person", "pets"): return .toMany(destination: "Pet", link: .inverseForeignKey(column: "owner_id"))
        case ("Person", "tags"): return .toMany(destination: "Tag", link: .joinTable(table: "Person_tags", ownerColumn: "source", destinationColumn: "target"))
        default: throw .evaluation("\(entity) has no key '\(key)'")
        }
    }
}

func openLibrary(_ library: Library) throws -> (DatabaseQueue, URL) {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("predicate-\(UUID().uuidString).sqlite")
    var configuration = Configuration()
    configuration.prepareDatabase { db in PredicateSQLFunctions.register(in: db) }
    let queue = try DatabaseQueue(path: url.path, configuration: configuration)
    try queue.write { try library.write(to: $0) }
    return (queue, url)
}

func sqlMatches(_ predicate: FormatPredicate, in db: Database, entity: String = "Person") throws -> Set<Int64> {
    let compiled = try SQLCompiler(schema: LibrarySchema()).compile(predicate, entity: entity, alias: "t0")
    let sql = "SELECT t0.id FROM \(entity) AS t0 \(compiled.joins.joined(separator: " ")) WHERE \(compiled.condition)"
    return Set(try Int64.fetchAll(db, sql: sql, arguments: StatementArguments(compiled.arguments)))
}

func evaluatorMatches(_ predicate: FormatPredicate, in library: Library) throws -> Set<Int64> {
    var result: Set<Int64> = []
    for person in library.people where try predicate.evaluate(with: Library.Source(library: library, entity: "Person", id: person.id)) {
        result.insert(person.id)
    }
    return result
}

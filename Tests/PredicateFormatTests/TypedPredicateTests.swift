import Foundation
import Testing
@testable import PredicateFormat

final class Writer: Equatable {
    var name: String
    init(name: String) { self.name = name }
    static func == (lhs: Writer, rhs: Writer) -> Bool { lhs === rhs }
}

final class Tome {
    var title: String
    var pages: Int
    var writer: Writer?
    var labels: [String]
    init(title: String, pages: Int, writer: Writer?, labels: [String]) {
        self.title = title
        self.pages = pages
        self.writer = writer
        self.labels = labels
    }
}

/// The same objects as key-value sources, so the translated tree can be checked against Foundation's own evaluation.
struct TomeSource: KeyValueSource {
    let tome: Tome
    func predicateValue(forKey key: String) throws(FormatPredicateError) -> EvaluatedValue {
        switch key {
        case "title": .value(.string(tome.title))
        case "pages": .value(.int(Int64(tome.pages)))
        case "writer": tome.writer.map { .object(["name": .value(.string($0.name))] as [String: EvaluatedValue]) } ?? .value(.null)
        case "labels": .collection(tome.labels.map { .value(.string($0)) })
        default: throw .evaluation("Tome has no key '\(key)'")
        }
    }
}

func tomeNames(_ keyPath: AnyKeyPath) -> String? {
    let names: [AnyKeyPath: String] = [\Tome.title: "title", \Tome.pages: "pages", \Tome.writer: "writer", \Tome.labels: "labels", \Writer.name: "name"]
    return names[keyPath]
}

@Suite struct TypedPredicateTests {
    let tomes = [
        Tome(title: "Anna Karenina", pages: 864, writer: Writer(name: "Tolstoy"), labels: ["novel", "russian"]),
        Tome(title: "拿破仑", pages: 412, writer: Writer(name: "约翰史蒂芬"), labels: ["biography"]),
        Tome(title: "Ashes", pages: 90, writer: nil, labels: []),
    ]

    func check(_ predicate: Predicate<Tome>, prints expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let tree = try FormatPredicate(predicate) { tomeNames($0) }
        #expect(tree.description == expected, sourceLocation: sourceLocation)
        for tome in tomes {
            #expect(try tree.evaluate(with: TomeSource(tome: tome)) == predicate.evaluate(tome), "\(tome.title)", sourceLocation: sourceLocation)
        }
    }

    @Test func comparisonsConnectivesAndOptionalChains() throws {
        let minimum = 100
        try check(#Predicate { $0.pages > minimum && $0.title.starts(with: "A") || $0.writer?.name == "约翰史蒂芬" },
                  prints: #"(pages > 100 AND title BEGINSWITH "A") OR writer.name == "约翰史蒂芬""#)
        try check(#Predicate { !($0.pages <= 400) && $0.writer != nil }, prints: "NOT pages <= 400 AND writer != NIL")
        try check(#Predicate { $0.pages >= 90 && $0.pages < 500 && $0.title != "x" }, prints: #"pages >= 90 AND pages < 500 AND title != "x""#)
    }

    @Test func collectionsBecomeInContainsAndSubqueries() throws {
        let wanted = ["Ashes", "拿破仑"]
        try check(#Predicate { wanted.contains($0.title) }, prints: #"title IN {"Ashes", "拿破仑"}"#)
        try check(#Predicate { $0.labels.contains("novel") }, prints: #"labels CONTAINS "novel""#)
        try check(#Predicate { $0.labels.contains { $0.starts(with: "bio") } },
                  prints: #"SUBQUERY(labels, $v1, $v1 BEGINSWITH "bio").@count > 0"#)
        try check(#Predicate { $0.labels.allSatisfy { $0 != "russian" } },
                  prints: #"SUBQUERY(labels, $v1, NOT $v1 != "russian").@count == 0"#)
    }

    @Test func arithmeticCoalescingAndConditionalsTranslate() throws {
        try check(#Predicate { $0.pages * 2 + 1 > 900 }, prints: "pages * 2 + 1 > 900")
        try check(#Predicate { $0.pages / 7 == 58 }, prints: "trunc:(pages / 7) == 58")
        try check(#Predicate { $0.pages % 2 == 0 && -$0.pages < -100 }, prints: "modulus:by:(pages, 2) == 0 AND -pages < -100")
        try check(#Predicate { $0.pages - 10 < 90 }, prints: "pages - 10 < 90")
        try check(#Predicate { ($0.writer?.name ?? "nobody") == "nobody" },
                  prints: #"TERNARY(writer.name != NIL, writer.name, "nobody") == "nobody""#)
        try check(#Predicate { ($0.pages > 400 ? $0.pages : 0) > 500 }, prints: "TERNARY(pages > 400, pages, 0) > 500")
        try check(#Predicate { $0.pages > 400 ? $0.title.starts(with: "A") : $0.writer == nil },
                  prints: #"(pages > 400 AND title BEGINSWITH "A") OR (NOT pages > 400 AND writer == NIL)"#)
    }

    @Test func untranslatablePartsAreNamed() {
        let unnamed = #Predicate<Tome> { $0.title.count > 5 }
        do {
            _ = try FormatPredicate(unnamed) { tomeNames($0) }
            Issue.record("String.count was translated")
        } catch {
            #expect(error.description.contains("does not name a persisted property"), "\(error)")
        }
        let minimum = #Predicate<Tome> { $0.labels.min() == "novel" }
        do {
            _ = try FormatPredicate(minimum) { tomeNames($0) }
            Issue.record("min() was translated")
        } catch {
            #expect(error.description.contains("has no equivalent in the predicate language"), "\(error)")
        }
    }
}

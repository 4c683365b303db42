import Foundation
import Testing
@testable import PredicateFormat

@Suite struct EvaluatorTests {
    func holds(_ format: String, _ arguments: Any?..., in object: [String: EvaluatedValue]) throws -> Bool {
        try FormatPredicate(format: format, argumentArray: arguments).evaluate(with: object)
    }

    let book: [String: EvaluatedValue] = [
        "title": .value(.string("Straße nach Émile")), "pages": .value(.int(300)), "price": .value(.double(9.5)),
        "weight": .value(.decimal(Decimal(string: "0.75")!)), "subtitle": .value(.null), "isbn": .value(.string("978-3")),
        "tags": .collection([.value(.string("war")), .value(.string("peace"))]),
        "author": .object(["name": .value(.string("约翰史蒂芬")), "born": .value(.int(1821))] as [String: EvaluatedValue]),
        "chapters": .collection([
            .object(["pages": .value(.int(10))] as [String: EvaluatedValue]),
            .object(["pages": .value(.int(30))] as [String: EvaluatedValue]),
        ]),
    ]

    @Test func numbersCompareByValueAcrossSwiftTypes() throws {
        #expect(try holds("pages == %@", 300.0, in: book))
        #expect(try holds("pages == %@", Int16(300), in: book))
        #expect(try holds("price > %d", 9, in: book))
        #expect(try holds("weight == %@", 0.75, in: book))
        #expect(try holds("weight < %@", Decimal(1), in: book))
        #expect(try holds("pages BETWEEN {299.5, 300}", in: book))
        // A number is not its text: comparing them is a type mismatch, as it is in SQL, not a silent false.
        #expect(throws: FormatPredicateError.self) { try holds("pages == '300'", in: book) }
    }

    @Test func nilEqualsOnlyNil() throws {
        #expect(try holds("subtitle == nil", in: book))
        #expect(try !holds("subtitle == ''", in: book))
        #expect(try !holds("subtitle < 5", in: book) && !holds("subtitle > 5", in: book))
        #expect(try holds("subtitle != 5", in: book))
        #expect(try !holds("title == nil", in: book))
        #expect(try holds("missing == nil", in: book))
    }

    @Test func caseAndDiacriticFoldingCoverUnicode() throws {
        #expect(try holds("title BEGINSWITH[c] 'STRASSE'", in: book))
        #expect(try !holds("title BEGINSWITH 'STRASSE'", in: book))
        #expect(try holds("title ENDSWITH[d] 'Emile'", in: book))
        #expect(try !holds("title ENDSWITH 'Emile'", in: book))
        #expect(try holds("title CONTAINS[cd] 'NACH EMILE'", in: book))
        #expect(try holds("'ΣΊΣΥΦΟΣ' ==[cd] 'σισυφος'", in: book))
    }

    @Test func likeAndMatchesMatchTheWholeString() throws {
        #expect(try holds("isbn LIKE '978-?'", in: book))
        #expect(try !holds("isbn LIKE '978'", in: book))
        #expect(try holds("isbn LIKE '*8*'", in: book))
        #expect(try holds("title LIKE[c] 'straße*'", in: book))
        #expect(try holds("isbn MATCHES '[0-9]+-[0-9]'", in: book))
        #expect(try !holds("isbn MATCHES '[0-9]+'", in: book))
        #expect(try holds("isbn LIKE '978\\\\-3'", in: book))
        #expect(throws: FormatPredicateError.self) { try holds("isbn MATCHES '('", in: book) }
    }

    @Test func collectionsQuantifiersAndOperators() throws {
        #expect(try holds("tags CONTAINS 'war'", in: book))
        #expect(try holds("'peace' IN tags", in: book))
        #expect(try holds("ANY tags BEGINSWITH 'pe'", in: book))
        #expect(try !holds("ALL tags BEGINSWITH 'pe'", in: book))
        #expect(try holds("NONE tags == 'love'", in: book))
        #expect(try holds("chapters.@count == 2", in: book))
        #expect(try holds("chapters.@sum.pages == 40 AND chapters.@avg.pages == 20", in: book))
        #expect(try holds("chapters.@min.pages == 10 AND chapters.@max.pages == 30", in: book))
        #expect(try holds("ALL chapters.pages >= 10", in: book))
        #expect(try holds("SUBQUERY(chapters, $c, $c.pages > 15).@count == 1", in: book))
        #expect(try holds("author.name == '约翰史蒂芬' AND author.born < 1900", in: book))
        #expect(try holds("'Straße' IN title", in: book))
    }

    @Test func variablesMustBeBound() throws {
        let predicate = try FormatPredicate("pages > $min")
        #expect(try predicate.evaluate(with: book, variables: ["min": .value(.int(100))]))
        do {
            _ = try predicate.evaluate(with: book)
            Issue.record("an unbound variable evaluated")
        } catch {
            #expect(error == .unboundVariable("min"))
        }
        #expect(throws: FormatPredicateError.self) { try holds("title.length == 1", in: book) }
    }
}

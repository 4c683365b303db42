import Foundation
import Testing
@testable import PredicateFormat

func kp(_ path: String) -> FormatExpression { .keyPath(path.split(separator: ".").map(String.init)) }
func s(_ text: String) -> FormatExpression { .constant(.string(text)) }
func i(_ value: Int64) -> FormatExpression { .constant(.int(value)) }
func cmp(_ l: FormatExpression, _ op: Comparison.Operator, _ r: FormatExpression, _ m: Comparison.Modifier = .direct, _ o: Comparison.Options = []) -> FormatPredicate {
    .comparison(Comparison(l, op, r, modifier: m, options: o))
}

/// Format strings with the exact tree they must parse to.
var treeCorpus: [(String, [Any?], FormatPredicate)] { [
    ("name = 'x'", [], cmp(kp("name"), .equal, s("x"))),
    ("name == \"x\"", [], cmp(kp("name"), .equal, s("x"))),
    ("age >= 3", [], cmp(kp("age"), .greaterOrEqual, i(3))),
    ("age => 3", [], cmp(kp("age"), .greaterOrEqual, i(3))),
    ("age <= 3", [], cmp(kp("age"), .lessOrEqual, i(3))),
    ("age =< 3", [], cmp(kp("age"), .lessOrEqual, i(3))),
    ("age > 3", [], cmp(kp("age"), .greater, i(3))),
    ("age < 3", [], cmp(kp("age"), .less, i(3))),
    ("age != 3", [], cmp(kp("age"), .notEqual, i(3))),
    ("age <> 3", [], cmp(kp("age"), .notEqual, i(3))),
    ("age BETWEEN {1, 5}", [], cmp(kp("age"), .between, .aggregate([i(1), i(5)]))),
    ("a = 1 AND b = 2 AND c = 3", [], .and([cmp(kp("a"), .equal, i(1)), cmp(kp("b"), .equal, i(2)), cmp(kp("c"), .equal, i(3))])),
    ("a = 1 && b = 2", [], .and([cmp(kp("a"), .equal, i(1)), cmp(kp("b"), .equal, i(2))])),
    ("a = 1 OR b = 2 || c = 3", [], .or([cmp(kp("a"), .equal, i(1)), cmp(kp("b"), .equal, i(2)), cmp(kp("c"), .equal, i(3))])),
    ("a = 1 OR b = 2 AND c = 3", [], .or([cmp(kp("a"), .equal, i(1)), .and([cmp(kp("b"), .equal, i(2)), cmp(kp("c"), .equal, i(3))])])),
    ("(a = 1 OR b = 2) AND c = 3", [], .and([.or([cmp(kp("a"), .equal, i(1)), cmp(kp("b"), .equal, i(2))]), cmp(kp("c"), .equal, i(3))])),
    ("NOT a = 1", [], .not(cmp(kp("a"), .equal, i(1)))),
    ("!(a = 1)", [], .not(cmp(kp("a"), .equal, i(1)))),
    ("NOT NOT a = 1", [], .not(.not(cmp(kp("a"), .equal, i(1))))),
    ("TRUEPREDICATE", [], .constant(true)),
    ("falsepredicate", [], .constant(false)),
    ("name BEGINSWITH[c] 'a'", [], cmp(kp("name"), .beginsWith, s("a"), .direct, .caseInsensitive)),
    ("name ENDSWITH[d] 'a'", [], cmp(kp("name"), .endsWith, s("a"), .direct, .diacriticInsensitive)),
    ("name CONTAINS[cd] 'a'", [], cmp(kp("name"), .contains, s("a"), .direct, [.caseInsensitive, .diacriticInsensitive])),
    ("name like[dc] 'a*?'", [], cmp(kp("name"), .like, s("a*?"), .direct, [.caseInsensitive, .diacriticInsensitive])),
    ("name MATCHES '[a-z]+'", [], cmp(kp("name"), .matches, s("[a-z]+"))),
    ("name IN {'a', 'b'}", [], cmp(kp("name"), .in, .aggregate([s("a"), s("b")]))),
    ("'a' IN tags.label", [], cmp(s("a"), .in, kp("tags.label"))),
    ("ANY tags.label = 'x'", [], cmp(kp("tags.label"), .equal, s("x"), .any)),
    ("SOME tags.label = 'x'", [], cmp(kp("tags.label"), .equal, s("x"), .any)),
    ("ALL tags.label = 'x'", [], cmp(kp("tags.label"), .equal, s("x"), .all)),
    ("NONE tags.label = 'x'", [], cmp(kp("tags.label"), .equal, s("x"), .none)),
    ("author.name = 'x'", [], cmp(kp("author.name"), .equal, s("x"))),
    ("books.@count > 2", [], cmp(.collection(.count, of: kp("books"), key: []), .greater, i(2))),
    ("books.@avg.pages < 100", [], cmp(.collection(.avg, of: kp("books"), key: ["pages"]), .less, i(100))),
    ("books.@sum.pages = 10", [], cmp(.collection(.sum, of: kp("books"), key: ["pages"]), .equal, i(10))),
    ("books.@min.pages = 1", [], cmp(.collection(.min, of: kp("books"), key: ["pages"]), .equal, i(1))),
    ("books.@max.pages = 1", [], cmp(.collection(.max, of: kp("books"), key: ["pages"]), .equal, i(1))),
    ("SUBQUERY(books, $b, $b.pages > 100).@count > 0", [],
     cmp(.collection(.count, of: .subquery(collection: kp("books"), variable: "b", predicate: cmp(.member(.variable("b"), ["pages"]), .greater, i(100))), key: []), .greater, i(0))),
    ("a = -5", [], cmp(kp("a"), .equal, i(-5))),
    ("a = 1.5", [], cmp(kp("a"), .equal, .constant(.double(1.5)))),
    ("a = .5", [], cmp(kp("a"), .equal, .constant(.double(0.5)))),
    ("a = 1e3", [], cmp(kp("a"), .equal, .constant(.double(1000)))),
    ("a = 2.5E-2", [], cmp(kp("a"), .equal, .constant(.double(0.025)))),
    ("a = 0x1F", [], cmp(kp("a"), .equal, i(31))),
    ("a = 0o17", [], cmp(kp("a"), .equal, i(15))),
    ("a = 0b101", [], cmp(kp("a"), .equal, i(5))),
    ("a = TRUE", [], cmp(kp("a"), .equal, .constant(.bool(true)))),
    ("a = yes", [], cmp(kp("a"), .equal, .constant(.bool(true)))),
    ("a = FALSE", [], cmp(kp("a"), .equal, .constant(.bool(false)))),
    ("a = No", [], cmp(kp("a"), .equal, .constant(.bool(false)))),
    ("a = NULL", [], cmp(kp("a"), .equal, .constant(.null))),
    ("a = nil", [], cmp(kp("a"), .equal, .constant(.null))),
    ("#AND = 1", [], cmp(kp("AND"), .equal, i(1))),
    ("author.#in = 1", [], cmp(kp("author.in"), .equal, i(1))),
    ("SELF = 1", [], cmp(.evaluatedObject, .equal, i(1))),
    ("a = $x", [], cmp(kp("a"), .equal, .variable("x"))),
    ("%K = %@", ["author.name", "x"], cmp(kp("author.name"), .equal, s("x"))),
    ("a = %d", [42], cmp(kp("a"), .equal, i(42))),
    ("a = %i", [Int32(-7)], cmp(kp("a"), .equal, i(-7))),
    ("a = %ld", [Int64.max], cmp(kp("a"), .equal, i(Int64.max))),
    ("a = %lld", [Int16(3)], cmp(kp("a"), .equal, i(3))),
    ("a = %u", [UInt8(200)], cmp(kp("a"), .equal, i(200))),
    ("a = %f", [1.25], cmp(kp("a"), .equal, .constant(.double(1.25)))),
    ("a = %lf", [Float(0.5)], cmp(kp("a"), .equal, .constant(.double(0.5)))),
    ("a = %s", ["c-string"], cmp(kp("a"), .equal, s("c-string"))),
    ("a = %@", [nil], cmp(kp("a"), .equal, .constant(.null))),
    ("a = %@", [String?.none], cmp(kp("a"), .equal, .constant(.null))),
    ("a = %@", [true], cmp(kp("a"), .equal, .constant(.bool(true)))),
    ("a IN %@", [[1, 2, 3]], cmp(kp("a"), .in, .aggregate([i(1), i(2), i(3)]))),
    ("a IN %@", [Set(["b", "a"])], cmp(kp("a"), .in, .aggregate([s("a"), s("b")]))),
    ("a = %@", [Decimal(string: "1.10")!], cmp(kp("a"), .equal, .constant(.decimal(Decimal(string: "1.10")!)))),
    ("a = 'it\\'s'", [], cmp(kp("a"), .equal, s("it's"))),
    ("a = \"say \\\"hi\\\"\"", [], cmp(kp("a"), .equal, s("say \"hi\""))),
    ("a = 'tab\\there\\nnew'", [], cmp(kp("a"), .equal, s("tab\there\nnew"))),
    ("a = '\\u00e9'", [], cmp(kp("a"), .equal, s("é"))),
    ("名字 = '拿破仑'", [], cmp(kp("名字"), .equal, s("拿破仑"))),
    ("@count = 2", [], cmp(.collection(.count, of: .evaluatedObject, key: []), .equal, i(2))),
    ("a IN {}", [], cmp(kp("a"), .in, .aggregate([]))),
    ("ANY a.b.c != nil", [], cmp(kp("a.b.c"), .notEqual, .constant(.null), .any)),
] }

/// Format strings with their canonical form: the printer's output, which must parse back to the same tree.
var canonicalCorpus: [(String, [Any?], String)] { [
    ("name = 'x'", [], #"name == "x""#),
    ("age => 3", [], "age >= 3"),
    ("age =< 3", [], "age <= 3"),
    ("age <> 3", [], "age != 3"),
    ("a=1", [], "a == 1"),
    ("a = 1 && b = 2", [], "a == 1 AND b == 2"),
    ("a = 1 || b = 2", [], "a == 1 OR b == 2"),
    ("a = 1 or b = 2 and c = 3", [], "a == 1 OR (b == 2 AND c == 3)"),
    ("(a = 1 or b = 2) and c = 3", [], "(a == 1 OR b == 2) AND c == 3"),
    ("!(a = 1 || b = 2)", [], "NOT (a == 1 OR b == 2)"),
    ("not a = 1", [], "NOT a == 1"),
    ("((a = 1))", [], "a == 1"),
    ("a = 1 AND (b = 2 AND c = 3)", [], "a == 1 AND (b == 2 AND c == 3)"),
    ("name beginswith[C] 'x'", [], #"name BEGINSWITH[c] "x""#),
    ("name endswith[D] 'x'", [], #"name ENDSWITH[d] "x""#),
    ("name contains[dc] 'x'", [], #"name CONTAINS[cd] "x""#),
    ("name like 'a*'", [], #"name LIKE "a*""#),
    ("name like[n] 'a*'", [], #"name LIKE "a*""#),
    ("name matches[c] '^x.*'", [], #"name MATCHES[c] "^x.*""#),
    ("age between {1,5}", [], "age BETWEEN {1, 5}"),
    ("age BETWEEN %@", [[1, 9]], "age BETWEEN {1, 9}"),
    ("a in {1,2}", [], "a IN {1, 2}"),
    ("a in %@", [["x", "y"]], #"a IN {"x", "y"}"#),
    ("any tags.label == 'x'", [], #"ANY tags.label == "x""#),
    ("some tags.label == 'x'", [], #"ANY tags.label == "x""#),
    ("all tags.label == 'x'", [], #"ALL tags.label == "x""#),
    ("none tags.label == 'x'", [], #"NONE tags.label == "x""#),
    ("books.@COUNT > 1", [], "books.@count > 1"),
    ("books.@Sum.pages > 1", [], "books.@sum.pages > 1"),
    ("books.@avg.pages >= 1.5", [], "books.@avg.pages >= 1.5"),
    ("books.@min.price < 1", [], "books.@min.price < 1"),
    ("books.@max.price < 1", [], "books.@max.price < 1"),
    ("subquery(books, $b, $b.title beginswith 'A').@count > 0", [], #"SUBQUERY(books, $b, $b.title BEGINSWITH "A").@count > 0"#),
    ("SUBQUERY(books, $b, $b.pages > 1 AND $b.author.name = 'x').@count == 2", [], #"SUBQUERY(books, $b, $b.pages > 1 AND $b.author.name == "x").@count == 2"#),
    ("a = 0x10", [], "a == 16"),
    ("a = 0XfF", [], "a == 255"),
    ("a = 0o7", [], "a == 7"),
    ("a = 0B11", [], "a == 3"),
    ("a = 1e2", [], "a == 100.0"),
    ("a = 1E+2", [], "a == 100.0"),
    ("a = 12.50", [], "a == 12.5"),
    ("a = -0.25", [], "a == -0.25"),
    ("a = +3", [], "a == 3"),
    ("a = yes", [], "a == TRUE"),
    ("a = NO", [], "a == FALSE"),
    ("a = null", [], "a == NIL"),
    ("a = Nil", [], "a == NIL"),
    ("truepredicate", [], "TRUEPREDICATE"),
    ("NOT FALSEPREDICATE", [], "NOT FALSEPREDICATE"),
    ("TRUEPREDICATE AND FALSEPREDICATE", [], "TRUEPREDICATE AND FALSEPREDICATE"),
    ("#select = 1", [], "select == 1"),
    ("#where = 'x'", [], #"where == "x""#),
    ("#from.#order = 1", [], "from.order == 1"),
    ("author.#SELF = 1", [], "author.#SELF == 1"),
    ("#Like = 1", [], "#Like == 1"),
    ("self.name = 'x'", [], #"name == "x""#),
    ("SELF.author.name = 'x'", [], #"author.name == "x""#),
    ("a = $var", [], "a == $var"),
    ("$x.b = 1", [], "$x.b == 1"),
    ("%K = 1", ["title"], "title == 1"),
    ("%K.%K = 1", ["a", "b"], "a.b == 1"),
    ("%K = %@", ["in", 1], "#in == 1"),
    ("a = %@", ["it's \"q\""], #"a == "it's \"q\"""#),
    ("a = %@", ["line\nbreak\\"], #"a == "line\nbreak\\""#),
    ("a = %@", ["\u{1}"], #"a == "\u0001""#),
    ("a = %@", [Int64(-9_000_000_000)], "a == -9000000000"),
    ("a = %@", [UInt32(7)], "a == 7"),
    ("a = %@", [3.0], "a == 3.0"),
    ("a = %@", [Float(2.5)], "a == 2.5"),
    ("a = %@", [Date(timeIntervalSinceReferenceDate: 123.5)], #"a == CAST(123.5, "NSDate")"#),
    ("a = %@", [UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!], #"a == CAST("E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "UUID")"#),
    ("a = %@", [URL(string: "https://example.com/x?y=1")!], #"a == CAST("https://example.com/x?y=1", "URL")"#),
    ("a = %@", [Data([1, 2, 3])], #"a == CAST("AQID", "Data")"#),
    ("a = %@", [Decimal(string: "3.14159")!], #"a == CAST("3.14159", "NSDecimalNumber")"#),
    ("a = CAST(0, 'NSDate')", [], #"a == CAST(0.0, "NSDate")"#),
    ("a = CAST('1.5', 'NSDecimalNumber')", [], #"a == CAST("1.5", "NSDecimalNumber")"#),
    ("a = %@ AND b = %@", [1, "two"], #"a == 1 AND b == "two""#),
    ("a = %d OR b = %f", [1, 2.5], "a == 1 OR b == 2.5"),
    ("a IN %@", [[Int]()], "a IN {}"),
    ("a IN %@", [[1.5, 2]], "a IN {1.5, 2.0}"),
    ("a IN %@", [["x", nil] as [String?]], #"a IN {"x", NIL}"#),
    ("a IN {1, 'x', nil, TRUE}", [], #"a IN {1, "x", NIL, TRUE}"#),
    ("'x' IN names", [], #""x" IN names"#),
    ("ANY books.author.name = 'x'", [], #"ANY books.author.name == "x""#),
    ("books.author.name = 'x'", [], #"books.author.name == "x""#),
    ("tags CONTAINS 'x'", [], #"tags CONTAINS "x""#),
    ("NOT ANY tags.label = 'x'", [], #"NOT ANY tags.label == "x""#),
    ("NOT (a = 1 AND NOT b = 2)", [], "NOT (a == 1 AND NOT b == 2)"),
    ("a = 1 AND b = 2 OR c = 3 AND d = 4", [], "(a == 1 AND b == 2) OR (c == 3 AND d == 4)"),
    ("a = 1 OR (b = 2 OR c = 3)", [], "a == 1 OR (b == 2 OR c == 3)"),
    ("a=1&&b=2||c=3", [], "(a == 1 AND b == 2) OR c == 3"),
    ("   a   =   1   ", [], "a == 1"),
    ("a\t=\n1", [], "a == 1"),
    ("name ==[c] 'X'", [], #"name ==[c] "X""#),
    ("name !=[cd] 'X'", [], #"name !=[cd] "X""#),
    ("name <[c] 'X'", [], #"name <[c] "X""#),
    ("name IN[c] {'a'}", [], #"name IN[c] {"a"}"#),
    ("a.b.c.d = 1", [], "a.b.c.d == 1"),
    ("_private = 1", [], "_private == 1"),
    ("a1_b2 = 1", [], "a1_b2 == 1"),
    ("café = 'crème'", [], #"café == "crème""#),
    ("a = '🎉'", [], #"a == "🎉""#),
    ("a = ''", [], #"a == """#),
    ("a = \"\"", [], #"a == """#),
    ("a = 'a\"b'", [], #"a == "a\"b""#),
    ("a = \"a'b\"", [], #"a == "a'b""#),
    ("a = 9223372036854775807", [], "a == 9223372036854775807"),
    ("a = -9223372036854775807", [], "a == -9223372036854775807"),
    ("a > b", [], "a > b"),
    ("a.@count = b.@count", [], "a.@count == b.@count"),
    ("SUBQUERY(a, $x, SUBQUERY($x.b, $y, $y.c = 1).@count > 0).@count = 1", [], "SUBQUERY(a, $x, SUBQUERY($x.b, $y, $y.c == 1).@count > 0).@count == 1"),
    ("ALL books.pages > 10", [], "ALL books.pages > 10"),
    ("NONE books.pages BETWEEN {1, 2}", [], "NONE books.pages BETWEEN {1, 2}"),
    ("ANY tags.label IN {'a', 'b'}", [], #"ANY tags.label IN {"a", "b"}"#),
    ("ANY tags.label LIKE[c] '*x*'", [], #"ANY tags.label LIKE[c] "*x*""#),
    ("a BEGINSWITH %@", ["x"], #"a BEGINSWITH "x""#),
    ("a ENDSWITH %K", ["b"], "a ENDSWITH b"),
    ("%K BETWEEN {%d, %d}", ["n", 1, 2], "n BETWEEN {1, 2}"),
    ("{1, 2} CONTAINS a", [], "{1, 2} CONTAINS a"),
    ("a = {}", [], "a == {}"),
    ("a = 1 AND TRUEPREDICATE", [], "a == 1 AND TRUEPREDICATE"),
    ("NOT (TRUEPREDICATE)", [], "NOT TRUEPREDICATE"),
    ("!!a = 1", [], "NOT NOT a == 1"),
    ("a = 00012", [], "a == 12"),
    ("a = 0", [], "a == 0"),
    ("a = -0", [], "a == 0"),
    ("a = 1.0e-7", [], "a == 1e-07"),
    ("a = 123456789.125", [], "a == 123456789.125"),
] }

/// Malformed strings: each must fail with this offset and a message containing this text.
var errorCorpus: [(String, [Any?], Int, String)] { [
    ("", [], 0, "expected a predicate, found nothing"),
    ("   ", [], 0, "expected a predicate, found nothing"),
    ("name =", [], 6, "expected a value after '=', found the end of the format"),
    ("name = = 3", [], 7, "expected a value after '=', found '='"),
    ("name == AND", [], 8, "expected a value after '==', found reserved word 'AND'; write #AND to use it as a key"),
    ("name", [], 4, "expected a comparison operator after the expression at offset 0, found the end of the format"),
    ("name 'x'", [], 5, "expected a comparison operator"),
    ("name == 'abc", [], 8, "unterminated string"),
    ("(a = 1", [], 6, "expected ')' to close the '(' at offset 0"),
    ("a = 1)", [], 5, "unexpected ')' after a complete predicate"),
    ("a = 1 b = 2", [], 6, "unexpected 'b' after a complete predicate"),
    ("a = 1 AND", [], 9, "expected a key path or value to compare, found the end of the format"),
    ("a = 1 OR OR b = 1", [], 9, "found reserved word 'OR'"),
    ("AND = 1", [], 0, "found reserved word 'AND'; write #AND"),
    ("a.in = 1", [], 2, "expected a key after '.', found reserved word 'in'; write #in"),
    ("a. = 1", [], 3, "expected a key after '.', found '='"),
    ("a = %@", [], 4, "'%@' has no argument: 0 given"),
    ("a = %@ AND b = %@", ["x"], 15, "'%@' has no argument: 1 given"),
    ("a = 1", [1], 5, "1 arguments were given but the format uses 0"),
    ("a = %@", ["x", "y"], 6, "2 arguments were given but the format uses 1"),
    ("a = %d", ["x"], 4, "argument 1 for '%d' must be an integer, not String"),
    ("a = %d", [1.5], 4, "argument 1 for '%d' must be an integer, not Double"),
    ("a = %f", ["x"], 4, "argument 1 for '%f' must be a number, not String"),
    ("a = %s", [1], 4, "argument 1 for '%s' must be a String, not Int"),
    ("%K = 1", [5], 0, "argument 1 for '%K' must be a key path String, not Int"),
    ("%K = 1", ["a..b"], 0, "must be a key path without empty components"),
    ("a = %@", [[1: 2]], 4, "argument 1 for '%@' must be a String, number, Bool, Date, UUID, Data, URL, Decimal, nil, or an array or set of them, not Dictionary<Int, Int>"),
    ("a = %@", [UInt64.max], 4, "must be a String, number"),
    ("a = %x", [], 4, "unknown format specifier '%x'"),
    ("a = %", [], 4, "unknown format specifier '%'"),
    ("a = 12abc", [], 6, "unexpected 'a' after a number"),
    ("a = 0x", [], 4, "malformed or too large hexadecimal number"),
    ("a = 0b102", [], 8, "unexpected '2' after a number"),
    ("a = 99999999999999999999", [], 4, "integer 99999999999999999999 is too large"),
    ("a BETWEEN {1}", [], 2, "BETWEEN needs a collection of exactly two bounds, found 1"),
    ("a BETWEEN {1, 2, 3}", [], 2, "found 3"),
    ("a ==[x] 1", [], 5, "unknown comparison option 'x'"),
    ("a ==[] 1", [], 5, "expected options c, d or n inside '[ ]'"),
    ("a ==[c 1", [], 7, "expected ']' after the comparison options"),
    ("a.@foo = 1", [], 2, "expected a collection operator (@count, @sum, @avg, @min, @max, @distinctUnionOfObjects) after '@', found 'foo'"),
    ("a.@count.b = 1", [], 2, "@count takes no key path after it"),
    ("SUBQUERY(a, x, b = 1).@count > 0", [], 12, "expected a $variable as the second part of SUBQUERY, found 'x'"),
    ("SUBQUERY(a $x, b = 1).@count > 0", [], 11, "expected ',' after the collection of SUBQUERY"),
    ("SUBQUERY(a, $x, b = 1.@count > 0", [], 29, "expected ')' after the predicate of SUBQUERY, found '>'"),
    ("SUBQUERY a", [], 9, "expected '(' after SUBQUERY"),
    ("a = 'x' ^", [], 8, "unexpected character '^'"),
    ("a = $", [], 4, "expected a variable name after '$'"),
    ("a = #", [], 4, "expected a key after '#'"),
    ("a = # b", [], 4, "expected a key after '#'"),
    ("a = CAST(1, 'Foo')", [], 4, "CAST to \"Foo\" cannot take integer 1"),
    ("a = CAST('x', 'NSDate')", [], 4, "CAST to \"NSDate\" cannot take String \"x\""),
    ("a = CAST(1, 2)", [], 12, "expected a type name string as the second part of CAST"),
    ("a = {1, 2", [], 9, "expected '}' after the collection's values"),
    ("a IN", [], 4, "expected a value after 'IN', found the end of the format"),
    ("a BEGINSWITH", [], 12, "expected a value after 'BEGINSWITH'"),
    ("ANY = 1", [], 4, "expected a key path or value to compare, found '='"),
    ("a = -", [], 5, "expected a value after '-', found the end of the format"),
    ("a = '\\u12'", [], 5, "expected four hex digits after '\\u'"),
    ("a = 'x'\"", [], 7, "unterminated string"),
    ("a == 1 AND (b == 2", [], 18, "expected ')' to close the '(' at offset 11"),
    ("()", [], 1, "expected a key path or value to compare, found ')'"),
    ("a = ()", [], 5, "expected a value after '=', found ')'"),
    ("a = 1 AND NOT", [], 13, "expected a key path or value to compare"),
    ("= 1", [], 0, "expected a key path or value to compare, found '='"),
    ("a ! 1", [], 2, "expected a comparison operator"),
    ("a = 1,", [], 5, "unexpected ',' after a complete predicate"),
    ("a = 'x' [c]", [], 8, "unexpected '['"),
    ("a = 1e", [], 5, "unexpected 'e' after a number"),
    ("a =\n\t", [], 5, "expected a value after '='"),
    (String(repeating: "(", count: 150) + "a = 1" + String(repeating: ")", count: 150), [], 101, "nesting deeper than 100 levels"),
    (String(repeating: "NOT ", count: 150) + "a = 1", [], 404, "nesting deeper than 100 levels"),
] }

@Suite struct CorpusTests {
    @Test func theCorpusHasAtLeast200Strings() {
        #expect(treeCorpus.count + canonicalCorpus.count + errorCorpus.count >= 200)
    }

    @Test(arguments: treeCorpus.indices)
    func parsesToTheExpectedTree(_ index: Int) throws {
        let (format, arguments, expected) = treeCorpus[index]
        let parsed = try FormatPredicate(format: format, argumentArray: arguments)
        #expect(parsed == expected, "\(format)")
        #expect(try FormatPredicate(format: parsed.description, argumentArray: []) == parsed, "\(parsed)")
    }

    @Test(arguments: canonicalCorpus.indices)
    func printsTheCanonicalFormThatParsesBackToTheSameTree(_ index: Int) throws {
        let (format, arguments, canonical) = canonicalCorpus[index]
        let parsed = try FormatPredicate(format: format, argumentArray: arguments)
        #expect(parsed.description == canonical, "\(format)")
        #expect(try FormatPredicate(format: canonical, argumentArray: []) == parsed, "\(canonical)")
    }

    @Test(arguments: errorCorpus.indices)
    func malformedInputFailsWithOffsetAndExpectation(_ index: Int) {
        let (format, arguments, offset, message) = errorCorpus[index]
        do {
            let parsed = try FormatPredicate(format: format, argumentArray: arguments)
            Issue.record("\(format) parsed as \(parsed)")
        } catch {
            #expect(error.offset == offset, "\(format): \(error)")
            #expect(error.description.contains(message), "\(format): \(error)")
            #expect(error.description.hasSuffix("at offset \(offset)"), "\(error)")
        }
    }

    @Test func variablesAreSubstitutedButSubqueryBindingsStay() throws {
        let template = try FormatPredicate("author = $who AND SUBQUERY(books, $who, $who.pages > $min).@count > 0")
        let bound = try template.withSubstitutionVariables(["who": "约翰史蒂芬", "min": 10])
        #expect(bound.description == #"author == "约翰史蒂芬" AND SUBQUERY(books, $who, $who.pages > 10).@count > 0"#)
        do {
            _ = try template.withSubstitutionVariables(["who": [1: 2]])
            Issue.record("a dictionary was accepted as a variable's value")
        } catch {
            #expect(error.description.contains("variable $who has a value of type Dictionary<Int, Int>"))
        }
    }
}

import Foundation

/// Reads a token list into a ``FormatPredicate``, substituting format arguments as it goes.
struct Parser {
    static let maximumDepth = 100

    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "ANY", "SOME",
        "ALL", "NONE", "TRUEPREDICATE", "FALSEPREDICATE", "TRUE", "YES", "FALSE", "NO", "NULL", "NIL", "SELF",
        "SUBQUERY", "FIRST", "LAST", "SIZE", "CAST",
    ]

    private let tokens: [Token]
    private let arguments: [Any?]
    private let length: Int
    private var index = 0
    private var argumentIndex = 0

    init(_ text: String, arguments: [Any?]) throws(FormatPredicateError) {
        tokens = try Lexer.tokenize(text)
        self.arguments = arguments
        length = text.count
    }

    mutating func parse() throws(FormatPredicateError) -> FormatPredicate {
        guard current.kind != .end else { throw .syntax(offset: 0, message: "expected a predicate, found nothing") }
        let predicate = try orPredicate(depth: 0)
        guard current.kind == .end else {
            throw .syntax(offset: current.offset, message: "unexpected \(describe(current)) after a complete predicate")
        }
        guard argumentIndex == arguments.count else {
            throw .argument(offset: length, message: "\(arguments.count) arguments were given but the format uses \(argumentIndex)")
        }
        return predicate
    }

    // MARK: Tokens

    private var current: Token { tokens[index] }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func keyword(_ token: Token) -> String? {
        if case .identifier(let name) = token.kind {
            let upper = name.uppercased()
            return Self.reservedWords.contains(upper) ? upper : nil
        }
        return nil
    }

    private func isKeyword(_ word: String) -> Bool { keyword(current) == word }

    private func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }

    private mutating func expectSymbol(_ symbol: String, after what: String) throws(FormatPredicateError) {
        guard isSymbol(symbol) else {
            throw .syntax(offset: current.offset, message: "expected '\(symbol)' after \(what), found \(describe(current))")
        }
        advance()
    }

    private func describe(_ token: Token) -> String {
        switch token.kind {
        case .identifier(let name): keyword(token) != nil ? "reserved word '\(name)'" : "'\(name)'"
        case .escapedIdentifier(let name): "'#\(name)'"
        case .string(let text): "string \"\(text)\""
        case .integer(let value): "number \(value)"
        case .double(let value): "number \(value)"
        case .specifier(let letters): "'%\(letters)'"
        case .variable(let name): "'$\(name)'"
        case .symbol(let symbol): "'\(symbol)'"
        case .end: "the end of the format"
        }
    }

    private func checkDepth(_ depth: Int) throws(FormatPredicateError) {
        if depth > Self.maximumDepth {
            throw .syntax(offset: current.offset, message: "nesting deeper than \(Self.maximumDepth) levels")
        }
    }

    // MARK: Predicates

    private mutating func orPredicate(depth: Int) throws(FormatPredicateError) -> FormatPredicate {
        try checkDepth(depth)
        var parts = [try andPredicate(depth: depth)]
        while isKeyword("OR") || isSymbol("||") {
            advance()
            parts.append(try andPredicate(depth: depth))
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func andPredicate(depth: Int) throws(FormatPredicateError) -> FormatPredicate {
        var parts = [try notPredicate(depth: depth)]
        while isKeyword("AND") || isSymbol("&&") {
            advance()
            parts.append(try notPredicate(depth: depth))
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func notPredicate(depth: Int) throws(FormatPredicateError) -> FormatPredicate {
        try checkDepth(depth)
        if isKeyword("NOT") || isSymbol("!") {
            advance()
            return .not(try notPredicate(depth: depth + 1))
        }
        if isSymbol("(") {
            let open = current.offset
            advance()
            let inner = try orPredicate(depth: depth + 1)
            guard isSymbol(")") else {
                throw .syntax(offset: current.offset, message: "expected ')' to close the '(' at offset \(open), found \(describe(current))")
            }
            advance()
            return inner
        }
        if isKeyword("TRUEPREDICATE") { advance(); return .constant(true) }
        if isKeyword("FALSEPREDICATE") { advance(); return .constant(false) }
        return try comparison(depth: depth)
    }

    private static let symbolOperators: [String: Comparison.Operator] = [
        "=": .equal, "==": .equal, "!=": .notEqual, "<>": .notEqual, "<": .less, "<=": .lessOrEqual, "=<": .lessOrEqual,
        ">": .greater, ">=": .greaterOrEqual, "=>": .greaterOrEqual,
    ]

    private mutating func comparison(depth: Int) throws(FormatPredicateError) -> FormatPredicate {
        var modifier = Comparison.Modifier.direct
        switch keyword(current) {
        case "ANY", "SOME": modifier = .any
        case "ALL": modifier = .all
        case "NONE": modifier = .none
        default: break
        }
        if modifier != .direct { advance() }
        let leftStart = current.offset
        let left = try expression(depth: depth + 1, role: "a key path or value to compare")
        let operatorToken = current
        var op: Comparison.Operator?
        if case .symbol(let symbol) = current.kind { op = Self.symbolOperators[symbol] }
        if op == nil, let word = keyword(current) { op = Comparison.Operator(rawValue: word) }
        guard let op else {
            throw .syntax(offset: current.offset, message: "expected a comparison operator after the expression at offset \(leftStart), found \(describe(current))")
        }
        advance()
        var options: Comparison.Options = []
        if isSymbol("[") {
            advance()
            guard case .identifier(let letters) = current.kind else {
                throw .syntax(offset: current.offset, message: "expected options c, d or n inside '[ ]'")
            }
            for letter in letters.lowercased() {
                switch letter {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n": break
                default: throw .syntax(offset: current.offset, message: "unknown comparison option '\(letter)' (expected c, d or n)")
                }
            }
            advance()
            try expectSymbol("]", after: "the comparison options")
        }
        var operatorText = op.rawValue
        if case .symbol(let symbol) = operatorToken.kind { operatorText = symbol }
        let right = try expression(depth: depth + 1, role: "a value after '\(operatorText)'")
        if op == .between {
            let count: Int? = switch right {
            case .aggregate(let items): items.count
            default: nil
            }
            if let count, count != 2 {
                throw .syntax(offset: operatorToken.offset, message: "BETWEEN needs a collection of exactly two bounds, found \(count)")
            }
        }
        return .comparison(Comparison(left, op, right, modifier: modifier, options: options))
    }

    // MARK: Expressions

    private mutating func expression(depth: Int, role: String) throws(FormatPredicateError) -> FormatExpression {
        try checkDepth(depth)
        var base = try primary(depth: depth, role: role)
        while isSymbol(".") {
            advance()
            if isSymbol("@") {
                base = try collectionOperator(on: base)
                break
            }
            let names: [String]
            if current.kind == .specifier("K") {
                let offset = current.offset
                advance()
                names = try keyPathArgument(offset: offset)
            } else {
                names = [try keyComponent(after: "'.'")]
            }
            switch base {
            case .keyPath(let path): base = .keyPath(path + names)
            case .evaluatedObject: base = .keyPath(names)
            case .member(let inner, let path): base = .member(inner, path + names)
            default: base = .member(base, names)
            }
        }
        return base
    }

    private mutating func keyComponent(after what: String) throws(FormatPredicateError) -> String {
        switch current.kind {
        case .identifier(let name) where keyword(current) == nil:
            advance()
            return name
        case .escapedIdentifier(let name):
            advance()
            return name
        case .identifier(let name):
            throw .syntax(offset: current.offset, message: "expected a key after \(what), found reserved word '\(name)'; write #\(name) to use it as a key")
        default:
            throw .syntax(offset: current.offset, message: "expected a key after \(what), found \(describe(current))")
        }
    }

    private mutating func collectionOperator(on base: FormatExpression) throws(FormatPredicateError) -> FormatExpression {
        let at = current.offset
        advance()
        guard case .identifier(let name) = current.kind, let op = CollectionOperator(rawValue: name.lowercased()) else {
            throw .syntax(offset: at, message: "expected a collection operator (@count, @sum, @avg, @min, @max) after '@', found \(describe(current))")
        }
        advance()
        var key: [String] = []
        while isSymbol(".") {
            advance()
            key.append(try keyComponent(after: "'@\(name).'"))
        }
        if op == .count && !key.isEmpty {
            throw .syntax(offset: at, message: "@count takes no key path after it")
        }
        return .collection(op, of: base, key: key)
    }

    private mutating func primary(depth: Int, role: String) throws(FormatPredicateError) -> FormatExpression {
        let token = current
        switch token.kind {
        case .string(let text):
            advance()
            return .constant(.string(text))
        case .integer(let value):
            advance()
            return .constant(.int(value))
        case .double(let value):
            advance()
            return .constant(.double(value))
        case .symbol("-"), .symbol("+"):
            advance()
            let negative = token.kind == .symbol("-")
            switch current.kind {
            case .integer(let value):
                advance()
                return .constant(.int(negative ? -value : value))
            case .double(let value):
                advance()
                return .constant(.double(negative ? -value : value))
            default:
                throw .syntax(offset: current.offset, message: "expected a number after '\(negative ? "-" : "+")', found \(describe(current))")
            }
        case .escapedIdentifier(let name):
            advance()
            return .keyPath([name])
        case .variable(let name):
            advance()
            return .variable(name)
        case .specifier(let letters):
            advance()
            return try argument(letters, offset: token.offset)
        case .symbol("{"):
            advance()
            var items: [FormatExpression] = []
            if !isSymbol("}") {
                repeat {
                    if isSymbol(",") { advance() }
                    items.append(try expression(depth: depth + 1, role: "a value in the collection"))
                } while isSymbol(",")
            }
            try expectSymbol("}", after: "the collection's values")
            return .aggregate(items)
        case .symbol("@"):
            return try collectionOperator(on: .evaluatedObject)
        case .identifier(let name):
            switch keyword(token) {
            case nil:
                advance()
                return .keyPath([name])
            case "TRUE", "YES":
                advance()
                return .constant(.bool(true))
            case "FALSE", "NO":
                advance()
                return .constant(.bool(false))
            case "NULL", "NIL":
                advance()
                return .constant(.null)
            case "SELF":
                advance()
                return .evaluatedObject
            case "SUBQUERY":
                return try subquery(depth: depth)
            case "CAST":
                return try cast()
            default:
                throw .syntax(offset: token.offset, message: "expected \(role), found reserved word '\(name)'; write #\(name) to use it as a key")
            }
        default:
            throw .syntax(offset: token.offset, message: "expected \(role), found \(describe(token))")
        }
    }

    private mutating func subquery(depth: Int) throws(FormatPredicateError) -> FormatExpression {
        advance()
        try expectSymbol("(", after: "SUBQUERY")
        let collection = try expression(depth: depth + 1, role: "the collection of SUBQUERY")
        try expectSymbol(",", after: "the collection of SUBQUERY")
        guard case .variable(let variable) = current.kind else {
            throw .syntax(offset: current.offset, message: "expected a $variable as the second part of SUBQUERY, found \(describe(current))")
        }
        advance()
        try expectSymbol(",", after: "the variable of SUBQUERY")
        let predicate = try orPredicate(depth: depth + 1)
        try expectSymbol(")", after: "the predicate of SUBQUERY")
        return .subquery(collection: collection, variable: variable, predicate: predicate)
    }

    /// `CAST(value, "Type")`: how constants without a literal form (dates, UUIDs, data, URLs, decimals) print.
    private mutating func cast() throws(FormatPredicateError) -> FormatExpression {
        let start = current.offset
        advance()
        try expectSymbol("(", after: "CAST")
        let valueToken = current
        advance()
        try expectSymbol(",", after: "the value of CAST")
        guard case .string(let type) = current.kind else {
            throw .syntax(offset: current.offset, message: "expected a type name string as the second part of CAST")
        }
        advance()
        try expectSymbol(")", after: "the type of CAST")
        let value: PredicateValue? = switch (type, valueToken.kind) {
        case ("NSDate", .double(let seconds)): .date(Date(timeIntervalSinceReferenceDate: seconds))
        case ("NSDate", .integer(let seconds)): .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
        case ("NSDecimalNumber", .string(let text)): Decimal(string: text).map(PredicateValue.decimal)
        case ("UUID", .string(let text)): UUID(uuidString: text).map(PredicateValue.uuid)
        case ("URL", .string(let text)): URL(string: text).map(PredicateValue.url)
        case ("Data", .string(let text)): Data(base64Encoded: text).map(PredicateValue.data)
        default: nil
        }
        guard let value else {
            throw .syntax(offset: start, message: "CAST to \"\(type)\" cannot take \(describe(valueToken)) (expected NSDate, NSDecimalNumber, UUID, URL or Data with a matching value)")
        }
        return .constant(value)
    }

    // MARK: Arguments

    private mutating func keyPathArgument(offset: Int) throws(FormatPredicateError) -> [String] {
        guard case .keyPath(let path) = try argument("K", offset: offset) else { return [] }
        return path
    }

    private mutating func argument(_ letters: String, offset: Int) throws(FormatPredicateError) -> FormatExpression {
        guard argumentIndex < arguments.count else {
            throw .argument(offset: offset, message: "'%\(letters)' has no argument: \(arguments.count) given")
        }
        let raw = arguments[argumentIndex]
        let position = argumentIndex + 1
        argumentIndex += 1
        let value = ArgumentConversion.unwrap(raw)
        func wrong(_ expected: String) -> FormatPredicateError {
            .argument(offset: offset, message: "argument \(position) for '%\(letters)' must be \(expected), not \(ArgumentConversion.typeName(value))")
        }
        switch letters {
        case "K":
            guard let path = value as? String, !path.isEmpty else { throw wrong("a key path String") }
            let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard components.allSatisfy({ !$0.isEmpty }) else { throw wrong("a key path without empty components") }
            return .keyPath(components)
        case "@":
            guard let expression = ArgumentConversion.expression(value) else {
                throw wrong("a String, number, Bool, Date, UUID, Data, URL, Decimal, nil, or an array or set of them")
            }
            return expression
        case "d", "i", "ld", "lld", "u", "lu", "llu":
            guard let number = ArgumentConversion.integer(value) else { throw wrong("an integer") }
            return .constant(.int(number))
        case "f", "lf":
            guard let expression = ArgumentConversion.expression(value), case .constant(let constant) = expression,
                  let number = constant.number, !(value is Bool) else { throw wrong("a number") }
            return .constant(.double(number))
        case "s":
            guard let text = value as? String else { throw wrong("a String") }
            return .constant(.string(text))
        default:
            throw .syntax(offset: offset, message: "unknown format specifier '%\(letters)'")
        }
    }
}

import Foundation

/// Reads a token list into a ``FormatPredicate``, substituting format arguments as it goes.
struct Parser {
    static let maximumDepth = 100

    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "ANY", "SOME",
        "ALL", "NONE", "TRUEPREDICATE", "FALSEPREDICATE", "TRUE", "YES", "FALSE", "NO", "NULL", "NIL", "SELF",
        "SUBQUERY", "FIRST", "LAST", "SIZE", "CAST", "FUNCTION", "TERNARY",
    ]

    private let tokens: [Token]
    private let arguments: [Any?]
    private let length: Int
    private var index = 0
    private var argumentIndex = 0
    /// How each parenthesis at a predicate's start was read, by its token's index.
    private var parenthesized: [Int: Result<(predicate: FormatPredicate, end: Int, arguments: Int), FormatPredicateError>] = [:]

    init(_ text: String, arguments: [Any?]) throws(FormatPredicateError) {
        tokens = try Lexer.tokenize(text)
        self.arguments = arguments
        length = text.count
    }

    mutating func parse() throws(FormatPredicateError) -> FormatPredicate {
        guard current.kind != .end else { throw .syntax(offset: 0, message: "expected a predicate, found nothing") }
        let predicate = try orPredicate(depth: 0)
        try expectEnd(after: "predicate")
        return predicate
    }

    /// Reads the whole format as one expression (for dictionary results and derived values).
    mutating func parseExpression() throws(FormatPredicateError) -> FormatExpression {
        guard current.kind != .end else { throw .syntax(offset: 0, message: "expected an expression, found nothing") }
        let expression = try expression(depth: 0, role: "an expression")
        try expectEnd(after: "expression")
        return expression
    }

    /// The format ends here, having used every argument.
    private func expectEnd(after what: String) throws(FormatPredicateError) {
        guard current.kind == .end else {
            throw .syntax(offset: current.offset, message: "unexpected \(describe(current)) after a complete \(what)")
        }
        guard argumentIndex == arguments.count else {
            throw .argument(offset: length, message: "\(arguments.count) arguments were given but the format uses \(argumentIndex)")
        }
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
        case .functionName(let name): "'\(name)'"
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
            let start = index
            if let known = parenthesized[start] {
                switch known {
                case .success(let parsed):
                    (index, argumentIndex) = (parsed.end, parsed.arguments)
                    return parsed.predicate
                case .failure(let error):
                    throw error
                }
            }
            do throws(FormatPredicateError) {
                let predicate = try parenthesizedPredicate(depth: depth)
                parenthesized[start] = .success((predicate, index, argumentIndex))
                return predicate
            } catch {
                parenthesized[start] = .failure(error)
                throw error
            }
        }
        if isKeyword("TRUEPREDICATE") { advance(); return .constant(true) }
        if isKeyword("FALSEPREDICATE") { advance(); return .constant(false) }
        return try comparison(depth: depth)
    }

    /// A parenthesis opens a predicate, `(a = 1 OR b = 2)`, or an operand, `(a + b) * 2 > 3`. The operand is
    /// tried first: it fails at the first comparison operator inside. Each parenthesis is decided once
    /// (``parenthesized``), so nested ones cost no more than reading them.
    private mutating func parenthesizedPredicate(depth: Int) throws(FormatPredicateError) -> FormatPredicate {
        let saved = (index, argumentIndex)
        let operandError: FormatPredicateError
        do throws(FormatPredicateError) {
            return try comparison(depth: depth)
        } catch {
            operandError = error
        }
        (index, argumentIndex) = saved
        let open = current.offset
        advance()
        do throws(FormatPredicateError) {
            let inner = try orPredicate(depth: depth + 1)
            guard isSymbol(")") else {
                throw FormatPredicateError.syntax(offset: current.offset, message: "expected ')' to close the '(' at offset \(open), found \(describe(current))")
            }
            advance()
            return inner
        } catch {
            // The reading that got further is the one the writer meant.
            throw (operandError.offset ?? 0) > (error.offset ?? 0) ? operandError : error
        }
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

    /// An expression: arithmetic over operands, `+ -` below `* /` below `**`, which groups to the right, as in
    /// mathematics; `+ - * /` group to the left.
    mutating func expression(depth: Int, role: String) throws(FormatPredicateError) -> FormatExpression {
        try checkDepth(depth)
        var left = try multiplicative(depth: depth, role: role)
        while isSymbol("+") || isSymbol("-") {
            let function: ExpressionFunction = isSymbol("+") ? .add : .subtract
            advance()
            left = .function(function, [left, try multiplicative(depth: depth, role: "a value after '\(function.infix!.symbol)'")])
        }
        return left
    }

    private mutating func multiplicative(depth: Int, role: String) throws(FormatPredicateError) -> FormatExpression {
        var left = try power(depth: depth, role: role)
        while isSymbol("*") || isSymbol("/") {
            let function: ExpressionFunction = isSymbol("*") ? .multiply : .divide
            advance()
            left = .function(function, [left, try power(depth: depth, role: "a value after '\(function.infix!.symbol)'")])
        }
        return left
    }

    private mutating func power(depth: Int, role: String) throws(FormatPredicateError) -> FormatExpression {
        let base = try unary(depth: depth, role: role)
        guard isSymbol("**") else { return base }
        advance()
        return .function(.power, [base, try power(depth: depth + 1, role: "a value after '**'")])
    }

    /// `-x` is `from:subtract:(0, x)`; a minus sign before a number is part of the literal.
    private mutating func unary(depth: Int, role: String) throws(FormatPredicateError) -> FormatExpression {
        guard isSymbol("-") || isSymbol("+") else { return try postfix(depth: depth, role: role) }
        let negative = isSymbol("-")
        advance()
        switch current.kind {
        case .integer(let magnitude):
            let offset = current.offset
            advance()
            let value: Int64
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { throw .syntax(offset: offset, message: "integer -\(magnitude) is too large") }
                value = magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
            } else {
                value = try Self.integer(magnitude, offset: offset)
            }
            return try postfix(after: .constant(.int(value)), depth: depth)
        case .double(let value):
            advance()
            return try postfix(after: .constant(.double(negative ? -value : value)), depth: depth)
        default:
            try checkDepth(depth + 1)
            let operand = try unary(depth: depth + 1, role: "a value after '\(negative ? "-" : "+")'")
            return negative ? .function(.subtract, [.constant(.int(0)), operand]) : operand
        }
    }

    private static func integer(_ magnitude: UInt64, offset: Int) throws(FormatPredicateError) -> Int64 {
        guard let value = Int64(exactly: magnitude) else { throw .syntax(offset: offset, message: "integer \(magnitude) is too large") }
        return value
    }

    /// Key paths, collection operators and subscripts after an operand: `a.b`, `a.@sum.b`, `a[FIRST]`.
    private mutating func postfix(depth: Int, role: String) throws(FormatPredicateError) -> FormatExpression {
        try postfix(after: try primary(depth: depth, role: role), depth: depth)
    }

    private mutating func postfix(after start: FormatExpression, depth: Int) throws(FormatPredicateError) -> FormatExpression {
        var base = start
        // Components gather in one array: appending to the tree's path per component copied it each time.
        var pending: [String] = []
        func flush(_ base: inout FormatExpression, _ pending: inout [String]) {
            guard !pending.isEmpty else { return }
            switch base {
            case .keyPath(let path): base = .keyPath(path + pending)
            case .evaluatedObject: base = .keyPath(pending)
            case .member(let inner, let path): base = .member(inner, path + pending)
            default: base = .member(base, pending)
            }
            pending.removeAll()
        }
        while true {
            if isSymbol(".") {
                advance()
                if isSymbol("@") {
                    flush(&base, &pending)
                    base = try collectionOperator(on: base)
                    continue
                }
                if current.kind == .specifier("K") {
                    let offset = current.offset
                    advance()
                    pending += try keyPathArgument(offset: offset)
                } else {
                    pending.append(try keyComponent(after: "'.'"))
                }
            } else if isSymbol("[") {
                flush(&base, &pending)
                base = try subscripted(base, depth: depth)
            } else {
                flush(&base, &pending)
                return base
            }
        }
    }

    private mutating func subscripted(_ base: FormatExpression, depth: Int) throws(FormatPredicateError) -> FormatExpression {
        let open = current.offset
        if case .constant(let value) = base, !value.isNull {
            throw .syntax(offset: open, message: "unexpected '[' after a \(value.kindName) constant, which is not a collection")
        }
        advance()
        let subscriptValue: CollectionSubscript
        switch keyword(current) {
        case "FIRST": advance(); subscriptValue = .first
        case "LAST": advance(); subscriptValue = .last
        case "SIZE": advance(); subscriptValue = .size
        default: subscriptValue = .index(try expression(depth: depth + 1, role: "an index, FIRST, LAST or SIZE inside '[ ]'"))
        }
        guard isSymbol("]") else {
            throw .syntax(offset: current.offset, message: "expected ']' to close the '[' at offset \(open), found \(describe(current))")
        }
        advance()
        return .subscripted(base, subscriptValue)
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
        guard case .identifier(let name) = current.kind,
              let op = CollectionOperator.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
            throw .syntax(offset: at, message: "expected a collection operator (@count, @sum, @avg, @min, @max, @distinctUnionOfObjects) after '@', found \(describe(current))")
        }
        advance()
        var key: [String] = []
        while isSymbol("."), !(tokens[index + 1].kind == .symbol("@")) {
            advance()
            key.append(try keyComponent(after: "'@\(name).'"))
        }
        if op == .count && !key.isEmpty {
            throw .syntax(offset: at, message: "@count takes no key path after it")
        }
        if op == .distinctUnionOfObjects && key.isEmpty {
            throw .syntax(offset: at, message: "@distinctUnionOfObjects needs the key of the values to collect after it")
        }
        if op != .distinctUnionOfObjects && isSymbol(".") {
            throw .syntax(offset: current.offset, message: "@\(op.rawValue) yields one value; nothing can follow it")
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
            return .constant(.int(try Self.integer(value, offset: token.offset)))
        case .double(let value):
            advance()
            return .constant(.double(value))
        case .escapedIdentifier(let name):
            advance()
            return .keyPath([name])
        case .variable(let name):
            advance()
            return .variable(name)
        case .specifier(let letters):
            advance()
            return try argument(letters, offset: token.offset)
        case .functionName(let name):
            return try functionCall(name, depth: depth)
        case .symbol("("):
            advance()
            let inner = try expression(depth: depth + 1, role: role)
            guard isSymbol(")") else {
                throw .syntax(offset: current.offset, message: "expected ')' to close the '(' at offset \(token.offset), found \(describe(current))")
            }
            advance()
            return inner
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
                if isSymbol("("), let function = ExpressionFunction(rawValue: name), function.arity == 0 {
                    advance()
                    try expectSymbol(")", after: "'\(name)('")
                    return .function(function, [])
                }
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
                return try cast(depth: depth)
            case "FUNCTION":
                return try functionExpression(depth: depth)
            case "TERNARY":
                return try ternary(depth: depth)
            default:
                throw .syntax(offset: token.offset, message: "expected \(role), found reserved word '\(name)'; write #\(name) to use it as a key")
            }
        default:
            throw .syntax(offset: token.offset, message: "expected \(role), found \(describe(token))")
        }
    }

    /// The comma-separated expressions of a call, up to its closing parenthesis.
    private mutating func callArguments(depth: Int, of what: String) throws(FormatPredicateError) -> [FormatExpression] {
        var arguments: [FormatExpression] = []
        if !isSymbol(")") {
            arguments.append(try expression(depth: depth + 1, role: "an argument of \(what)"))
            while isSymbol(",") {
                advance()
                arguments.append(try expression(depth: depth + 1, role: "an argument of \(what)"))
            }
        }
        try expectSymbol(")", after: "the arguments of \(what)")
        return arguments
    }

    private static var functionNames: String {
        ExpressionFunction.allCases.filter { $0 != .cast }.map { $0.arity == 0 ? "\($0.rawValue)()" : $0.rawValue }.joined(separator: ", ")
    }

    /// The call of the function named `name` with `arguments`, checked against its arity (a CAST by its type).
    private func call(_ name: String, _ arguments: [FormatExpression], offset: Int) throws(FormatPredicateError) -> FormatExpression {
        guard let function = ExpressionFunction(rawValue: name) else {
            throw .syntax(offset: offset, message: "unknown function '\(name)' (the functions are \(Self.functionNames))")
        }
        guard function.arity == arguments.count else {
            throw .syntax(offset: offset, message: "'\(name)' takes \(function.arity) argument\(function.arity == 1 ? "" : "s"), not \(arguments.count)")
        }
        if function == .cast { return try castExpression(arguments[0], arguments[1], offset: offset) }
        return .function(function, arguments)
    }

    /// `name:(arguments)`.
    private mutating func functionCall(_ name: String, depth: Int) throws(FormatPredicateError) -> FormatExpression {
        let offset = current.offset
        advance()
        try expectSymbol("(", after: "the function name '\(name)'")
        return try call(name, try callArguments(depth: depth, of: "'\(name)'"), offset: offset)
    }

    /// `FUNCTION(SELF, 'name:', arguments...)`: NSExpression's spelling of a call.
    private mutating func functionExpression(depth: Int) throws(FormatPredicateError) -> FormatExpression {
        let offset = current.offset
        advance()
        try expectSymbol("(", after: "FUNCTION")
        let receiverOffset = current.offset
        let receiver = try expression(depth: depth + 1, role: "the receiver of FUNCTION")
        guard receiver == .evaluatedObject else {
            throw .syntax(offset: receiverOffset, message: "FUNCTION calls the functions NSExpression defines, on SELF: write FUNCTION(SELF, 'sqrt:', x), not a receiver of \(receiver)")
        }
        try expectSymbol(",", after: "the receiver of FUNCTION")
        guard case .string(let name) = current.kind else {
            throw .syntax(offset: current.offset, message: "expected the function's name as a string after FUNCTION(SELF, found \(describe(current))")
        }
        advance()
        var arguments: [FormatExpression] = []
        while isSymbol(",") {
            advance()
            arguments.append(try expression(depth: depth + 1, role: "an argument of '\(name)'"))
        }
        try expectSymbol(")", after: "the arguments of FUNCTION")
        return try call(name, arguments, offset: offset)
    }

    private mutating func ternary(depth: Int) throws(FormatPredicateError) -> FormatExpression {
        advance()
        try expectSymbol("(", after: "TERNARY")
        let condition = try orPredicate(depth: depth + 1)
        try expectSymbol(",", after: "the condition of TERNARY")
        let then = try expression(depth: depth + 1, role: "the value of TERNARY where the condition holds")
        try expectSymbol(",", after: "the second part of TERNARY")
        let otherwise = try expression(depth: depth + 1, role: "the value of TERNARY where the condition fails")
        try expectSymbol(")", after: "the third part of TERNARY")
        return .ternary(condition, then, otherwise)
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

    /// `CAST(value, "Type")`.
    private mutating func cast(depth: Int) throws(FormatPredicateError) -> FormatExpression {
        let start = current.offset
        advance()
        try expectSymbol("(", after: "CAST")
        let value = try expression(depth: depth + 1, role: "the value of CAST")
        try expectSymbol(",", after: "the value of CAST")
        guard case .string(let type) = current.kind else {
            throw .syntax(offset: current.offset, message: "expected a type name string as the second part of CAST")
        }
        advance()
        try expectSymbol(")", after: "the type of CAST")
        return try castExpression(value, .constant(.string(type)), offset: start)
    }

    /// A cast of a constant is the converted constant, which is how values without a literal form print (dates,
    /// decimals, UUIDs, URLs, data, NaN); a cast of anything else converts when evaluated, to NSNumber, NSString or
    /// NSDate.
    private func castExpression(_ value: FormatExpression, _ typeExpression: FormatExpression, offset: Int) throws(FormatPredicateError) -> FormatExpression {
        guard case .constant(.string(let type)) = typeExpression else {
            throw .syntax(offset: offset, message: "CAST needs a type name string as its second part, not \(typeExpression)")
        }
        if case .constant(let constant) = value {
            do throws(FormatPredicateError) {
                return .constant(try Conversion.cast(constant, to: type))
            } catch {
                throw .syntax(offset: offset, message: "CAST to \"\(type)\" cannot take \(constant.kindName) \(constant.formatLiteral) (\(error.description))")
            }
        }
        guard Conversion.runtimeCastTypes.contains(type) else {
            throw .syntax(offset: offset, message: "CAST to \"\(type)\" takes only a constant; a value read when evaluating can be cast to \(Conversion.runtimeCastTypes.sorted().joined(separator: ", "))")
        }
        return .function(.cast, [value, typeExpression])
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

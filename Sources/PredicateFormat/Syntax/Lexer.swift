/// A token of the format language, with the character offset where it starts.
struct Token: Equatable {
    enum Kind: Equatable {
        case identifier(String)
        /// `#name`: a key that would otherwise read as a reserved word.
        case escapedIdentifier(String)
        case string(String)
        /// An integer's magnitude: a minus sign before it is the parser's, so -9223372036854775808 can be read.
        case integer(UInt64)
        case double(Double)
        /// `%@`, `%K`, `%d`, ...: the letters after `%`.
        case specifier(String)
        /// `$name`.
        case variable(String)
        /// `name:` or `name:other:`: a function of NSExpression, written before its parenthesized arguments.
        case functionName(String)
        /// Punctuation and operators: `==`, `(`, `{`, `[`, `.`, `@`, ...
        case symbol(String)
        case end
    }

    let kind: Kind
    let offset: Int
}

/// Splits a format string into tokens; reports the offset of anything it cannot read.
struct Lexer {
    private let characters: [Character]
    private var position = 0

    init(_ text: String) { characters = Array(text) }

    static func tokenize(_ text: String) throws(FormatPredicateError) -> [Token] {
        var lexer = Lexer(text)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ ahead: Int = 0) -> Character? {
        position + ahead < characters.count ? characters[position + ahead] : nil
    }

    static func isIdentifierStart(_ c: Character) -> Bool { c == "_" || c.isLetter }
    static func isIdentifierPart(_ c: Character) -> Bool { c == "_" || c.isLetter || c.isNumber }

    /// Whether `name` reads back as one identifier token.
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.first, isIdentifierStart(first) else { return false }
        return name.dropFirst().allSatisfy(isIdentifierPart)
    }

    private mutating func identifier() -> String {
        let start = position
        while let c = peek(), Self.isIdentifierPart(c) { position += 1 }
        return String(characters[start..<position])
    }

    mutating func next() throws(FormatPredicateError) -> Token {
        while let c = peek(), c.isWhitespace { position += 1 }
        let start = position
        guard let c = peek() else { return Token(kind: .end, offset: start) }
        if Self.isIdentifierStart(c) {
            let name = identifier()
            guard peek() == ":" else { return Token(kind: .identifier(name), offset: start) }
            // `add:to:`: name parts each followed by a colon, the way NSExpression names its functions.
            position += 1
            var selector = name + ":"
            while let next = peek(), Self.isIdentifierStart(next) {
                let save = position
                let part = identifier()
                guard peek() == ":" else {
                    position = save
                    break
                }
                position += 1
                selector += part + ":"
            }
            return Token(kind: .functionName(selector), offset: start)
        }
        if c.isASCII, c.isNumber || (c == "." && peek(1)?.isASCII == true && peek(1)?.isNumber == true) {
            return try number()
        }
        switch c {
        case "'", "\"":
            return Token(kind: .string(try string(quote: c)), offset: start)
        case "#":
            position += 1
            if let quote = peek(), quote == "'" || quote == "\"" {
                // `#"first name"`: a key that is not an identifier, as a `%K` argument may name.
                let name = try string(quote: quote)
                guard !name.isEmpty else { throw .syntax(offset: start, message: "expected a key inside '#\(quote)\(quote)', found an empty one") }
                return Token(kind: .escapedIdentifier(name), offset: start)
            }
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw .syntax(offset: start, message: "expected a key after '#'")
            }
            return Token(kind: .escapedIdentifier(identifier()), offset: start)
        case "$":
            position += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw .syntax(offset: start, message: "expected a variable name after '$'")
            }
            return Token(kind: .variable(identifier()), offset: start)
        case "%":
            position += 1
            for specifier in ["lld", "llu", "ld", "lu", "lf", "@", "K", "d", "i", "u", "f", "s"] {
                let letters = Array(specifier)
                if (0..<letters.count).allSatisfy({ peek($0) == letters[$0] }) {
                    position += letters.count
                    return Token(kind: .specifier(specifier), offset: start)
                }
            }
            throw .syntax(offset: start, message: "unknown format specifier '%\(peek().map(String.init) ?? "")'")
        default:
            break
        }
        for symbol in ["==", "=>", "=<", ">=", "<=", "!=", "<>", "&&", "||", "**", "=", ">", "<", "!", "(", ")", "{", "}", "[", "]", ",", ".", "@", "-", "+", "*", "/"] {
            let letters = Array(symbol)
            if (0..<letters.count).allSatisfy({ peek($0) == letters[$0] }) {
                position += letters.count
                return Token(kind: .symbol(symbol), offset: start)
            }
        }
        throw .syntax(offset: start, message: "unexpected character '\(c)'")
    }

    private mutating func string(quote: Character) throws(FormatPredicateError) -> String {
        let start = position
        position += 1
        var result = ""
        while let c = peek() {
            position += 1
            if c == quote { return result }
            guard c == "\\" else {
                result.append(c)
                continue
            }
            guard let escaped = peek() else { break }
            position += 1
            switch escaped {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            case "0": result.append("\0")
            case "u":
                let digits = (0..<4).compactMap { peek($0) }
                guard digits.count == 4, let code = UInt32(String(digits), radix: 16), let scalar = Unicode.Scalar(code) else {
                    throw .syntax(offset: position - 2, message: "expected four hex digits after '\\u'")
                }
                position += 4
                result.unicodeScalars.append(scalar)
            default: result.append(escaped)
            }
        }
        throw .syntax(offset: start, message: "unterminated string")
    }

    private mutating func number() throws(FormatPredicateError) -> Token {
        let start = position
        if peek() == "0", let base = peek(1), "xXoObB".contains(base) {
            position += 2
            let radix = "xX".contains(base) ? 16 : ("oO".contains(base) ? 8 : 2)
            let digitsStart = position
            while let c = peek(), let digit = c.hexDigitValue, digit < radix { position += 1 }
            let digits = String(characters[digitsStart..<position])
            guard !digits.isEmpty, let value = UInt64(digits, radix: radix) else {
                throw .syntax(offset: start, message: "malformed or too large \(radix == 16 ? "hexadecimal" : radix == 8 ? "octal" : "binary") number")
            }
            return try finishNumber(.integer(value), start: start)
        }
        var isInteger = true
        while let c = peek(), c.isASCII, c.isNumber { position += 1 }
        if peek() == ".", let after = peek(1), after.isASCII, after.isNumber {
            isInteger = false
            position += 1
            while let c = peek(), c.isASCII, c.isNumber { position += 1 }
        }
        if let e = peek(), e == "e" || e == "E" {
            var ahead = 1
            if peek(ahead) == "+" || peek(ahead) == "-" { ahead += 1 }
            if let digit = peek(ahead), digit.isASCII, digit.isNumber {
                isInteger = false
                position += ahead
                while let c = peek(), c.isASCII, c.isNumber { position += 1 }
            }
        }
        let text = String(characters[start..<position])
        if isInteger {
            guard let value = UInt64(text) else { throw .syntax(offset: start, message: "integer \(text) is too large") }
            return try finishNumber(.integer(value), start: start)
        }
        guard let value = Double(text), value.isFinite else { throw .syntax(offset: start, message: "malformed number \(text)") }
        return try finishNumber(.double(value), start: start)
    }

    private func finishNumber(_ kind: Token.Kind, start: Int) throws(FormatPredicateError) -> Token {
        if let c = peek(), Self.isIdentifierPart(c) {
            throw .syntax(offset: position, message: "unexpected '\(c)' after a number")
        }
        return Token(kind: kind, offset: start)
    }
}

import Foundation

extension FormatPredicate: CustomStringConvertible {
    /// The canonical format string: it parses back to an equal tree.
    public var description: String {
        switch self {
        case .constant(let value): value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let inner): "NOT " + inner.nested
        case .and(let parts): parts.map(\.nested).joined(separator: " AND ")
        case .or(let parts): parts.map(\.nested).joined(separator: " OR ")
        case .comparison(let comparison): comparison.description
        }
    }

    /// Compound predicates inside others keep their parentheses, so the tree's shape survives printing.
    private var nested: String {
        switch self {
        case .and, .or: "(\(description))"
        default: description
        }
    }
}

extension Comparison: CustomStringConvertible {
    public var description: String {
        var text = modifier == .direct ? "" : modifier.rawValue + " "
        text += "\(left) \(op.rawValue)"
        if !options.isEmpty {
            text += "[" + (options.contains(.caseInsensitive) ? "c" : "") + (options.contains(.diacriticInsensitive) ? "d" : "") + "]"
        }
        return text + " \(right)"
    }
}

extension FormatExpression: CustomStringConvertible {
    public var description: String { printed(atLeast: 0) }

    /// How tightly the printed form binds: 1 for `+ -`, 2 for `* /`, 3 for `**`, 4 for a unary minus, 5 for
    /// operands that postfixes can follow (key paths, literals, calls).
    private var precedence: Int {
        switch self {
        case .function(let function, let arguments):
            if let infix = function.infix, arguments.count == 2 { return isNegation ? 4 : infix.precedence }
            return 5
        default: return 5
        }
    }

    /// `from:subtract:(0, x)` prints as `-x`, unless x is a number (`0 - 5` is not the literal `-5`).
    private var isNegation: Bool {
        guard case .function(.subtract, let arguments) = self, arguments.count == 2, arguments[0] == .constant(.int(0)) else { return false }
        switch arguments[1] {
        case .constant(.int), .constant(.double): return false
        default: return true
        }
    }

    /// The expression, in parentheses if it binds less tightly than `minimum`.
    private func printed(atLeast minimum: Int) -> String {
        let text = unparenthesized
        return precedence < minimum ? "(" + text + ")" : text
    }

    private var unparenthesized: String {
        switch self {
        case .constant(let value): return value.formatLiteral
        case .evaluatedObject: return "SELF"
        case .keyPath(let path): return Self.keyPathText(path)
        case .variable(let name): return "$" + name
        case .member(let base, let path): return "\(base.printed(atLeast: 5)).\(Self.keyPathText(path))"
        case .aggregate(let items): return "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .collection(let op, let base, let key):
            return (base == .evaluatedObject ? "" : "\(base.printed(atLeast: 5)).") + "@\(op.rawValue)" + (key.isEmpty ? "" : "." + Self.keyPathText(key))
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(\(collection), $\(variable), \(predicate))"
        case .subscripted(let base, let position):
            let inside = switch position {
            case .first: "FIRST"
            case .last: "LAST"
            case .size: "SIZE"
            case .index(let index): index.description
            }
            return "\(base.printed(atLeast: 5))[\(inside)]"
        case .ternary(let condition, let then, let otherwise):
            return "TERNARY(\(condition), \(then), \(otherwise))"
        case .function(let function, let arguments):
            if isNegation { return "-" + arguments[1].printed(atLeast: 4) }
            if let infix = function.infix, arguments.count == 2 {
                // `+ - * /` group to the left, `**` to the right: the other side needs parentheses at equal rank.
                let leftMinimum = function == .power ? infix.precedence + 1 : infix.precedence
                let rightMinimum = function == .power ? infix.precedence : infix.precedence + 1
                return arguments[0].printed(atLeast: leftMinimum) + " \(infix.symbol) " + arguments[1].printed(atLeast: rightMinimum)
            }
            if function == .cast, arguments.count == 2 { return "CAST(\(arguments[0]), \(arguments[1]))" }
            let list = arguments.map(\.description).joined(separator: ", ")
            return function.arity == 0 ? "\(function.rawValue)()" : "\(function.rawValue)(\(list))"
        }
    }

    /// A key path as the lexer reads it back: reserved words behind `#`, keys that are not identifiers quoted.
    static func keyPathText(_ path: [String]) -> String {
        path.map { key in
            guard Lexer.isIdentifier(key) else { return "#" + PredicateValue.quote(key) }
            return Parser.reservedWords.contains(key.uppercased()) ? "#" + key : key
        }.joined(separator: ".")
    }
}

extension PredicateValue {
    /// The value as the format language writes it; values without a literal form use `CAST`.
    public var formatLiteral: String {
        switch self {
        case .null: "NIL"
        case .bool(let value): value ? "TRUE" : "FALSE"
        case .int(let value): String(value)
        case .double(let value): value.isFinite ? "\(value)" : "CAST(\"\(value.isNaN ? "nan" : value > 0 ? "inf" : "-inf")\", \"NSNumber\")"
        case .decimal(let value): "CAST(\(Self.quote(value.description)), \"NSDecimalNumber\")"
        case .string(let value): Self.quote(value)
        case .date(let value): "CAST(\(PredicateValue.double(value.timeIntervalSinceReferenceDate).formatLiteral), \"NSDate\")"
        case .data(let value): "CAST(\(Self.quote(value.base64EncodedString())), \"Data\")"
        case .uuid(let value): "CAST(\(Self.quote(value.uuidString)), \"UUID\")"
        case .url(let value): "CAST(\(Self.quote(value.absoluteString)), \"URL\")"
        }
    }

    static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\0": result += "\\0"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += String(format: "\\u%04X", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}

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
    public var description: String {
        switch self {
        case .constant(let value): value.formatLiteral
        case .evaluatedObject: "SELF"
        case .keyPath(let path): Self.keyPathText(path)
        case .variable(let name): "$" + name
        case .member(let base, let path): "\(base).\(Self.keyPathText(path))"
        case .aggregate(let items): "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .collection(let op, let base, let key):
            (base == .evaluatedObject ? "" : "\(base).") + "@\(op.rawValue)" + (key.isEmpty ? "" : "." + Self.keyPathText(key))
        case .subquery(let collection, let variable, let predicate):
            "SUBQUERY(\(collection), $\(variable), \(predicate))"
        }
    }

    static func keyPathText(_ path: [String]) -> String {
        path.map { Parser.reservedWords.contains($0.uppercased()) ? "#" + $0 : $0 }.joined(separator: ".")
    }
}

extension PredicateValue {
    /// The value as the format language writes it; values without a literal form use `CAST`.
    public var formatLiteral: String {
        switch self {
        case .null: "NIL"
        case .bool(let value): value ? "TRUE" : "FALSE"
        case .int(let value): String(value)
        case .double(let value): value.isFinite ? "\(value)" : "CAST(\"\(value)\", \"NSNumber\")"
        case .decimal(let value): "CAST(\(Self.quote(value.description)), \"NSDecimalNumber\")"
        case .string(let value): Self.quote(value)
        case .date(let value): "CAST(\(value.timeIntervalSinceReferenceDate), \"NSDate\")"
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

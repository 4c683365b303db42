import Foundation

/// A type of a library built on the predicate language that can stand as a `%@` argument (an object ID, say).
public protocol PredicateArgument {
    /// The constant the argument stands for.
    var predicateArgumentValue: PredicateValue { get }
}

/// Turns Swift values given as format arguments into predicate constants.
enum ArgumentConversion {
    /// Looks through `Optional` layers, so `String?.none` passed as `Any?` reads as nil.
    static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            return mirror.children.first.map { unwrap($0.value) } ?? nil
        }
        return value
    }

    static func typeName(_ value: Any?) -> String {
        value.map { "\(type(of: $0))" } ?? "nil"
    }

    static func integer(_ value: Any?) -> Int64? {
        switch value {
        case let v as Int: Int64(v)
        case let v as Int8: Int64(v)
        case let v as Int16: Int64(v)
        case let v as Int32: Int64(v)
        case let v as Int64: v
        case let v as UInt: Int64(exactly: v)
        case let v as UInt8: Int64(v)
        case let v as UInt16: Int64(v)
        case let v as UInt32: Int64(v)
        case let v as UInt64: Int64(exactly: v)
        default: nil
        }
    }

    static func constant(_ value: Any?) -> PredicateValue? {
        // The common arguments by their exact type first: comparing a metatype is a load, where each failed cast
        // below walks the runtime's general conversion rules (an Int64 went through three).
        if let value {
            let type = ObjectIdentifier(Swift.type(of: value))
            if type == ObjectIdentifier(Int64.self), let v = value as? Int64 { return .int(v) }
            if type == ObjectIdentifier(Int.self), let v = value as? Int { return .int(Int64(v)) }
            if type == ObjectIdentifier(String.self), let v = value as? String { return .string(v) }
            if type == ObjectIdentifier(Double.self), let v = value as? Double { return .double(v) }
            if type == ObjectIdentifier(Bool.self), let v = value as? Bool { return .bool(v) }
        }
        // The common arguments, directly: unwrapping looks through optionals with a Mirror, which costs more than
        // the rest of a small fetch. A cast sees through `Optional.some`, so only nil and other types go on.
        switch value {
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as String: return .string(v)
        case let v as Double: return .double(v)
        default: break
        }
        guard let value = unwrap(value) else { return .null }
        if let bool = value as? Bool { return .bool(bool) }
        if let integer = integer(value) { return .int(integer) }
        switch value {
        case let v as PredicateValue: return v
        case let v as any PredicateArgument: return v.predicateArgumentValue
        case let v as String: return .string(v)
        case let v as Substring: return .string(String(v))
        case let v as Double: return .double(v)
        case let v as Float: return .double(Double(v))
        case let v as Decimal: return .decimal(v)
        case let v as Date: return .date(v)
        case let v as UUID: return .uuid(v)
        case let v as Data: return .data(v)
        case let v as URL: return .url(v)
        default: return nil
        }
    }

    /// A constant, or a literal collection for an array or set argument.
    static func expression(_ value: Any?) -> FormatExpression? {
        if let constant = constant(value) { return .constant(constant) }
        let unwrapped = unwrap(value)
        let elements: [Any]? = (unwrapped as? [Any]) ?? (unwrapped as? Set<AnyHashable>).map { Array($0) }
        guard let elements else { return nil }
        var items: [FormatExpression] = []
        for element in elements {
            guard let constant = constant(element) else { return nil }
            items.append(.constant(constant))
        }
        // Sets have no order; sort so the same set always yields the same tree.
        if unwrapped is Set<AnyHashable> { items.sort { "\($0)" < "\($1)" } }
        return .aggregate(items)
    }
}

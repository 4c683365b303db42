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
        if let value, let constant = exactConstant(value) { return constant }
        // The common types wrapped in an optional (`String?` passed as `Any?`), directly: unwrapping looks through
        // optionals with a Mirror, which costs more than the rest of a small fetch. A cast sees through
        // `Optional.some`, so only nil and other types go on.
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

    /// The common arguments, by their exact type: opening the existential hands the type over as `T`, compared
    /// with a load, where each failed cast below walks the runtime's general conversion rules (an Int64 went
    /// through three), and even a cast that succeeds runs the runtime's cast code, cold when a screen's query runs
    /// beside an import. The opening is explicit: passed to an unconstrained `T`, an `Any` would bind `T` to `Any`.
    static func exactConstant(_ value: Any) -> PredicateValue? {
        func convert<T>(_ value: T) -> PredicateValue? {
            // Each bit cast follows a check that `T` is that very type, so it reinterprets a value as its own type.
            if T.self == Int64.self { return .int(unsafeBitCast(value, to: Int64.self)) }
            if T.self == Int.self { return .int(Int64(unsafeBitCast(value, to: Int.self))) }
            if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
            if T.self == Double.self { return .double(unsafeBitCast(value, to: Double.self)) }
            if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
            return nil
        }
        return _openExistential(value, do: convert)
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

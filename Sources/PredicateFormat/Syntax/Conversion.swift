import Foundation

/// What `CAST(value, "Type")` makes of a value: at parse time for constants, when evaluating for the rest.
enum Conversion {
    /// The types a value read while evaluating can be cast to; the others take only constants.
    static let runtimeCastTypes: Set<String> = ["NSNumber", "NSString", "NSDate"]

    /// `value` as `type`; nil stays nil. Throws a message naming what cannot be converted.
    static func cast(_ value: PredicateValue, to type: String) throws(FormatPredicateError) -> PredicateValue {
        if value.isNull { return .null }
        func refuse() -> FormatPredicateError {
            .typeMismatch(expression: "CAST(\(value.formatLiteral), \"\(type)\")", expected: Self.accepted[type] ?? "a known type", found: value.kindName)
        }
        switch (type, value) {
        case ("NSNumber", .int), ("NSNumber", .double), ("NSNumber", .bool): return value
        case ("NSNumber", .decimal(let v)): return .double(NSDecimalNumber(decimal: v).doubleValue)
        case ("NSNumber", .date(let v)): return .double(v.timeIntervalSinceReferenceDate)
        case ("NSNumber", .string(let text)):
            guard let number = number(text) else { throw refuse() }
            return number
        case ("NSString", .string): return value
        case ("NSString", .int(let v)): return .string(String(v))
        case ("NSString", .double(let v)): return .string(v.isFinite ? "\(v)" : v.isNaN ? "nan" : v > 0 ? "inf" : "-inf")
        case ("NSString", .bool(let v)): return .string(v ? "1" : "0")
        case ("NSString", .decimal(let v)): return try cast(.double(NSDecimalNumber(decimal: v).doubleValue), to: type)
        case ("NSString", .uuid(let v)): return .string(v.uuidString)
        case ("NSString", .url(let v)): return .string(v.absoluteString)
        case ("NSDate", .date): return value
        case ("NSDate", .int(let v)): return .date(Date(timeIntervalSinceReferenceDate: Double(v)))
        case ("NSDate", .double(let v)): return .date(Date(timeIntervalSinceReferenceDate: v))
        case ("NSDecimalNumber", .string(let text)):
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw refuse() }
            return .decimal(decimal)
        case ("NSDecimalNumber", .int(let v)): return .decimal(Decimal(v))
        case ("NSDecimalNumber", .decimal): return value
        case ("UUID", .string(let text)):
            guard let uuid = UUID(uuidString: text) else { throw refuse() }
            return .uuid(uuid)
        case ("URL", .string(let text)):
            guard let url = URL(string: text) else { throw refuse() }
            return .url(url)
        case ("Data", .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw refuse() }
            return .data(data)
        default:
            throw refuse()
        }
    }

    private static let accepted: [String: String] = [
        "NSNumber": "a number, a numeric string or a Date",
        "NSString": "a String, number, Decimal, UUID or URL",
        "NSDate": "seconds since 2001 as a number, or a Date",
        "NSDecimalNumber": "a decimal number as a String, or an integer",
        "UUID": "a UUID string",
        "URL": "a URL string",
        "Data": "base64 text",
    ]

    /// A numeric string as an integer when it is one, else as a Double ("nan" and "inf" included).
    static func number(_ text: String) -> PredicateValue? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let integer = Int64(trimmed) { return .int(integer) }
        if let double = Double(trimmed) { return .double(double) }
        return nil
    }
}

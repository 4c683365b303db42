import Foundation

/// A constant of the predicate language: what literals and `%@` arguments become, and what key paths yield.
public enum PredicateValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)

    /// The value as a Double, when it is a number (Booleans count as 0 and 1, as NSNumber does).
    public var number: Double? {
        switch self {
        case .int(let v): Double(v)
        case .double(let v): v
        case .decimal(let v): NSDecimalNumber(decimal: v).doubleValue
        case .bool(let v): v ? 1 : 0
        default: nil
        }
    }

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Equal values: NaN equals NaN here, so a tree holding NaN equals itself and its parse (the comparison
    /// `x == NaN` is still false when evaluated).
    public static func == (a: PredicateValue, b: PredicateValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.int(let x), .int(let y)): x == y
        case (.double(let x), .double(let y)): x == y || (x.isNaN && y.isNaN)
        case (.decimal(let x), .decimal(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.date(let x), .date(let y)): x == y || (x.timeIntervalSinceReferenceDate.isNaN && y.timeIntervalSinceReferenceDate.isNaN)
        case (.data(let x), .data(let y)): x == y
        case (.uuid(let x), .uuid(let y)): x == y
        case (.url(let x), .url(let y)): x == y
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        func canonical(_ v: Double) -> UInt64 { v.isNaN ? .max : (v == 0 ? 0 : v).bitPattern }
        switch self {
        case .null: hasher.combine(0)
        case .bool(let v): hasher.combine(1); hasher.combine(v)
        case .int(let v): hasher.combine(2); hasher.combine(v)
        case .double(let v): hasher.combine(3); hasher.combine(canonical(v))
        case .decimal(let v): hasher.combine(4); hasher.combine(v)
        case .string(let v): hasher.combine(5); hasher.combine(v)
        case .date(let v): hasher.combine(6); hasher.combine(canonical(v.timeIntervalSinceReferenceDate))
        case .data(let v): hasher.combine(7); hasher.combine(v)
        case .uuid(let v): hasher.combine(8); hasher.combine(v)
        case .url(let v): hasher.combine(9); hasher.combine(v)
        }
    }

    /// The family of values that compare with one another: numbers (Booleans and decimals among them), strings,
    /// dates, data, UUIDs, URLs. Values of two families never compare: a date is not a number of seconds, and a
    /// UUID is not its string.
    public enum Family: String, Sendable, Hashable {
        case number = "a number"
        case string = "a String"
        case date = "a Date"
        case data = "Data"
        case uuid = "a UUID"
        case url = "a URL"
    }

    /// The value's family, or nil for nil.
    public var family: Family? {
        switch self {
        case .null: nil
        case .bool, .int, .double, .decimal: .number
        case .string: .string
        case .date: .date
        case .data: .data
        case .uuid: .uuid
        case .url: .url
        }
    }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "nil"
        case .bool: "Bool"
        case .int: "integer"
        case .double: "floating-point number"
        case .decimal: "Decimal"
        case .string: "String"
        case .date: "Date"
        case .data: "Data"
        case .uuid: "UUID"
        case .url: "URL"
        }
    }
}

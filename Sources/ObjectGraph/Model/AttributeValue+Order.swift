import Foundation
import PredicateFormat

extension AttributeValue {
    private var storeClass: Int {
        switch self {
        // NaN sorts with nil: a store holds it as NULL.
        case .null: 0
        case .double(let number) where number.isNaN: 0
        case .bool, .int, .double, .date, .objectID: 1
        case .string, .decimal, .uuid, .url: 2
        case .data: 3
        }
    }

    /// The value as SQLite compares it among numbers: integers exactly, dates as their seconds, references by key.
    private var storeNumber: PredicateValue? {
        switch self {
        case .int(let v): .int(v)
        case .bool(let v): .int(v ? 1 : 0)
        case .double(let v): .double(v)
        case .date(let v): .double(v.timeIntervalSinceReferenceDate)
        case .objectID(let id): .int(id.rawKey)
        default: nil
        }
    }

    /// Orders two values as an SQLite store does (NULL and NaN first, numbers compared exactly, then text by UTF-8
    /// bytes, then blobs), so in-memory sorting and store sorting agree; a total order.
    public func storeOrder(_ other: AttributeValue) -> ComparisonResult {
        if storeClass != other.storeClass { return storeClass < other.storeClass ? .orderedAscending : .orderedDescending }
        if storeClass == 0 { return .orderedSame }
        switch (self, other) {
        case (.date(let a), .date(let b)): return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        case (.int(let a), .int(let b)): return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        // A store orders references by their foreign key, the row's primary key.
        case (.objectID(let a), .objectID(let b)):
            return a.rawKey == b.rawKey ? .orderedSame : (a.rawKey < b.rawKey ? .orderedAscending : .orderedDescending)
        case (.data(let a), .data(let b)):
            return a == b ? .orderedSame : (a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending)
        default:
            if let a = storeNumber, let b = other.storeNumber {
                // Both are numbers and neither is NaN, so the exact comparison always answers.
                return (try? ValueOrder.order(a, b, [], in: "sorting")).flatMap { $0 } ?? .orderedSame
            }
            if let a = numericValue, let b = other.numericValue {
                return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
            }
            let a = Array(textForm.utf8), b = Array(other.textForm.utf8)
            return a == b ? .orderedSame : (a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending)
        }
    }

    private var textForm: String {
        switch self {
        case .string(let s): s
        case .decimal(let d): d.description
        case .uuid(let u): u.uuidString
        case .url(let u): u.absoluteString
        default: description
        }
    }
}

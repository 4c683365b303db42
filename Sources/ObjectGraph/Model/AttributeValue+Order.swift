import Foundation

extension AttributeValue {
    private var storeClass: Int {
        switch self {
        case .null: 0
        case .bool, .int, .double, .date, .objectID: 1
        case .string, .decimal, .uuid, .url: 2
        case .data: 3
        }
    }

    /// Orders two values as an SQLite store does (NULL first, numbers, then text by UTF-8 bytes, then blobs), so
    /// in-memory sorting and store sorting agree.
    public func storeOrder(_ other: AttributeValue) -> ComparisonResult {
        if storeClass != other.storeClass { return storeClass < other.storeClass ? .orderedAscending : .orderedDescending }
        switch (self, other) {
        case (.null, .null): return .orderedSame
        case (.date(let a), .date(let b)): return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        case (.int(let a), .int(let b)): return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        // A store orders references by their foreign key, the row's primary key.
        case (.objectID(let a), .objectID(let b)):
            return a.rawKey == b.rawKey ? .orderedSame : (a.rawKey < b.rawKey ? .orderedAscending : .orderedDescending)
        case (.data(let a), .data(let b)):
            return a == b ? .orderedSame : (a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending)
        default:
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

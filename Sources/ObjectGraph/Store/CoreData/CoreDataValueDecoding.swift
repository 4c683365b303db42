import Foundation

/// Core Data's SQLite encodings of attribute values, read into the values a model's attributes hold.
enum CoreDataValueDecoding {
    /// Where a value could not be read, for the error.
    struct Place {
        let table: String
        let column: String
        let key: Int64
    }

    /// `cell` as a value of `attribute`'s type: dates are seconds since 2001-01-01 (Foundation's reference date),
    /// booleans integers, UUIDs 16 bytes, URIs their text, decimals what SQLite's numeric affinity kept, binary data
    /// inline or (with external storage) a marker byte then the bytes or the name of a file beside the store.
    static func value(_ cell: ReadOnlyConnection.Cell, of attribute: AttributeDescription, at place: Place, externalData: URL, path: String) throws -> AttributeValue {
        func refuse(_ reason: String) -> ObjectGraphError {
            .storeReadFailed(path: path, reason: "\(place.table).\(place.column) of the row Z_PK \(place.key) (\(attribute.name)): \(reason)")
        }
        if cell == .null { return .null }
        switch (attribute.type, cell) {
        case (.string, .text(let text)): return .string(text)
        case (.string, .blob(let data)):
            guard let text = String(data: data, encoding: .utf8) else { throw refuse("the text is not UTF-8") }
            return .string(text)
        case (.bool, .integer(let value)): return .bool(value != 0)
        case (.int16, .integer(let value)), (.int32, .integer(let value)), (.int64, .integer(let value)): return .int(value)
        case (.int16, .real(let value)), (.int32, .real(let value)), (.int64, .real(let value)):
            guard let exact = Int64(exactly: value) else { throw refuse("\(value) is not an integer") }
            return .int(exact)
        case (.double, .real(let value)), (.float, .real(let value)): return .double(value)
        case (.double, .integer(let value)), (.float, .integer(let value)): return .double(Double(value))
        case (.decimal, .integer(let value)): return .decimal(Decimal(value))
        case (.decimal, .real(let value)): return .decimal(Decimal(string: "\(value)") ?? Decimal(value))
        case (.decimal, .text(let text)):
            guard let decimal = Decimal(string: text) else { throw refuse("'\(text)' is not a decimal number") }
            return .decimal(decimal)
        case (.date, .real(let seconds)): return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case (.date, .integer(let seconds)): return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
        case (.uuid, .blob(let data)) where data.count == 16:
            return .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
        case (.uuid, .text(let text)):
            guard let uuid = UUID(uuidString: text) else { throw refuse("'\(text)' is not a UUID") }
            return .uuid(uuid)
        case (.uri, .text(let text)):
            guard let url = URL(string: text) else { throw refuse("'\(text)' is not a URI") }
            return .url(url)
        case (.binary, .blob(let data)), (.codable, .blob(let data)):
            guard attribute.allowsExternalBinaryDataStorage else { return .data(data) }
            return .data(try externalStorage(data, folder: externalData, refuse: refuse))
        default:
            throw refuse("a \(cell.kindName) where a \(attribute.type.name) is stored")
        }
    }

    /// Bytes of an attribute that allows external storage: a first byte 1 then the bytes, or 2 then the name of a
    /// file in the store's `_EXTERNAL_DATA` folder (NUL-terminated).
    private static func externalStorage(_ data: Data, folder: URL, refuse: (String) -> ObjectGraphError) throws -> Data {
        guard let marker = data.first else { return data }
        switch marker {
        case 1: return data.dropFirst()
        case 2:
            let name = String(decoding: data.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
            let file = folder.appendingPathComponent(name)
            guard !name.isEmpty, !name.contains("/"), let bytes = FileManager.default.contents(atPath: file.path) else {
                throw refuse("its bytes are kept in \(file.path), which cannot be read")
            }
            return bytes
        default:
            throw refuse("an externally stored value starts with the byte \(marker), neither 1 (inline) nor 2 (a file)")
        }
    }
}

extension ReadOnlyConnection.Cell {
    var kindName: String {
        switch self {
        case .null: "NULL"
        case .integer: "integer"
        case .real: "real number"
        case .text: "text"
        case .blob: "blob"
        }
    }

    var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}

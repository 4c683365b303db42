import Foundation
import GRDB
import ObjectGraph
import PostgresNIO

/// Attribute values in PostgreSQL columns, exact both ways, in the forms the SQLite store uses: Booleans as 0 and
/// 1, dates as seconds since 2001, decimals as their text, UUIDs and URLs as text, data as `bytea`. Keeping the
/// forms the same lets one predicate compiler serve both stores.
enum PostgresValueCoding {
    /// The PostgreSQL type of `column` in `table`, for a statement's casts.
    static func sqlType(ofColumn column: String, in table: TableLayout) -> String {
        sqlType(table.columns.first { $0.name == column }?.sqlType ?? "")
    }

    static func sqlType(_ sqliteType: String) -> String {
        switch sqliteType {
        case "INTEGER": "BIGINT"
        case "REAL": "DOUBLE PRECISION"
        case "BLOB": "BYTEA"
        default: "TEXT"
        }
    }

    static func append(_ value: AttributeValue, to binds: inout StatementBindings) {
        switch value {
        case .null: binds.appendNull()
        case .bool(let v): binds.append(Int64(v ? 1 : 0))
        case .int(let v): binds.append(v)
        case .double(let v): binds.append(v)
        case .string(let v): binds.append(v)
        case .decimal(let v): binds.append(v.description)
        case .date(let v): binds.append(v.timeIntervalSinceReferenceDate)
        case .data(let v): binds.append(ByteBuffer(bytes: v))
        case .uuid(let v): binds.append(v.uuidString)
        case .url(let v): binds.append(v.absoluteString)
        case .objectID(let v): binds.append(v.rawKey)
        }
    }

    /// A value the predicate compiler bound.
    static func append(_ value: DatabaseValue, to binds: inout StatementBindings) {
        switch value.storage {
        case .null: binds.appendNull()
        case .int64(let v): binds.append(v)
        case .double(let v): binds.append(v)
        case .string(let v): binds.append(v)
        case .blob(let v): binds.append(ByteBuffer(bytes: v))
        }
    }

    static func binds(_ values: [DatabaseValue]) -> StatementBindings {
        var binds = StatementBindings(capacity: values.count)
        for value in values { append(value, to: &binds) }
        return binds
    }

    /// The cell's value as the attribute type keeps it.
    static func decode(_ cell: PostgresCell, as type: AttributeType) throws -> AttributeValue {
        guard cell.bytes != nil else { return .null }
        switch type {
        case .bool: return .bool(try cell.decode(Int64.self) != 0)
        case .int16, .int32, .int64: return .int(try cell.decode(Int64.self))
        case .double, .float: return .double(try cell.decode(Double.self))
        case .string: return .string(try cell.decode(String.self))
        case .decimal: return Decimal(string: try cell.decode(String.self)).map(AttributeValue.decimal) ?? .null
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try cell.decode(Double.self)))
        // Undefined is transient only: no column has it.
        case .binary, .codable, .undefined: return .data(Data(try cell.decode(ByteBuffer.self).readableBytesView))
        case .uuid: return UUID(uuidString: try cell.decode(String.self)).map(AttributeValue.uuid) ?? .null
        case .uri: return URL(string: try cell.decode(String.self)).map(AttributeValue.url) ?? .null
        }
    }

    /// A value whose attribute type is unknown (an aggregate), by the column's type.
    static func decodeUntyped(_ cell: PostgresCell) throws -> AttributeValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8: return .int(try cell.decode(Int64.self))
        case .float4, .float8: return .double(try cell.decode(Double.self))
        case .numeric:
            // An exact sum or average: an integer when it is one and fits, else a Double, as SQLite returns them.
            let number = try cell.decode(Decimal.self)
            let integer = NSDecimalNumber(decimal: number).int64Value
            if Decimal(integer) == number { return .int(integer) }
            return .double(NSDecimalNumber(decimal: number).doubleValue)
        case .bytea: return .data(Data(try cell.decode(ByteBuffer.self).readableBytesView))
        case .bool: return .bool(try cell.decode(Bool.self))
        default: return .string(try cell.decode(String.self))
        }
    }
}

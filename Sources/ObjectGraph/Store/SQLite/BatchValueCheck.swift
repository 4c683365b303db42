import GRDB

/// `og_batch_value(value, type, optional, key)`: what a batch update's computed value becomes in its column, or an
/// error that stops the statement. SQLite stores whatever an expression yields (`pages / 2` is a real, which an
/// integer column keeps as 2.5); this lets through only what the attribute's type holds, converting without loss
/// (an integral real into an integer column), so that no row is silently given a value of another type.
enum BatchValueCheck {
    /// Starts the message of every error the function raises, so the store can tell them from SQLite's own.
    static let prefix = "objectgraph batch value: "

    /// The type names the function understands, for the attribute types whose computed values it checks.
    static func typeName(_ type: AttributeType) -> String? {
        switch type {
        case .int16: "int16"
        case .int32: "int32"
        case .int64: "int64"
        case .bool: "bool"
        case .double, .float: "double"
        case .string: "string"
        case .date: "date"
        default: nil
        }
    }

    /// An SQL condition true when `value` (SQL) is stored as it is in a column of `type`, without the function.
    static func fits(_ value: String, _ type: String) -> String? {
        switch type {
        case "int64": "typeof(\(value)) = 'integer'"
        case "int32": "typeof(\(value)) = 'integer' AND (\(value)) BETWEEN \(Int32.min) AND \(Int32.max)"
        case "int16": "typeof(\(value)) = 'integer' AND (\(value)) BETWEEN \(Int16.min) AND \(Int16.max)"
        case "bool": "typeof(\(value)) = 'integer' AND (\(value)) IN (0, 1)"
        case "double", "date": "typeof(\(value)) = 'real'"
        case "string": "typeof(\(value)) = 'text'"
        default: nil
        }
    }

    static let function = DatabaseFunction("og_batch_value", argumentCount: 4, pure: true) { arguments -> (any DatabaseValueConvertible)? in
        let value = arguments[0]
        let type = String.fromDatabaseValue(arguments[1]) ?? ""
        let optional = Bool.fromDatabaseValue(arguments[2]) ?? true
        let key = String.fromDatabaseValue(arguments[3]) ?? "?"
        func refuse(_ reason: String) -> DatabaseError {
            DatabaseError(resultCode: .SQLITE_CONSTRAINT, message: prefix + "'\(key)' \(reason)")
        }
        func integer(_ int: Int64) throws -> Int64 {
            let range: ClosedRange<Int64> = switch type {
            case "int16": Int64(Int16.min)...Int64(Int16.max)
            case "int32": Int64(Int32.min)...Int64(Int32.max)
            case "bool": 0...1
            default: Int64.min...Int64.max
            }
            guard range.contains(int) else { throw refuse("takes a value of type \(type), and \(int) is out of its range") }
            return int
        }
        switch value.storage {
        case .null:
            guard optional else { throw refuse("is not optional, and its new value is nil") }
            return nil
        case .int64(let int):
            switch type {
            case "int16", "int32", "int64", "bool": return try integer(int)
            case "double": return Double(int)
            default: throw refuse("takes a value of type \(type), not the number \(int)")
            }
        case .double(let double):
            switch type {
            case "int16", "int32", "int64", "bool":
                guard double.rounded(.towardZero) == double, let int = Int64(exactly: double) else {
                    throw refuse("takes a value of type \(type), not \(double): a whole number is needed")
                }
                return try integer(int)
            case "double", "date": return double
            default: throw refuse("takes a value of type \(type), not the number \(double)")
            }
        case .string(let string):
            guard type == "string" else { throw refuse("takes a value of type \(type), not the String \"\(string.prefix(40))\"") }
            return string
        case .blob:
            throw refuse("takes a value of type \(type), not Data")
        }
    }
}

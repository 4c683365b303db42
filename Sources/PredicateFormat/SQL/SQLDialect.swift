/// The SQL a compiled predicate is written in. The two dialects share the compiler's every rule (nil semantics,
/// quantifiers, families of values); they differ in spelling, and in where the string operators run: in SQLite,
/// through the evaluator's own code registered as functions (``PredicateSQLFunctions``); in PostgreSQL, through
/// SQL functions of the same names that the PostgreSQL store creates in its database.
///
/// ```swift
/// let compiled = try SQLCompiler(schema: schema, dialect: .postgres).compile(predicate, entity: "Book")
/// // compiled.condition: (t0."pages" > $1)
/// ```
public enum SQLDialect: Sendable, Hashable {
    /// SQLite: `?1` placeholders, `IS` for equality with nil, 1 and 0 for truth.
    case sqlite
    /// PostgreSQL: `$1` placeholders, `IS NOT DISTINCT FROM`, TRUE and FALSE, strings compared in `"C"` collation
    /// (code point order, as SQLite's binary collation and the evaluator compare them).
    case postgres

    /// A table, column or index name, quoted. PostgreSQL keeps only the first 63 bytes of a name, so two model names
    /// that share those bytes would become one: there a longer name is written as ``postgresName(_:)`` shortens it.
    ///
    /// ```swift
    /// SQLDialect.postgres.quoted("Book")   // "\"Book\""
    /// ```
    public func quoted(_ identifier: String) -> String {
        switch self {
        case .sqlite: sqlQuoted(identifier)
        case .postgres: sqlQuoted(Self.postgresName(identifier))
        }
    }

    /// The longest name PostgreSQL keeps whole, in bytes of UTF-8.
    public static let postgresNameLimit = 63

    /// `name` as a PostgreSQL store writes it: unchanged up to ``postgresNameLimit`` bytes; a longer one becomes its
    /// first 50 bytes at most (cut between code points, never inside one), a tilde and twelve hexadecimal digits of a
    /// hash of the whole name (FNV-1a, so every process and platform writes the same name).
    ///
    /// ```swift
    /// SQLDialect.postgresName(String(repeating: "a", count: 70))   // 50 a's, "~", then 12 hexadecimal digits
    /// ```
    public static func postgresName(_ name: String) -> String {
        let bytes = name.utf8
        guard bytes.count > postgresNameLimit else { return name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        var prefix = ""
        var length = 0
        for scalar in name.unicodeScalars {
            let width = UTF8.width(scalar)
            guard length + width <= 50 else { break }
            prefix.unicodeScalars.append(scalar)
            length += width
        }
        let digits = String(hash & 0xFFFF_FFFF_FFFF, radix: 16)
        return prefix + "~" + String(repeating: "0", count: 12 - digits.count) + digits
    }

    /// The placeholder of the `index`-th bound value (from 1).
    public func placeholder(_ index: Int) -> String {
        switch self {
        case .sqlite: "?\(index)"
        case .postgres: "$\(index)"
        }
    }

    /// A condition that is always `value`.
    public func truth(_ value: Bool) -> String {
        switch self {
        case .sqlite: value ? "1" : "0"
        case .postgres: value ? "TRUE" : "FALSE"
        }
    }

    /// `condition`, with SQL's "unknown" (NULL) read as false.
    func known(_ condition: String) -> String {
        switch self {
        case .sqlite: "IFNULL(\(condition), 0)"
        case .postgres: "COALESCE(\(condition), FALSE)"
        }
    }

    /// Equality in which NULL equals NULL and nothing else.
    func same(_ left: String, _ right: String) -> String {
        switch self {
        case .sqlite: "\(left) IS \(right)"
        case .postgres: "\(left) IS NOT DISTINCT FROM \(right)"
        }
    }

    /// The negation of ``same(_:_:)``.
    func notSame(_ left: String, _ right: String) -> String {
        switch self {
        case .sqlite: "\(left) IS NOT \(right)"
        case .postgres: "\(left) IS DISTINCT FROM \(right)"
        }
    }

    /// A number as a floating-point value (a decimal kept as text, an integer to divide).
    public func real(_ value: String) -> String {
        switch self {
        case .sqlite: "CAST(\(value) AS REAL)"
        case .postgres: "CAST(\(value) AS DOUBLE PRECISION)"
        }
    }

    /// A string value ordered by code points: PostgreSQL's own collation may follow a locale.
    public func codePointOrdered(_ value: String) -> String {
        switch self {
        case .sqlite: value
        case .postgres: "(\(value) COLLATE \"C\")"
        }
    }

    /// A condition that is false, yet keeps `term` (and the placeholders in it) in the text.
    func never(keeping term: String) -> String {
        switch self {
        case .sqlite: "(\(term) IS NULL AND 0)"
        case .postgres: "(\(term) IS NULL AND FALSE)"
        }
    }
}

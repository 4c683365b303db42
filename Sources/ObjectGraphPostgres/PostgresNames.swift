import PredicateFormat

/// A table, column, index or schema name, quoted for PostgreSQL and shortened past the 63 bytes PostgreSQL keeps of
/// a name (see `SQLDialect.postgresName(_:)`). Every name the store writes goes through it or through
/// `SQLDialect.postgres`, so a long name is shortened the same way wherever it appears.
///
/// ```swift
/// pgQuoted("Book")   // "\"Book\""
/// ```
func pgQuoted(_ name: String) -> String { SQLDialect.postgres.quoted(name) }

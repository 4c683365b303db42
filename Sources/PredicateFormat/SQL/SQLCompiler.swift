import Foundation
import GRDB

/// The result of compiling a predicate: a WHERE condition over the root alias, the joins it needs, and the values
/// to bind. No value is ever spliced into the SQL text.
///
/// Placeholders are numbered (`?1`, `?2`, ...) from the `firstArgumentIndex` given to the compiler, so the SQL may
/// be embedded anywhere: bind ``arguments`` at those positions.
public struct CompiledPredicate: Sendable {
    /// The condition. It may be NULL where SQL's logic says "unknown" (a comparison with NULL), which WHERE treats
    /// as false, as the evaluator does; every negation inside collapses NULL to false first, so NOT and ALL agree
    /// with the evaluator too. Comparisons stay bare so that SQLite can search indexes for them.
    public var condition: String
    /// `LEFT JOIN ...` clauses for to-one key paths, to append after `FROM <table> AS <alias>`.
    public var joins: [String]
    /// The values of the numbered placeholders, from the first index on.
    public var arguments: [DatabaseValue]
    /// One SQL value expression for each key path asked for as a term (for ORDER BY, SELECT or GROUP BY).
    public var terms: [String] = []
    /// One SQL value expression for each expression asked for (dictionary results' computed values).
    public var expressions: [String] = []
    /// The family of each expression's values, where it is known: a store decodes a date's seconds as a date.
    public var expressionFamilies: [PredicateValue.Family?] = []
}

/// Compiles a ``FormatPredicate`` to SQLite SQL: key paths across to-one relationships become LEFT JOINs, to-many
/// ones with ANY, ALL, NONE, collection operators and SUBQUERY become EXISTS and scalar subqueries, and string
/// operators run through the functions ``PredicateSQLFunctions`` registers (the evaluator's own code, so both back
/// ends agree).
///
/// ```swift
/// let compiled = try SQLCompiler(schema: schema).compile(predicate, entity: "Book", alias: "t0")
/// let sql = "SELECT t0.id FROM Book AS t0 \(compiled.joins.joined(separator: " ")) WHERE \(compiled.condition)"
/// ```
public struct SQLCompiler {
    let schema: any SQLSchema
    let dialect: SQLDialect

    /// Creates a compiler over a store's schema, writing `dialect`.
    public init(schema: any SQLSchema, dialect: SQLDialect = .sqlite) {
        self.schema = schema
        self.dialect = dialect
    }

    /// Compiles `predicate`, whose key paths start at `entity`, for a query whose root table is aliased `alias`;
    /// placeholders start at `firstArgumentIndex` (pass one more than the number of `?` before the predicate).
    ///
    /// `terms` are key paths (across to-one relationships) to turn into value expressions sharing the predicate's
    /// joins: sort keys, selected properties, groupings. A key path through a to-many relationship throws.
    ///
    /// `expressions` become value expressions too. Where `aggregatingRows` is set, an aggregate function of a
    /// per-row value in one of them (`sum:(pages)`) is an SQL aggregate over the query's rows or groups, as in a
    /// dictionary result; a function of a collection (`sum:(books.pages)`) reduces the collection on each row.
    public func compile(
        _ predicate: FormatPredicate?, entity: String, alias: String = "t0", terms: [[String]] = [], expressions: [FormatExpression] = [],
        aggregatingRows: Bool = false, firstArgumentIndex: Int = 1
    ) throws(FormatPredicateError) -> CompiledPredicate {
        let compilation = Compilation(schema: schema, dialect: dialect, firstIndex: firstArgumentIndex)
        let scope = Scope(alias: alias, entity: entity, compilation: compilation)
        let condition = try predicate.map { p throws(FormatPredicateError) in try scope.predicate(p) } ?? dialect.truth(true)
        var sqlTerms: [String] = []
        for path in terms {
            switch try scope.resolve(path, fromAlias: alias, entity: entity, prefix: []) {
            case .column(let sql, let kind): sqlTerms.append(kind == .decimal ? dialect.real(sql) : sql)
            case .toOneKey(let sql, _, _): sqlTerms.append(sql)
            case .toMany(_, let owner, let key, _, _, _):
                throw .unsupported("the key path \(path.joined(separator: ".")) crosses the to-many relationship '\(key)' of \(owner)")
            }
        }
        var expressionTerms: [SQLTerm] = []
        scope.aggregatesRows = aggregatingRows
        for expression in expressions { expressionTerms.append(try scope.term(expression)) }
        scope.aggregatesRows = false
        if let text = compilation.textWithNUL {
            // SQLite's text functions, and GRDB's reading of text, end a string at its first NUL: the comparison
            // would silently test a shorter string ("a\0b" CONTAINS reads as CONTAINS "a").
            throw .evaluation("the string constant \(PredicateValue.string(text)) holds a NUL character, which \(dialect == .sqlite ? "SQLite" : "PostgreSQL") cannot compare; remove it")
        }
        return CompiledPredicate(
            condition: condition, joins: scope.joins, arguments: compilation.arguments, terms: sqlTerms,
            expressions: expressionTerms.map(\.sql), expressionFamilies: expressionTerms.map(\.family))
    }
}

/// An SQL identifier in double quotes, inner quotes doubled.
package func sqlQuoted(_ identifier: String) -> String {
    // Model names rarely hold a quote; skipping Foundation's replacement keeps building SQL cheap.
    guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
    return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// State shared by every SELECT level of one compilation.
final class Compilation {
    let schema: any SQLSchema
    let dialect: SQLDialect
    let firstIndex: Int
    var aliasCounter = 0
    var arguments: [DatabaseValue] = []

    init(schema: any SQLSchema, dialect: SQLDialect, firstIndex: Int) {
        self.schema = schema
        self.dialect = dialect
        self.firstIndex = firstIndex
    }

    func newAlias() -> String {
        aliasCounter += 1
        return "t\(aliasCounter)"
    }

    /// The first string constant holding a NUL character, which compiling refuses.
    var textWithNUL: String?

    func bind(_ value: PredicateValue) -> String {
        if textWithNUL == nil, case .string(let text) = value, text.utf8.contains(0) { textWithNUL = text }
        arguments.append(PredicateSQLValues.databaseValue(value))
        return dialect.placeholder(firstIndex + arguments.count - 1)
    }
}

/// A term of SQL that yields one value.
struct SQLTerm {
    var sql: String
    /// What a key path points at, when it is a relationship key rather than a value.
    var relationship: (entity: String, key: String)?
    /// The family of the values the term yields, where it is known (not for nil or a relationship).
    var family: PredicateValue.Family?
    /// Whether the term is a NaN constant: SQLite binds NaN as NULL, so comparisons with one are decided here.
    var isNaN = false
    /// Whether the term is a bound constant other than nil: equality with it may be written `=`, which PostgreSQL
    /// searches indexes for (`IS NOT DISTINCT FROM` it cannot).
    var isValue = false

    init(sql: String, relationship: (entity: String, key: String)? = nil, family: PredicateValue.Family? = nil, isNaN: Bool = false, isValue: Bool = false) {
        (self.sql, self.relationship, self.family, self.isNaN, self.isValue) = (sql, relationship, family, isNaN, isValue)
    }
}

extension SQLValueKind {
    /// The family of the values a column of this kind holds.
    var family: PredicateValue.Family {
        switch self {
        case .integer, .real, .decimal, .bool: .number
        case .text: .string
        case .date: .date
        case .blob: .data
        case .uuid: .uuid
        case .url: .url
        }
    }
}

/// What a key path resolves to inside one SELECT level.
enum ResolvedPath {
    case column(String, SQLValueKind)
    case toOneKey(String, owner: String, key: String)
    case toMany(ownerAlias: String, owner: String, key: String, destination: String, link: SQLToManyLink, rest: [String])
}

/// One SELECT level: its root alias, the joins it needs, and the variables bound by enclosing SUBQUERYs.
final class Scope {
    let alias: String
    let entity: String
    let compilation: Compilation
    var joins: [String] = []
    var joinAliases: [String: (alias: String, entity: String)] = [:]
    var variables: [String: (alias: String, entity: String)]
    /// Values a comparison over a collection's rows reads by a name of its own (the rows' `v` column).
    var rowValues: [String: SQLTerm] = [:]
    /// Whether an aggregate function of a per-row value reduces the query's rows (dictionary results).
    var aggregatesRows = false

    init(alias: String, entity: String, compilation: Compilation, variables: [String: (alias: String, entity: String)] = [:]) {
        self.alias = alias
        self.entity = entity
        self.compilation = compilation
        self.variables = variables
    }

    var schema: any SQLSchema { compilation.schema }
    var dialect: SQLDialect { compilation.dialect }

    // MARK: Predicates

    func predicate(_ predicate: FormatPredicate) throws(FormatPredicateError) -> String {
        switch predicate {
        case .constant(let value): return dialect.truth(value)
        case .not(let inner): return "(NOT \(dialect.known(try self.predicate(inner))))"
        case .and(let parts):
            var terms: [String] = []
            for part in parts { terms.append(try self.predicate(part)) }
            return "(" + terms.joined(separator: " AND ") + ")"
        case .or(let parts):
            var terms: [String] = []
            for part in parts { terms.append(try self.predicate(part)) }
            return "(" + terms.joined(separator: " OR ") + ")"
        case .comparison(let comparison):
            return try self.comparison(comparison)
        }
    }

    func comparison(_ comparison: Comparison) throws(FormatPredicateError) -> String {
        if let path = try pathOf(comparison.left), case .toMany(let ownerAlias, let owner, let key, let destination, let link, let rest) = path {
            if rest.isEmpty {
                throw .unsupported("'\(key)' of \(owner) is a to-many relationship; compare one of its keys (\(key).<key>) or use @count")
            }
            var inner = comparison
            inner.left = .keyPath(rest)
            inner.modifier = .direct
            // Without a modifier, CONTAINS on a collection asks for membership; with one, it tests each element.
            if comparison.op == .contains && comparison.modifier == .direct { inner.op = .equal }
            let quantifier = comparison.modifier == .direct ? .any : comparison.modifier
            return try exists(ownerAlias: ownerAlias, owner: owner, key: key, destination: destination, link: link, quantifier: quantifier) { sub throws(FormatPredicateError) in
                try sub.scalarComparison(inner, rightScope: self)
            }
        }
        if comparison.op == .in, let path = try pathOf(comparison.right),
           case .toMany(let ownerAlias, let owner, let key, let destination, let link, let rest) = path {
            guard !rest.isEmpty else {
                throw .unsupported("IN \(key): compare with a key of the \(destination) objects (\(key).<key>)")
            }
            let left = try term(comparison.left)
            return try exists(ownerAlias: ownerAlias, owner: owner, key: key, destination: destination, link: link, quantifier: .any) { sub throws(FormatPredicateError) in
                let right = try sub.term(.keyPath(rest))
                return equality(left.sql, right.sql, comparison.options)
            }
        }
        return try scalarComparison(comparison, rightScope: self)
    }

    /// `EXISTS` over the rows of a to-many relationship, with `condition` built inside the subquery's scope.
    func exists(
        ownerAlias: String, owner: String, key: String, destination: String, link: SQLToManyLink, quantifier: Comparison.Modifier,
        condition: (Scope) throws(FormatPredicateError) -> String
    ) throws(FormatPredicateError) -> String {
        let (from, linkCondition, sub) = try relationshipRows(ownerAlias: ownerAlias, owner: owner, destination: destination, link: link)
        let inner = try condition(sub)
        return quantified(quantifier, from: ([from] + sub.joins).joined(separator: " "), link: linkCondition, condition: inner)
    }

    /// Whether any, all or none of the rows `from` selects (those `link` keeps) meet `condition`.
    func quantified(_ quantifier: Comparison.Modifier, from: String, link: String?, condition: String) -> String {
        let linked = link.map { "\($0) AND " } ?? ""
        switch quantifier {
        case .all: return "(NOT EXISTS (SELECT 1 FROM \(from) WHERE \(linked)NOT \(dialect.known(condition))))"
        case .none: return "(NOT EXISTS (SELECT 1 FROM \(from) WHERE \(linked)\(condition)))"
        default: return "(EXISTS (SELECT 1 FROM \(from) WHERE \(linked)\(condition)))"
        }
    }

    /// The FROM clause and link condition that select the destination rows of one owner's to-many relationship.
    func relationshipRows(ownerAlias: String, owner: String, destination: String, link: SQLToManyLink) throws(FormatPredicateError) -> (String, String, Scope) {
        let (from, condition, sub, _) = try orderedRelationshipRows(ownerAlias: ownerAlias, owner: owner, destination: destination, link: link)
        return (from, condition, sub)
    }

    /// ``relationshipRows(ownerAlias:owner:destination:link:)`` with the term that orders an ordered relationship's
    /// rows, nil for an unordered one.
    func orderedRelationshipRows(
        ownerAlias: String, owner: String, destination: String, link: SQLToManyLink
    ) throws(FormatPredicateError) -> (String, String, Scope, String?) {
        let ownerTable = try schema.table(forEntity: owner)
        let table = try schema.table(forEntity: destination)
        let rowAlias = compilation.newAlias()
        var from = "\(dialect.quoted(table.name)) AS \(rowAlias)"
        var conditions: [String] = []
        var order: String?
        switch link {
        case .inverseForeignKey(let column, let orderColumn):
            conditions.append("\(rowAlias).\(dialect.quoted(column)) = \(ownerAlias).\(dialect.quoted(ownerTable.primaryKey))")
            order = orderColumn.map { "\(rowAlias).\(dialect.quoted($0))" }
        case .joinTable(let joinTable, let ownerColumn, let destinationColumn, let orderColumn):
            let joinAlias = compilation.newAlias()
            order = orderColumn.map { "\(joinAlias).\(dialect.quoted($0))" }
            from += " JOIN \(dialect.quoted(joinTable)) AS \(joinAlias) ON \(joinAlias).\(dialect.quoted(destinationColumn)) = \(rowAlias).\(dialect.quoted(table.primaryKey))"
            conditions.append("\(joinAlias).\(dialect.quoted(ownerColumn)) = \(ownerAlias).\(dialect.quoted(ownerTable.primaryKey))")
        }
        if let column = table.entityColumn {
            let marks = table.entityNames.map { compilation.bind(.string($0)) }.joined(separator: ", ")
            conditions.append("\(rowAlias).\(dialect.quoted(column)) IN (\(marks))")
        }
        let sub = Scope(alias: rowAlias, entity: destination, compilation: compilation, variables: variables)
        sub.rowValues = rowValues
        return (from, conditions.joined(separator: " AND "), sub, order)
    }

    // MARK: Scalar comparisons

    static func fold(_ sql: String, _ options: Comparison.Options) -> String {
        options.isEmpty ? sql : "og_fold(\(sql), \(options.rawValue))"
    }

    func equality(_ left: String, _ right: String, _ options: Comparison.Options) -> String {
        "(\(dialect.same(Self.fold(left, options), Self.fold(right, options))))"
    }

    /// An order comparison (`<`, `>=`…), strings by code point in every dialect.
    func ordered(_ left: SQLTerm, _ op: String, _ right: SQLTerm, _ options: Comparison.Options) -> String {
        let isString = left.family == .string || right.family == .string
        let (a, b) = (Self.fold(left.sql, options), Self.fold(right.sql, options))
        return isString ? "(\(dialect.codePointOrdered(a)) \(op) \(dialect.codePointOrdered(b)))" : "(\(a) \(op) \(b))"
    }

    /// Values of two families never compare (a date is not its seconds, a UUID not its text); SQLite would
    /// compare them, so the compiler refuses them as the evaluator does.
    static func checkFamilies(_ left: SQLTerm, _ right: SQLTerm, _ comparison: Comparison) throws(FormatPredicateError) {
        if let a = left.family, let b = right.family, a != b {
            throw .typeMismatch(expression: "\(comparison)", expected: "values of one kind (\(a.rawValue) on the left)", found: "\(b.rawValue) (\(comparison.right))")
        }
    }

    /// Equality, decided here where either side is a NaN constant (which SQLite holds as NULL): never equal.
    func equalityTerm(_ left: SQLTerm, _ right: SQLTerm, _ options: Comparison.Options) -> String {
        // Both sides stay in the text even when the answer is known: their placeholders are bound.
        if left.isNaN || right.isNaN { return "(\(dialect.same(left.sql, right.sql)) AND \(dialect.truth(false)))" }
        return equality(left.sql, right.sql, options)
    }

    /// ``equalityTerm(_:_:_:)`` where "unknown" may stand for false (the condition is never negated bare: every
    /// negation reads it through ``SQLDialect/known(_:)``): with a value on one side, PostgreSQL's `=`, which can
    /// search an index, answers as `IS NOT DISTINCT FROM` does except for unknown in place of false.
    func matchTerm(_ left: SQLTerm, _ right: SQLTerm, _ options: Comparison.Options) -> String {
        guard dialect == .postgres, options.isEmpty, !left.isNaN, !right.isNaN, left.isValue || right.isValue else {
            return equalityTerm(left, right, options)
        }
        return "(\(left.sql) = \(right.sql))"
    }

    func scalarComparison(_ comparison: Comparison, rightScope: Scope) throws(FormatPredicateError) -> String {
        if let rows = try collectionRows(comparison.left) {
            return try rowsComparison(rows, comparison, rightScope: rightScope)
        }
        let left = try term(comparison.left)
        let options = comparison.options
        if let relationship = left.relationship {
            return try relationshipComparison(left.sql, relationship, comparison)
        }
        switch comparison.op {
        case .in:
            switch comparison.right {
            case .aggregate(let items):
                // The left side stays in the text even when nothing can match: its placeholders are bound.
                guard !items.isEmpty else { return dialect.never(keeping: left.sql) }
                var terms: [String] = []
                for item in items {
                    let right = try rightScope.term(item)
                    try Self.checkFamilies(left, right, comparison)
                    terms.append(matchTerm(left, right, options))
                }
                return "(" + terms.joined(separator: " OR ") + ")"
            case .constant(.string):
                let right = try rightScope.term(comparison.right)
                return "og_contains(\(right.sql), \(left.sql), \(options.rawValue))"
            case .constant(.null):
                return dialect.never(keeping: left.sql)
            default:
                if let rows = try rightScope.collectionRows(comparison.right) {
                    let alias = compilation.newAlias()
                    let member = SQLTerm(sql: "\(alias).v", family: rows.family)
                    try Self.checkFamilies(left, member, comparison)
                    return quantified(.any, from: "(\(rows.select)) AS \(alias)", link: nil, condition: equalityTerm(left, member, options))
                }
                throw .unsupported("IN needs a collection, a string or a to-many key path on its right side, not \(comparison.right)")
            }
        case .between:
            guard case .aggregate(let bounds) = comparison.right, bounds.count == 2 else {
                throw .unsupported("BETWEEN needs a collection of exactly two values, not \(comparison.right)")
            }
            let low = try rightScope.term(bounds[0]), high = try rightScope.term(bounds[1])
            try Self.checkFamilies(left, low, comparison)
            try Self.checkFamilies(left, high, comparison)
            return "(\(ordered(left, ">=", low, options)) AND \(ordered(left, "<=", high, options)))"
        default:
            break
        }
        let right = try rightScope.term(comparison.right)
        if right.relationship != nil {
            throw .unsupported("the relationship \(comparison.right) can only be compared with nil")
        }
        switch comparison.op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: try Self.checkFamilies(left, right, comparison)
        default: break
        }
        switch comparison.op {
        case .equal: return matchTerm(left, right, options)
        case .notEqual: return "(NOT \(equalityTerm(left, right, options)))"
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            return ordered(left, comparison.op.rawValue, right, options)
        case .beginsWith: return "og_beginswith(\(left.sql), \(right.sql), \(options.rawValue))"
        case .endsWith: return "og_endswith(\(left.sql), \(right.sql), \(options.rawValue))"
        case .contains: return "og_contains(\(left.sql), \(right.sql), \(options.rawValue))"
        case .like: return "og_like(\(left.sql), \(right.sql), \(options.rawValue))"
        case .matches: return "og_matches(\(left.sql), \(right.sql), \(options.rawValue))"
        case .in, .between: return dialect.truth(false)
        }
    }

    /// A comparison whose left side is a collection expression that is not a to-many key path (a literal
    /// collection, `@distinctUnionOfObjects`, `mode:`): each of its values is compared, quantified as for a to-many.
    func rowsComparison(_ rows: CollectionRows, _ comparison: Comparison, rightScope: Scope) throws(FormatPredicateError) -> String {
        let alias = compilation.newAlias()
        // The row's value is read by a name no parse yields; key paths on the right still start at the root.
        let name = "\u{0}" + alias
        rowValues[name] = SQLTerm(sql: "\(alias).v", family: rows.family)
        defer { rowValues[name] = nil }
        var inner = comparison
        inner.left = .variable(name)
        inner.modifier = .direct
        if comparison.op == .contains && comparison.modifier == .direct { inner.op = .equal }
        let condition = try scalarComparison(inner, rightScope: rightScope)
        return quantified(comparison.modifier, from: "(\(rows.select)) AS \(alias)", link: nil, condition: condition)
    }

    /// A to-one relationship compares with nil, or with a primary key (an integer).
    func relationshipComparison(_ sql: String, _ relationship: (entity: String, key: String), _ comparison: Comparison) throws(FormatPredicateError) -> String {
        let described = "the relationship '\(relationship.key)' of \(relationship.entity)"
        guard case .constant(let value) = comparison.right else {
            throw .unsupported("\(described) can only be compared with nil or an object's key, not \(comparison.right)")
        }
        switch (comparison.op, value) {
        case (.equal, .int) where dialect == .postgres: return "(\(sql) = \(compilation.bind(value)))"
        case (.equal, .null), (.equal, .int): return "(\(dialect.same(sql, compilation.bind(value))))"
        case (.notEqual, .null), (.notEqual, .int): return "(\(dialect.notSame(sql, compilation.bind(value))))"
        default:
            throw .unsupported("\(described) cannot be compared with a \(value.kindName) using \(comparison.op.rawValue)")
        }
    }

    // MARK: Terms

    /// The path an expression walks, when it is a key path (from the root or from a SUBQUERY variable).
    func pathOf(_ expression: FormatExpression) throws(FormatPredicateError) -> ResolvedPath? {
        switch expression {
        case .keyPath(let path): return try resolve(path, fromAlias: alias, entity: entity, prefix: [])
        case .member(.variable(let name), let path):
            guard let bound = variables[name] else { throw .unboundVariable(name) }
            return try resolve(path, fromAlias: bound.alias, entity: bound.entity, prefix: ["$" + name])
        default: return nil
        }
    }

    func resolve(_ path: [String], fromAlias: String, entity: String, prefix: [String]) throws(FormatPredicateError) -> ResolvedPath {
        var currentAlias = fromAlias
        var currentEntity = entity
        for (index, key) in path.enumerated() {
            let isLast = index == path.count - 1
            switch try schema.property(key, ofEntity: currentEntity) {
            case .attribute(let column, let kind):
                guard isLast else {
                    throw .evaluation("'\(key)' of \(currentEntity) is an attribute; it has no key '\(path[index + 1])'")
                }
                return .column("\(currentAlias).\(dialect.quoted(column))", kind)
            case .toOne(let column, let destination):
                if isLast { return .toOneKey("\(currentAlias).\(dialect.quoted(column))", owner: currentEntity, key: key) }
                let joinKey = (prefix + Array(path[...index])).joined(separator: ".")
                if let existing = joinAliases[joinKey] {
                    currentAlias = existing.alias
                } else {
                    let table = try schema.table(forEntity: destination)
                    let joinAlias = compilation.newAlias()
                    var join = "LEFT JOIN \(dialect.quoted(table.name)) AS \(joinAlias) ON \(joinAlias).\(dialect.quoted(table.primaryKey)) = \(currentAlias).\(dialect.quoted(column))"
                    if let entityColumn = table.entityColumn {
                        join += " AND \(joinAlias).\(dialect.quoted(entityColumn)) IN (\(table.entityNames.map { compilation.bind(.string($0)) }.joined(separator: ", ")))"
                    }
                    joins.append(join)
                    joinAliases[joinKey] = (joinAlias, destination)
                    currentAlias = joinAlias
                }
                currentEntity = destination
            case .toMany(let destination, let link):
                return .toMany(ownerAlias: currentAlias, owner: currentEntity, key: key, destination: destination, link: link, rest: Array(path[(index + 1)...]))
            }
        }
        throw .evaluation("an empty key path")
    }

    func term(_ expression: FormatExpression) throws(FormatPredicateError) -> SQLTerm {
        switch expression {
        case .constant(let value):
            if case .double(let number) = value, number.isNaN { return SQLTerm(sql: compilation.bind(.null), family: .number, isNaN: true) }
            return SQLTerm(sql: compilation.bind(value), family: value.family, isValue: value != .null)
        case .keyPath, .member(.variable, _):
            if case .member(.variable(let name), let path) = expression, let row = rowValues[name] {
                throw .unsupported("$\(name) stands for a value of \(row.sql); it has no key \(path.joined(separator: "."))")
            }
            switch try pathOf(expression)! {
            case .column(let sql, let kind):
                return SQLTerm(sql: kind == .decimal ? dialect.real(sql) : sql, family: kind.family)
            case .toOneKey(let sql, let owner, let key):
                return SQLTerm(sql: sql, relationship: (owner, key))
            case .toMany(_, let owner, let key, _, _, _):
                throw .unsupported("'\(key)' of \(owner) is a to-many relationship; use ANY, ALL, NONE, IN or a collection operator")
            }
        case .collection(.distinctUnionOfObjects, _, _):
            throw .unsupported("\(expression) yields a collection; use it with IN, ANY, ALL, NONE, @count or an aggregate function")
        case .collection(let op, let base, let key):
            switch base {
            case .keyPath, .member(.variable, _), .subquery: return try aggregate(op, base, key)
            default:
                // A collection that is not a relationship (`books.@distinctUnionOfObjects.genre.@count`): reduced
                // as the aggregate function of the operator would reduce it.
                guard key.isEmpty, let function = Aggregation.function(for: op) else {
                    throw .unsupported("\(expression): only @count, @sum, @avg, @min and @max without a key can follow \(base)")
                }
                return try functionTerm(function, [base], expression)
            }
        case .variable(let name):
            if let row = rowValues[name] { return row }
            throw variables[name] == nil ? .unboundVariable(name) : .unsupported("$\(name) alone stands for an object; compare one of its keys ($\(name).<key>)")
        case .evaluatedObject:
            throw .unsupported("SELF stands for an object; compare one of its keys instead")
        case .aggregate:
            throw .unsupported("a literal collection can only stand on the right of IN or BETWEEN, or in an aggregate function")
        case .subquery:
            throw .unsupported("SUBQUERY yields a collection; follow it with @count")
        case .member(.subscripted(.keyPath(let path), let position), let keys) where position != .size:
            // `chapters[FIRST].heading` is the first of `chapters.heading`, in the relationship's order.
            return try subscriptTerm(.keyPath(path + keys), position, expression)
        case .member(.subscripted(.member(.variable(let name), let path), let position), let keys) where position != .size:
            return try subscriptTerm(.member(.variable(name), path + keys), position, expression)
        case .member(let base, _):
            throw .unsupported("keys of \(base) cannot be read in SQL")
        case .function(let function, let arguments):
            return try functionTerm(function, arguments, expression)
        case .subscripted(let base, let position):
            return try subscriptTerm(base, position, expression)
        case .ternary(let condition, let then, let otherwise):
            let test = try predicate(condition)
            let a = try term(then), b = try term(otherwise)
            return SQLTerm(sql: "(CASE WHEN \(dialect.known(test)) THEN \(a.sql) ELSE \(b.sql) END)",
                           family: try Self.commonFamily(a, b, in: expression))
        }
    }

    /// A scalar subquery for `@count`, `@sum`, `@avg`, `@min`, `@max` over a to-many key path or a SUBQUERY.
    func aggregate(_ op: CollectionOperator, _ base: FormatExpression, _ key: [String]) throws(FormatPredicateError) -> SQLTerm {
        var subqueryPredicate: (variable: String, predicate: FormatPredicate)?
        var collection = base
        if case .subquery(let inner, let variable, let predicate) = base {
            collection = inner
            subqueryPredicate = (variable, predicate)
        }
        guard let path = try pathOf(collection),
              case .toMany(let ownerAlias, let owner, let relationship, let destination, let link, let rest) = path, rest.isEmpty else {
            throw .unsupported("@\(op.rawValue) needs a to-many key path, not \(collection)")
        }
        let (from, linkCondition, sub) = try relationshipRows(ownerAlias: ownerAlias, owner: owner, destination: destination, link: link)
        var conditions = [linkCondition]
        if let subqueryPredicate {
            sub.variables[subqueryPredicate.variable] = (sub.alias, destination)
            conditions.append(try sub.predicate(subqueryPredicate.predicate))
        }
        let value: String
        var family = PredicateValue.Family.number
        if op == .count {
            guard key.isEmpty else { throw .unsupported("@count takes no key") }
            value = "COUNT(*)"
        } else {
            guard !key.isEmpty else { throw .unsupported("@\(op.rawValue) of \(relationship) needs a key: \(relationship).@\(op.rawValue).<key>") }
            guard case .column(let column, let kind) = try sub.resolve(key, fromAlias: sub.alias, entity: destination, prefix: []) else {
                throw .unsupported("@\(op.rawValue).\(key.joined(separator: ".")) must name an attribute")
            }
            let operand = SQLTerm(sql: kind == .decimal ? dialect.real(column) : column, family: kind.family)
            let reduced = try reduction(Aggregation.function(for: op)!, of: operand, in: "@\(op.rawValue).\(key.joined(separator: "."))")
            (value, family) = (reduced.sql, reduced.family ?? .number)
        }
        let fromClause = ([from] + sub.joins).joined(separator: " ")
        return SQLTerm(sql: "(SELECT \(value) FROM \(fromClause) WHERE \(conditions.joined(separator: " AND ")))", family: family)
    }
}

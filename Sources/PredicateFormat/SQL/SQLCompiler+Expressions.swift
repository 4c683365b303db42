/// Functions, subscripts and collections in SQL: arithmetic SQLite computes as the evaluator does runs on its own
/// operators; everything else calls the evaluator's code through `og_function` and the `og_` aggregates.
extension Scope {
    /// The rows of a collection expression, each value in a column `v`: a literal collection, a to-many key path,
    /// `@distinctUnionOfObjects`, `mode:`. Nil when the expression is not a collection.
    struct CollectionRows {
        var select: String
        var family: PredicateValue.Family?
        /// The rows are objects (their keys), which only `count:` and `[SIZE]` can use.
        var holdsObjects = false
        /// For an ordered relationship's rows: the same rows with their position in a column `o`.
        var orderedSelect: String?
    }

    func collectionRows(_ expression: FormatExpression) throws(FormatPredicateError) -> CollectionRows? {
        switch expression {
        case .aggregate(let items):
            guard !items.isEmpty else { return CollectionRows(select: "SELECT NULL AS v WHERE \(dialect.truth(false))", family: nil) }
            var terms: [SQLTerm] = []
            for item in items { terms.append(try term(item)) }
            var family: PredicateValue.Family?
            for item in terms {
                if let known = item.family {
                    if let family, family != known {
                        throw .typeMismatch(expression: "\(expression)", expected: "values of one kind (\(family.rawValue) first)", found: known.rawValue)
                    }
                    family = known
                }
            }
            return CollectionRows(select: terms.map { "SELECT \($0.sql) AS v" }.joined(separator: " UNION ALL "), family: family)
        case .keyPath, .member(.variable, _):
            if case .member(.variable(let name), _) = expression, rowValues[name] != nil { return nil }
            guard let path = try pathOf(expression), case .toMany(let ownerAlias, let owner, let key, let destination, let link, let rest) = path else {
                return nil
            }
            let (from, linkCondition, sub, order) = try orderedRelationshipRows(ownerAlias: ownerAlias, owner: owner, destination: destination, link: link)
            let value: SQLTerm
            var holdsObjects = false
            if rest.isEmpty {
                value = SQLTerm(sql: "\(sub.alias).\(dialect.quoted(try schema.table(forEntity: destination).primaryKey))")
                holdsObjects = true
            } else {
                guard case .column(let column, let kind) = try sub.resolve(rest, fromAlias: sub.alias, entity: destination, prefix: []) else {
                    throw .unsupported("\(expression) goes on through another relationship after the to-many '\(key)' of \(owner); use SUBQUERY")
                }
                value = SQLTerm(sql: kind == .decimal ? dialect.real(column) : column, family: kind.family)
            }
            let fromClause = ([from] + sub.joins).joined(separator: " ")
            return CollectionRows(
                select: "SELECT \(value.sql) AS v FROM \(fromClause) WHERE \(linkCondition)", family: value.family, holdsObjects: holdsObjects,
                orderedSelect: order.map { "SELECT \(value.sql) AS v, \($0) AS o FROM \(fromClause) WHERE \(linkCondition)" })
        case .collection(.distinctUnionOfObjects, let base, let key):
            let path: FormatExpression
            switch base {
            case .keyPath(let basePath): path = .keyPath(basePath + key)
            case .member(.variable(let name), let basePath): path = .member(.variable(name), basePath + key)
            default: throw .unsupported("@distinctUnionOfObjects needs a to-many key path before it, not \(base)")
            }
            guard let rows = try collectionRows(path) else {
                throw .unsupported("@distinctUnionOfObjects needs a to-many key path before it, not \(base)")
            }
            let alias = compilation.newAlias()
            return CollectionRows(select: "SELECT DISTINCT \(alias).v AS v FROM (\(rows.select)) AS \(alias) WHERE \(alias).v IS NOT NULL", family: rows.family)
        case .function(.mode, let arguments):
            let rows = try aggregateRows(.mode, arguments[0], expression)
            let (a, b, c) = (compilation.newAlias(), compilation.newAlias(), compilation.newAlias())
            let counted = "SELECT \(a).v AS v, COUNT(*) AS n FROM (\(rows.select)) AS \(a) WHERE \(a).v IS NOT NULL GROUP BY \(a).v"
            // The same text twice binds the same numbered placeholders twice, which SQLite allows.
            return CollectionRows(
                select: "SELECT \(b).v AS v FROM (\(counted)) AS \(b) WHERE \(b).n = (SELECT MAX(\(c).n) FROM (\(counted)) AS \(c))",
                family: rows.family)
        default:
            return nil
        }
    }

    /// The rows an aggregate function reduces, refused where they are not values it can reduce.
    private func aggregateRows(_ function: ExpressionFunction, _ argument: FormatExpression, _ expression: FormatExpression) throws(FormatPredicateError) -> CollectionRows {
        guard let rows = try collectionRows(argument) else {
            throw .typeMismatch(expression: "\(expression)", expected: "a collection", found: "the single value \(argument)")
        }
        if rows.holdsObjects && function != .count {
            throw .typeMismatch(expression: "\(expression)", expected: "values; add the key of the objects' values to aggregate", found: "objects")
        }
        return rows
    }

    func functionTerm(_ function: ExpressionFunction, _ arguments: [FormatExpression], _ expression: FormatExpression) throws(FormatPredicateError) -> SQLTerm {
        if function.isAggregate {
            if function == .mode {
                throw .unsupported("\(expression) yields a collection; use it with IN, ANY, ALL, NONE or an aggregate function")
            }
            if function == .count, case .subquery = arguments[0] { return try aggregate(.count, arguments[0], []) }
            if aggregatesRows, try collectionRows(arguments[0]) == nil {
                return try rowsAggregate(function, arguments[0], expression)
            }
            let rows = try aggregateRows(function, arguments[0], expression)
            let alias = compilation.newAlias()
            let value = function == .count ? SQLTerm(sql: "COUNT(*)", family: .number)
                : try reduction(function, of: SQLTerm(sql: "\(alias).v", family: rows.family ?? .number), in: "\(expression)")
            return SQLTerm(sql: "(SELECT \(value.sql) FROM (\(rows.select)) AS \(alias))", family: value.family)
        }
        if function == .cast {
            guard case .constant(.string(let type)) = arguments[1] else { throw .unsupported("CAST needs a type name string") }
            return try castTerm(try term(arguments[0]), to: type, expression)
        }
        var terms: [SQLTerm] = []
        for argument in arguments {
            let argumentTerm = try term(argument)
            if argumentTerm.relationship != nil {
                throw .typeMismatch(expression: "\(expression)", expected: "values", found: "the relationship \(argument)")
            }
            terms.append(argumentTerm)
        }
        func require(_ family: PredicateValue.Family, _ index: Int) throws(FormatPredicateError) {
            if let found = terms[index].family, found != family {
                throw .typeMismatch(expression: "\(expression)", expected: family.rawValue, found: "\(found.rawValue) (\(arguments[index]))")
            }
        }
        switch function {
        case .add, .subtract, .multiply:
            let family = try arithmeticFamily(function, terms, expression)
            let symbol = function == .add ? "+" : function == .subtract ? "-" : "*"
            return SQLTerm(sql: "(\(terms[0].sql) \(symbol) \(terms[1].sql))", family: family)
        case .divide:
            try require(.number, 0)
            try require(.number, 1)
            // SQLite divides by zero into NULL; PostgreSQL would fail the whole query.
            let divisor = dialect == .postgres ? "NULLIF(\(terms[1].sql), 0)" : terms[1].sql
            return SQLTerm(sql: "(\(dialect.real(terms[0].sql)) / \(divisor))", family: .number)
        case .now, .random, .randomBelow:
            if function == .randomBelow { try require(.number, 0) }
            if dialect == .postgres {
                // Dates are seconds since 2001, as the store keeps them.
                switch function {
                case .now: return SQLTerm(sql: "(EXTRACT(EPOCH FROM clock_timestamp())::DOUBLE PRECISION - 978307200)", family: .date)
                case .random: return SQLTerm(sql: "random()", family: .number)
                default: return SQLTerm(sql: "floor(random() * \(terms[0].sql))", family: .number)
                }
            }
            return SQLTerm(sql: "og_volatile(\(([compilation.bind(.string(function.rawValue))] + terms.map(\.sql)).joined(separator: ", ")))",
                           family: function == .now ? .date : .number)
        case .uppercase, .lowercase:
            try require(.string, 0)
            return try callTerm(function, terms, family: .string)
        default:
            for index in terms.indices { try require(.number, index) }
            return try callTerm(function, terms, family: .number)
        }
    }

    /// An aggregate function of a per-row value over the query's rows or groups.
    private func rowsAggregate(_ function: ExpressionFunction, _ argument: FormatExpression, _ expression: FormatExpression) throws(FormatPredicateError) -> SQLTerm {
        // The argument is a value of each row, not an aggregate of its own rows.
        aggregatesRows = false
        defer { aggregatesRows = true }
        let value = try term(argument)
        switch function {
        // Every row counts, nil or not, as count: counts a collection's elements; the argument stays in the text.
        case .count where dialect == .postgres: return SQLTerm(sql: "COUNT(CASE WHEN \(value.sql) IS NULL THEN 1 ELSE 1 END)", family: .number)
        case .count: return SQLTerm(sql: "COUNT(COALESCE(\(value.sql), 1))", family: .number)
        case .mode: throw .unsupported("\(expression) over the rows of a dictionary result yields several values; group by its argument instead")
        default: return try reduction(function, of: value, in: "\(expression)")
        }
    }

    /// The SQL aggregate reducing `operand` as ``Aggregation`` reduces values (`og_sum` exact on integers until they
    /// overflow, `og_median`, `og_stddev` by the evaluator's code), with the family of its result. Not for `count:`,
    /// which each caller counts its own way, nor `mode:`, which yields several values.
    func reduction(_ function: ExpressionFunction, of operand: SQLTerm, in expression: String) throws(FormatPredicateError) -> SQLTerm {
        if [.sum, .average, .median, .stddev].contains(function), let family = operand.family, family != .number {
            throw .typeMismatch(expression: expression, expected: "numbers", found: family.rawValue)
        }
        switch function {
        case .sum where dialect == .postgres: return SQLTerm(sql: "SUM(\(operand.sql))", family: .number)
        case .sum: return SQLTerm(sql: "og_sum(\(operand.sql))", family: .number)
        case .average: return SQLTerm(sql: dialect.real("AVG(\(operand.sql))"), family: .number)
        case .median where dialect == .postgres: return SQLTerm(sql: "percentile_cont(0.5) WITHIN GROUP (ORDER BY \(operand.sql))", family: .number)
        case .median: return SQLTerm(sql: "og_median(\(operand.sql))", family: .number)
        case .stddev where dialect == .postgres: return SQLTerm(sql: "stddev_pop(\(operand.sql))", family: .number)
        case .stddev: return SQLTerm(sql: "og_stddev(\(operand.sql))", family: .number)
        case .min: return SQLTerm(sql: "MIN(\(operand.sql))", family: operand.family)
        case .max: return SQLTerm(sql: "MAX(\(operand.sql))", family: operand.family)
        default: throw .unsupported("\(function.rawValue) is not an aggregate SQL computes")
        }
    }

    private func callTerm(_ function: ExpressionFunction, _ terms: [SQLTerm], family: PredicateValue.Family) throws(FormatPredicateError) -> SQLTerm {
        if dialect == .postgres {
            // PostgreSQL's own functions where they compute what the evaluator does; the others have no SQL of theirs.
            let native: [ExpressionFunction: String] = [
                .uppercase: "upper", .lowercase: "lower", .abs: "abs", .floor: "floor", .ceiling: "ceiling", .trunc: "trunc",
                .sqrt: "sqrt", .ln: "ln", .log: "log", .exp: "exp",
            ]
            if function == .modulus && terms.count == 2 {
                // The remainder with the dividend's sign (fmod, and Int64's %), nil for a zero divisor, as in memory.
                let (a, b) = (terms[0].sql, terms[1].sql)
                return SQLTerm(sql: "(CASE WHEN \(b) = 0 THEN NULL ELSE \(a) - \(b) * trunc(\(a) / \(b)) END)", family: family)
            }
            if function == .power && terms.count == 2 {
                return SQLTerm(sql: "power(\(dialect.real(terms[0].sql)), \(dialect.real(terms[1].sql)))", family: family)
            }
            guard let name = native[function] else {
                throw .unsupported("the function \(function.rawValue) has no PostgreSQL equivalent the store uses; filter on its result in memory")
            }
            let arguments = terms.map { family == .number ? dialect.real($0.sql) : $0.sql }
            return SQLTerm(sql: "\(name)(\(arguments.joined(separator: ", ")))", family: family)
        }
        let name = compilation.bind(.string(function.rawValue))
        return SQLTerm(sql: "og_function(\(([name] + terms.map(\.sql)).joined(separator: ", ")))", family: family)
    }

    /// `+ - *` over numbers give a number; a Date plus or minus seconds a Date; a Date minus a Date seconds.
    private func arithmeticFamily(_ function: ExpressionFunction, _ terms: [SQLTerm], _ expression: FormatExpression) throws(FormatPredicateError) -> PredicateValue.Family {
        let (a, b) = (terms[0].family, terms[1].family)
        func refuse(_ found: PredicateValue.Family) -> FormatPredicateError {
            .typeMismatch(expression: "\(expression)", expected: function == .multiply ? "numbers" : "numbers, or a Date and a number of seconds", found: found.rawValue)
        }
        for family in [a, b] {
            if let family, family != .number && family != .date { throw refuse(family) }
        }
        switch (function, a, b) {
        case (.multiply, .date, _), (.multiply, _, .date): throw refuse(.date)
        case (.subtract, .date, .date): return .number
        case (.subtract, _, .date): throw refuse(.date)
        case (.add, .date, .date): throw refuse(.date)
        case (_, .date, _), (_, _, .date): return .date
        default: return .number
        }
    }

    private func castTerm(_ value: SQLTerm, to type: String, _ expression: FormatExpression) throws(FormatPredicateError) -> SQLTerm {
        func refuse(_ found: PredicateValue.Family) -> FormatPredicateError {
            .typeMismatch(expression: "\(expression)", expected: "a value that converts to \(type)", found: found.rawValue)
        }
        // Bound only when used: a placeholder the text does not hold would leave SQLite a value too many.
        func converted() throws(FormatPredicateError) -> String {
            if dialect == .postgres { throw .unsupported("CAST of \(value.family?.rawValue ?? "a value") to \(type) in PostgreSQL") }
            return "og_function(\(compilation.bind(.string(ExpressionFunction.cast.rawValue))), \(value.sql), \(compilation.bind(.string(type))))"
        }
        switch (type, value.family) {
        case ("NSNumber", .number?), ("NSNumber", .date?), ("NSNumber", nil): return SQLTerm(sql: value.sql, family: .number)
        case ("NSNumber", .string?): return SQLTerm(sql: try converted(), family: .number)
        case ("NSString", .string?), ("NSString", .uuid?), ("NSString", .url?), ("NSString", nil): return SQLTerm(sql: value.sql, family: .string)
        case ("NSString", .number?): return SQLTerm(sql: try converted(), family: .string)
        case ("NSDate", .number?), ("NSDate", .date?), ("NSDate", nil): return SQLTerm(sql: value.sql, family: .date)
        case (_, let found?): throw refuse(found)
        default: throw .unsupported("CAST to \"\(type)\"")
        }
    }

    func subscriptTerm(_ base: FormatExpression, _ position: CollectionSubscript, _ expression: FormatExpression) throws(FormatPredicateError) -> SQLTerm {
        if case .aggregate(let items) = base {
            // A literal collection is indexed here: the item is the term, and no row order is involved.
            switch position {
            case .size: return SQLTerm(sql: compilation.bind(.int(Int64(items.count))), family: .number)
            case .first, .last:
                guard let item = position == .first ? items.first : items.last else { return try term(.constant(.null)) }
                return try term(item)
            case .index(.constant(.int(let index))):
                return index >= 0 && index < items.count ? try term(items[Int(index)]) : try term(.constant(.null))
            case .index(let indexExpression):
                let index = try term(indexExpression)
                if let family = index.family, family != .number {
                    throw .typeMismatch(expression: "\(expression)", expected: "an integer index", found: family.rawValue)
                }
                var cases: [String] = []
                var family: PredicateValue.Family?
                for (offset, item) in items.enumerated() {
                    let itemTerm = try term(item)
                    family = family ?? itemTerm.family
                    cases.append("WHEN \(offset) THEN \(itemTerm.sql)")
                }
                return SQLTerm(sql: cases.isEmpty ? "(CASE WHEN \(index.sql) IS NULL THEN NULL END)" : "(CASE \(index.sql) \(cases.joined(separator: " ")) END)", family: family)
            }
        }
        if case .constant(.null) = base { return try term(.constant(.null)) }
        guard let rows = try collectionRows(base) else {
            throw .typeMismatch(expression: "\(expression)", expected: "a collection", found: "the single value \(base)")
        }
        let alias = compilation.newAlias()
        if position == .size { return SQLTerm(sql: "(SELECT COUNT(*) FROM (\(rows.select)) AS \(alias))", family: .number) }
        guard let ordered = rows.orderedSelect else {
            throw .unsupported("\(expression): \(base) is not an ordered relationship, so its objects have no first, last or n-th; use @min, @max or [SIZE]")
        }
        let family = rows.holdsObjects ? nil : rows.family
        switch position {
        case .first: return SQLTerm(sql: "(SELECT \(alias).v FROM (\(ordered)) AS \(alias) ORDER BY \(alias).o LIMIT 1)", family: family)
        case .last: return SQLTerm(sql: "(SELECT \(alias).v FROM (\(ordered)) AS \(alias) ORDER BY \(alias).o DESC LIMIT 1)", family: family)
        case .index(let indexExpression):
            let index = try term(indexExpression)
            if let found = index.family, found != .number {
                throw .typeMismatch(expression: "\(expression)", expected: "an integer index", found: found.rawValue)
            }
            // A negative offset would read as none in SQLite, and fail the query in PostgreSQL: out of range is nil,
            // as in memory.
            let offset = dialect == .postgres ? "GREATEST(CAST(\(index.sql) AS BIGINT), 0)" : index.sql
            return SQLTerm(
                sql: "(SELECT \(alias).v FROM (\(ordered)) AS \(alias) WHERE \(index.sql) >= 0 ORDER BY \(alias).o LIMIT 1 OFFSET \(offset))",
                family: family)
        case .size: return SQLTerm(sql: "NULL", family: .number)
        }
    }

    static func commonFamily(_ a: SQLTerm, _ b: SQLTerm, in expression: FormatExpression) throws(FormatPredicateError) -> PredicateValue.Family? {
        guard let x = a.family else { return b.family }
        guard let y = b.family else { return x }
        guard x == y else { throw .typeMismatch(expression: "\(expression)", expected: "values of one kind (\(x.rawValue) first)", found: y.rawValue) }
        return x
    }
}

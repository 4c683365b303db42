import ObjectGraph
import PostgresNIO
import PredicateFormat

/// Dictionary results in PostgreSQL: chosen properties, aggregates and computed values, grouped and filtered, as the
/// SQLite store computes them.
struct PostgresDictionaryQuery {
    let store: PostgresStore
    let request: StoreDictionaryRequest

    func run() throws -> [[String: AttributeValue]] {
        let model = store.model
        let entity = try model.entity(named: request.fetch.entityName)
        let valuePaths = request.properties.filter { !$0.keyPath.isEmpty }.map(\.keyPath)
        let groupPaths = request.groupBy.map { $0.split(separator: ".").map(String.init) }
        var inner = request.fetch
        inner.sortKeys = []
        let (baseSQL, baseBinds, terms, expressionTerms) = try store.selectSQL(
            inner, columns: { _ in "__COLUMNS__" }, ordered: false, sliced: false, extraTerms: valuePaths + groupPaths,
            expressions: request.properties.compactMap(\.expression))
        // PostgreSQL sums integers exactly into a numeric: the result is an integer again when it fits.
        let columns = DictionaryColumns(
            request, entity: entity, model: model, terms: terms, expressions: expressionTerms, dialect: .postgres,
            sum: { term, isInteger in isInteger ? "CAST(SUM(\(term)) AS BIGINT)" : "SUM(\(term))" }, average: { "AVG(\($0))::DOUBLE PRECISION" })
        let (items, types, groupTerms, resultTypes, references) = (columns.items, columns.types, columns.groupTerms, columns.resultTypes, columns.references)
        var sql = baseSQL.replacingOccurrences(of: "__COLUMNS__", with: (request.distinct ? "DISTINCT " : "") + items.joined(separator: ", "))
        if !groupTerms.isEmpty { sql += " GROUP BY " + groupTerms.joined(separator: ", ") }
        var binds = baseBinds
        var outer = "TRUE"
        if let having = request.having {
            do throws(FormatPredicateError) {
                let compiled = try SQLCompiler(schema: ResultSchema(properties: request.properties, types: resultTypes), dialect: .postgres)
                    .compile(having, entity: "result", alias: "t0", firstArgumentIndex: binds.count + 1)
                for value in compiled.arguments { PostgresValueCoding.append(value, to: &binds) }
                outer = compiled.condition
            } catch {
                throw ObjectGraphError.invalidPredicate(entity: entity.name, error: error)
            }
        }
        sql = "SELECT * FROM (\(sql)) AS t0 WHERE \(outer)"
        let names = Set(request.properties.map(\.name))
        if let missing = request.fetch.sortKeys.first(where: { !names.contains($0.keyPathText) }) {
            throw ObjectGraphError.invalidFetch(entity: entity.name, reason: "dictionary results sort by their own keys; '\(missing.keyPathText)' is not one")
        }
        let order = request.fetch.sortKeys.map { key in
            let column = "t0.\(pgQuoted(key.keyPathText))"
            var value = key.foldOptions.isEmpty ? column : "og_fold(\(column), \(key.foldOptions.rawValue))"
            if resultTypes[key.keyPathText] == .string { value += " COLLATE \"C\"" }
            return "\(value) \(key.ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST")"
        }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        if request.fetch.limit != nil || request.fetch.offset > 0 {
            sql += " LIMIT $\(binds.count + 1) OFFSET $\(binds.count + 2)"
            binds.append(request.fetch.limit.map(Int64.init))
            binds.append(Int64(request.fetch.offset))
        }
        return try store.read { session in
            try session.query(sql, binds).map { row in
                let cells = row.makeRandomAccess()
                var dictionary: [String: AttributeValue] = [:]
                for (index, property) in request.properties.enumerated() {
                    dictionary[property.name] = try types[index].map { try PostgresValueCoding.decode(cells[index], as: $0) }
                        ?? PostgresValueCoding.decodeUntyped(cells[index])
                }
                for reference in references {
                    let name = request.properties[reference.property].name
                    guard case .int(let key) = dictionary[name] else { continue }
                    let entityName = try reference.entityColumn.map { try cells[$0].decode(String.self) } ?? reference.destination
                    dictionary[name] = .objectID(ObjectID(entityName: entityName, rawKey: key))
                }
                return dictionary
            }
        }
    }
}

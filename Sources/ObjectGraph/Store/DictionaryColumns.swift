import PredicateFormat

/// The SELECT list of a dictionary request, as every SQL store builds it: each property's value or aggregate over
/// the terms the predicate compiler made, the type its values decode as, and for a to-one relationship's value
/// (its destination's key) the column that names the destination's entity when its tree has several.
package struct DictionaryColumns {
    /// `<expression> AS "<name>"`, one per property, then the destinations' entity columns.
    package private(set) var items: [String] = []
    /// The attribute type of each property's values; nil for numbers whose type the store's value tells.
    package private(set) var types: [AttributeType?] = []
    /// The types by property name, for compiling a having condition.
    package private(set) var resultTypes: [String: AttributeType?] = [:]
    /// To-one properties: their position, the position of their destination's entity column, and the destination.
    package private(set) var references: [(property: Int, entityColumn: Int?, destination: String)] = []
    /// The GROUP BY terms.
    package let groupTerms: [String]

    /// `terms` are the compiled value paths of the properties that have one, then the groupings; `expressions` the
    /// compiled computed values. `sum` and `average` spell those aggregates of a term (given whether it is an
    /// integer attribute), which differ between SQL dialects, as names do (`dialect`).
    package init(
        _ request: StoreDictionaryRequest, entity: ModelEntity, model: Model, terms: [String],
        expressions: [(sql: String, family: PredicateValue.Family?)], dialect: SQLDialect = .sqlite,
        sum: (String, Bool) -> String, average: (String) -> String
    ) {
        var termIndex = 0, expressionIndex = 0
        var entityColumns: [String] = []
        for (index, property) in request.properties.enumerated() {
            var term = "NULL"
            var attributeType: AttributeType?
            if !property.keyPath.isEmpty {
                term = terms[termIndex]
                termIndex += 1
                attributeType = model.attribute(at: property.keyPath, from: entity)?.type
                if property.function == nil, let destination = model.toOneDestination(at: property.keyPath, from: entity) {
                    var entityColumn: Int?
                    if destination.selfAndDescendantNames.count > 1 {
                        entityColumn = request.properties.count + entityColumns.count
                        entityColumns.append("""
                            (SELECT d.\(dialect.quoted(StorageNames.rowEntity)) FROM \(dialect.quoted(destination.tableName)) AS d \
                            WHERE d.\(dialect.quoted(StorageNames.rowID)) = \(term))
                            """)
                    }
                    references.append((index, entityColumn, destination.name))
                }
            }
            let isInteger = attributeType.map { [.int16, .int32, .int64].contains($0) } ?? false
            let expression: String
            let type: AttributeType?
            switch property.function {
            case nil where property.expression != nil:
                let computed = expressions[expressionIndex]
                expressionIndex += 1
                // Dates are stored as seconds and strings as text: decoded as such; numbers as the store returns them.
                (expression, type) = (computed.sql, computed.family == .date ? .date : computed.family == .string ? .string : nil)
            case nil: (expression, type) = (term, attributeType)
            case .count?: (expression, type) = (property.keyPath.isEmpty ? "COUNT(*)" : "COUNT(\(term))", .int64)
            case .sum?: (expression, type) = (sum(term, isInteger), attributeType.map { _ in isInteger ? .int64 : .double })
            case .avg?: (expression, type) = (average(term), .double)
            case .min?: (expression, type) = ("MIN(\(term))", attributeType)
            case .max?: (expression, type) = ("MAX(\(term))", attributeType)
            }
            items.append("\(expression) AS \(dialect.quoted(property.name))")
            types.append(type)
            resultTypes[property.name] = type
        }
        groupTerms = Array(terms[termIndex...])
        items += entityColumns.enumerated().map { "\($1) AS \(dialect.quoted("entity of reference \($0)"))" }
    }
}

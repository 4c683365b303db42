import PredicateFormat

/// Dictionary results computed in memory (for stores without SQL): grouping, aggregates, having, order, slice.
enum DictionaryResults {
    static func compute(
        _ request: StoreDictionaryRequest, entity: ModelEntity, model: Model, rows: [ObjectID], source: (ObjectID) -> any KeyValueSource,
        value: (ObjectID, [String]) throws -> AttributeValue
    ) throws -> [[String: AttributeValue]] {
        let isToMany = { (path: [String]) in model.crossesToMany(path, from: entity) }
        let hasAggregates = request.properties.contains { $0.function != nil || $0.expression?.aggregatesRows(isToMany: isToMany) == true }
        let groupPaths = request.groupBy.map { $0.split(separator: ".").map(String.init) }
        var groups: [[ObjectID]] = []
        if !groupPaths.isEmpty {
            var index: [[AttributeValue]: Int] = [:]
            for row in rows {
                let key = try groupPaths.map { try value(row, $0) }
                if let existing = index[key] {
                    groups[existing].append(row)
                } else {
                    index[key] = groups.count
                    groups.append([row])
                }
            }
        } else if hasAggregates {
            groups = [rows]
        } else {
            groups = rows.map { [$0] }
        }
        var results: [[String: AttributeValue]] = []
        for group in groups {
            var dictionary: [String: AttributeValue] = [:]
            for property in request.properties {
                if let expression = property.expression {
                    let computed = try groupValue(expression, rows: group, source: source, isToMany: isToMany, entity: entity.name)
                    dictionary[property.name] = AttributeValue(computed)
                    continue
                }
                let values = property.keyPath.isEmpty ? [] : try group.map { try value($0, property.keyPath) }
                let type = model.attribute(at: property.keyPath, from: entity)?.type
                dictionary[property.name] = aggregate(property.function, values: values, rowCount: group.count, type: type)
            }
            results.append(dictionary)
        }
        if request.distinct {
            var seen: Set<[String: AttributeValue]> = []
            results = results.filter { seen.insert($0).inserted }
        }
        if let having = request.having {
            results = try results.filter { result in
                let source = result.mapValues { EvaluatedValue.value($0.predicateValue) }
                do throws(FormatPredicateError) {
                    return try having.evaluate(with: source)
                } catch {
                    throw ObjectGraphError.invalidPredicate(entity: entity.name, error: error)
                }
            }
        }
        let names = Set(request.properties.map(\.name))
        if let missing = request.fetch.sortKeys.first(where: { !names.contains($0.keyPathText) }) {
            throw ObjectGraphError.invalidFetch(entity: entity.name, reason: "dictionary results sort by their own keys; '\(missing.keyPathText)' is not one")
        }
        let sortNames = request.fetch.sortKeys.map(\.keyPathText)
        try InMemoryOrdering.sort(&results, by: request.fetch.sortKeys, prefix: request.fetch.limit.map { $0 + request.fetch.offset },
                                  value: { result, key in result[sortNames[key]] ?? .null },
                                  tieBreak: { _, _ in false })
        let start = min(request.fetch.offset, results.count)
        let end = request.fetch.limit.map { min(start + $0, results.count) } ?? results.count
        return Array(results[start..<end])
    }

    /// An expression's value for a group: an aggregate function of a per-row value reduces the group's rows; any
    /// other part reads the group's first row, as a plain property does.
    static func groupValue(
        _ expression: FormatExpression, rows: [ObjectID], source: (ObjectID) -> any KeyValueSource, isToMany: ([String]) -> Bool, entity: String
    ) throws -> PredicateValue {
        do throws(FormatPredicateError) {
            return try groupValue(expression, rows: rows, source: source, isToMany: isToMany)
        } catch {
            throw ObjectGraphError.invalidPredicate(entity: entity, error: error)
        }
    }

    private static func groupValue(
        _ expression: FormatExpression, rows: [ObjectID], source: (ObjectID) -> any KeyValueSource, isToMany: ([String]) -> Bool
    ) throws(FormatPredicateError) -> PredicateValue {
        switch expression {
        case .function(let function, let arguments) where function.isAggregate && !arguments[0].yieldsCollection(isToMany: isToMany):
            if function == .mode {
                throw .unsupported("\(expression) over the rows of a dictionary result yields several values; group by its argument instead")
            }
            var values: [PredicateValue] = []
            for row in rows {
                guard case .value(let value) = try arguments[0].evaluate(with: source(row)) else {
                    throw .typeMismatch(expression: "\(expression)", expected: "a value of each object", found: "an object or a collection")
                }
                values.append(value)
            }
            return try Aggregation.reduce(function, values)
        case .function(let function, let arguments) where expression.aggregatesRows(isToMany: isToMany):
            var values: [PredicateValue] = []
            for argument in arguments {
                values.append(try groupValue(argument, rows: rows, source: source, isToMany: isToMany))
            }
            return try Arithmetic.apply(function, values)
        default:
            guard let first = rows.first else { return .null }
            guard case .value(let value) = try expression.evaluate(with: source(first)) else {
                throw .typeMismatch(expression: "\(expression)", expected: "a value", found: "an object or a collection")
            }
            return value
        }
    }

    static func aggregate(_ function: FetchProperty.Function?, values: [AttributeValue], rowCount: Int, type: AttributeType?) -> AttributeValue {
        let present = values.filter { !$0.isNull }
        switch function {
        case nil: return values.first ?? .null
        case .count?: return .int(Int64(values.isEmpty ? rowCount : present.count))
        case .sum?:
            guard !present.isEmpty else { return .null }
            if let type, [.int16, .int32, .int64].contains(type) {
                return .int(present.reduce(Int64(0)) { total, value in if case .int(let v) = value { total &+ v } else { total } })
            }
            return .double(present.compactMap(\.numericValue).reduce(0, +))
        case .avg?:
            let numbers = present.compactMap(\.numericValue)
            return numbers.isEmpty ? .null : .double(numbers.reduce(0, +) / Double(numbers.count))
        case .min?: return present.min { $0.storeOrder($1) == .orderedAscending } ?? .null
        case .max?: return present.max { $0.storeOrder($1) == .orderedAscending } ?? .null
        }
    }
}

import PredicateFormat

/// Dictionary results computed in memory (for stores without SQL): grouping, aggregates, having, order, slice.
enum DictionaryResults {
    static func compute(
        _ request: StoreDictionaryRequest, entity: ModelEntity, model: Model, rows: [ObjectID],
        value: (ObjectID, [String]) throws -> AttributeValue
    ) throws -> [[String: AttributeValue]] {
        let hasAggregates = request.properties.contains { $0.function != nil }
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
        try InMemoryOrdering.sort(&results, by: request.fetch.sortKeys, value: { result, path in result[path.joined(separator: ".")] ?? .null },
                                  tieBreak: { _, _ in false })
        let start = min(request.fetch.offset, results.count)
        let end = request.fetch.limit.map { min(start + $0, results.count) } ?? results.count
        return Array(results[start..<end])
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

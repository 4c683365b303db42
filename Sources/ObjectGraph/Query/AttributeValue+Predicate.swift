import PredicateFormat

extension AttributeValue {
    /// The same value in the predicate language.
    package var predicateValue: PredicateValue {
        switch self {
        case .null: .null
        case .bool(let v): .bool(v)
        case .int(let v): .int(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .decimal(let v): .decimal(v)
        case .date(let v): .date(v)
        case .data(let v): .data(v)
        case .uuid(let v): .uuid(v)
        case .url(let v): .url(v)
        // As an object ID argument does: the row's key, which a foreign key holds.
        case .objectID(let v): .int(v.rawKey)
        }
    }
}

extension ObjectID: PredicateArgument {
    /// An object ID in a predicate stands for its row's key: `author == %@` compares the foreign key.
    public var predicateArgumentValue: PredicateValue { .int(rawKey) }
}

extension ManagedObject: PredicateArgument {
    /// An object in a predicate stands for its row's key, like its ID.
    public var predicateArgumentValue: PredicateValue { .int(objectID.rawKey) }
}

extension AttributeValue {
    /// The same value from the predicate language.
    init(_ value: PredicateValue) {
        switch value {
        case .null: self = .null
        case .bool(let v): self = .bool(v)
        case .int(let v): self = .int(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .decimal(let v): self = .decimal(v)
        case .date(let v): self = .date(v)
        case .data(let v): self = .data(v)
        case .uuid(let v): self = .uuid(v)
        case .url(let v): self = .url(v)
        }
    }

    /// The attribute value a key path reaches on `source`, across to-one relationships.
    static func read(_ path: [String], from source: any KeyValueSource, entity: String) throws -> AttributeValue {
        let result: EvaluatedValue
        do {
            result = try FormatExpression.keyPath(path).evaluate(with: source)
        } catch {
            throw ObjectGraphError.invalidPredicate(entity: entity, error: error)
        }
        switch result {
        case .value(let value): return AttributeValue(value)
        case .object(let row as MemoryRowSource): return .objectID(row.id)
        case .object: throw ObjectGraphError.invalidFetch(entity: entity, reason: "the key path \(path.joined(separator: ".")) ends at a relationship, not an attribute")
        case .collection: throw ObjectGraphError.invalidFetch(entity: entity, reason: "the key path \(path.joined(separator: ".")) crosses a to-many relationship")
        }
    }
}

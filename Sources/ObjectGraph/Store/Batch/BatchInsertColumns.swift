import PredicateFormat

/// A batch insert's keys resolved against its entity, and the check every row passes before a store writes it:
/// every key an attribute that is stored and settable, every value of its attribute's type (or convertible to it
/// without loss), every non-optional attribute given a value or a default.
package struct BatchInsertColumns {
    let entity: ModelEntity
    /// For each of the request's keys, its attribute's position.
    let positions: [Int]
    /// Every attribute's default, in attribute order: where each row starts.
    let defaults: [AttributeValue]
    /// Each attribute's type and optionality, read once rather than from its description for every value.
    private let types: [AttributeType]
    private let optional: [Bool]
    /// Stored attributes that need a value and have no default: a row that does not give one is refused.
    private let required: [Int]
    /// The attributes the request's keys leave out, which every row takes the default of.
    private let ungiven: [Int]

    init(_ request: BatchInsertRequest, model: Model) throws {
        let entity = try model.entity(named: request.entityName)
        guard !entity.isAbstract else {
            throw ObjectGraphError.invalidBatchRequest(entity: entity.name, reason: "the entity is abstract; insert rows of one of its sub-entities")
        }
        var positions: [Int] = []
        for (position, key) in request.keys.enumerated() {
            do {
                positions.append(try Self.settableAttribute(key, of: entity, verb: "insert"))
            } catch ObjectGraphError.invalidBatchRequest(let entity, let reason) {
                // The keys of dictionaries are every key any of them names: say which row named this one.
                guard case .values(let rows) = request.source, let row = rows.firstIndex(where: { $0[position] != nil }) else { throw ObjectGraphError.invalidBatchRequest(entity: entity, reason: reason) }
                throw ObjectGraphError.invalidBatchRequest(entity: entity, reason: "row \(row): \(reason)")
            }
        }
        guard Set(request.keys).count == request.keys.count else {
            throw ObjectGraphError.invalidBatchRequest(entity: entity.name, reason: "a key is listed twice in \(request.keys)")
        }
        self.entity = entity
        self.positions = positions
        defaults = entity.attributes.map { $0.type.coerce($0.defaultValue) }
        types = entity.attributes.map(\.type)
        optional = entity.attributes.map(\.isOptional)
        ungiven = entity.attributes.indices.filter { !positions.contains($0) }
        required = entity.attributes.indices.filter { index in
            let attribute = entity.attributes[index]
            return !attribute.isOptional && !attribute.isTransient && attribute.derivation == nil
        }
    }

    /// The position of the stored, settable attribute `key`, or a typed error saying why a batch request cannot
    /// set it.
    static func settableAttribute(_ key: String, of entity: ModelEntity, verb: String) throws -> Int {
        guard let index = entity.attributeIndex[key] else {
            if entity.relationship(named: key) != nil {
                throw ObjectGraphError.invalidBatchRequest(
                    entity: entity.name, reason: "'\(key)' is a relationship; a batch request sets attributes only (set relationships through a context)")
            }
            throw ObjectGraphError.invalidBatchRequest(entity: entity.name, reason: "the entity has no attribute '\(key)'")
        }
        let attribute = entity.attributes[index]
        if attribute.isTransient {
            throw ObjectGraphError.invalidBatchRequest(entity: entity.name, reason: "'\(key)' is transient: no store keeps it, so a batch request cannot \(verb) it")
        }
        if attribute.derivation != nil {
            throw ObjectGraphError.invalidBatchRequest(entity: entity.name, reason: "'\(key)' is derived: the store computes it")
        }
        return index
    }

    /// The value `value` stored in attribute `index`, or a typed error naming the row, the key and both types.
    static func checked(_ value: AttributeValue, attribute index: Int, of entity: ModelEntity, row: Int?) throws -> AttributeValue {
        let attribute = entity.attributes[index]
        let coerced = attribute.type.coerce(value)
        let place = row.map { "row \($0): " } ?? ""
        guard attribute.type.accepts(coerced) else {
            throw ObjectGraphError.invalidBatchRequest(
                entity: entity.name, reason: "\(place)'\(attribute.name)' takes a value of type \(attribute.type), not \(value)")
        }
        if coerced == .null && !attribute.isOptional {
            throw ObjectGraphError.invalidBatchRequest(entity: entity.name, reason: "\(place)'\(attribute.name)' is not optional and has no value")
        }
        return coerced
    }

    /// Puts row `index`'s values in `values`, in attribute order: the defaults, with `given` (by key position; nil
    /// keeps the default) checked and put in place. `values` is reused from row to row, so a row allocates nothing.
    func fill(_ values: inout [AttributeValue], from given: some Collection<AttributeValue?>, index: Int) throws {
        startRow(&values)
        for (position, value) in zip(positions, given) {
            guard let value else {
                values[position] = defaults[position]
                continue
            }
            try place(value, at: position, in: &values, row: index)
        }
        try checkRequired(values, row: index)
    }

    /// ``fill(_:from:index:)`` for a row a request's closure filled, which holds a value for every key (its default
    /// where the closure set none): nothing is wrapped as an optional first (a tenth of the time of inserting a million
    /// rows).
    func fill(_ values: inout [AttributeValue], fromFilled given: [AttributeValue], index: Int) throws {
        startRow(&values)
        for (position, value) in zip(positions, given) { try place(value, at: position, in: &values, row: index) }
        try checkRequired(values, row: index)
    }

    /// Puts the defaults of the attributes the keys leave out in `values` (all of them the first time).
    @inline(__always)
    private func startRow(_ values: inout [AttributeValue]) {
        if values.count != defaults.count {
            values = defaults
        } else {
            for position in ungiven { values[position] = defaults[position] }
        }
    }

    /// Puts `value` in attribute `position`'s place, checked and converted; the slow path names the row, the key and
    /// both types.
    @inline(__always)
    private func place(_ value: AttributeValue, at position: Int, in values: inout [AttributeValue], row: Int) throws {
        let coerced = types[position].coerce(value)
        guard types[position].accepts(coerced), coerced != .null || optional[position] else {
            _ = try Self.checked(value, attribute: position, of: entity, row: row)
            return
        }
        values[position] = coerced
    }

    private func checkRequired(_ values: [AttributeValue], row: Int) throws {
        for position in required where values[position] == .null {
            _ = try Self.checked(.null, attribute: position, of: entity, row: row)
        }
    }

    /// Calls `body` with each row of `request` in turn, checked, and which of the request's keys the row gives (by
    /// key position): the request's rows, or those its closure fills, which give every key. A dictionary gives the
    /// keys it names, `.null` included (it clears the value); an upsert writes only those over a stored row. The
    /// arrays handed over are reused for the next row: keep their values, not the arrays.
    func forEachRow(of request: BatchInsertRequest, _ body: (Int, [AttributeValue], [Bool]) throws -> Void) throws {
        var values: [AttributeValue] = []
        var gives = Array(repeating: true, count: positions.count)
        switch request.source {
        case .values(let rows):
            for (index, given) in rows.enumerated() {
                try fill(&values, from: given, index: index)
                for (position, value) in given.enumerated() { gives[position] = value != nil }
                try body(index, values, gives)
            }
        case .fill(let fill):
            var draft = BatchInsertRow(index: 0, values: positions.map { defaults[$0] }, positions: Dictionary(
                request.keys.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { first, _ in first }))
            let start = draft.values
            while true {
                for position in start.indices { draft.values[position] = start[position] }
                guard fill(&draft) else { return }
                if let key = draft.unknownKey {
                    throw ObjectGraphError.invalidBatchRequest(entity: entity.name, reason: "row \(draft.index): '\(key)' is not one of the request's keys \(request.keys)")
                }
                try self.fill(&values, fromFilled: draft.values, index: draft.index)
                try body(draft.index, values, gives)
                draft.index += 1
            }
        }
    }
}

extension BatchInsertColumns {
    /// A batch update's computed value for attribute `index`, converted as ``BatchValueCheck`` converts it in SQL: an
    /// integral number into an integer attribute, any number into a Double one, a truth value as 0 or 1; anything
    /// else of another type, out of range, or nil for a non-optional attribute is refused.
    package static func computed(_ value: AttributeValue, attribute index: Int, of entity: ModelEntity) throws -> AttributeValue {
        let attribute = entity.attributes[index]
        func refuse(_ reason: String) -> ObjectGraphError {
            .invalidBatchRequest(entity: entity.name, reason: "'\(attribute.name)' \(reason)")
        }
        guard let type = BatchValueCheck.typeName(attribute.type) else {
            throw refuse("takes a value of type \(attribute.type), which its new value's expression does not give; set a constant instead")
        }
        var number: Double?
        var integer: Int64?
        switch value {
        case .null:
            guard attribute.isOptional else { throw refuse("is not optional, and its new value is nil") }
            return .null
        case .int(let int): integer = int
        case .bool(let bool): integer = bool ? 1 : 0
        case .double(let double):
            number = double
            if double.rounded(.towardZero) == double { integer = Int64(exactly: double) }
        case .string where type == "string", .date where type == "date":
            return value
        default:
            throw refuse("takes a value of type \(attribute.type), not \(value)")
        }
        switch type {
        case "double": return .double(number ?? Double(integer!))
        case "int16", "int32", "int64", "bool":
            guard let integer else { throw refuse("takes a value of type \(type), not \(number ?? 0): a whole number is needed") }
            guard attribute.type.accepts(.int(integer)) || (type == "bool" && (integer == 0 || integer == 1)) else {
                throw refuse("takes a value of type \(type), and \(integer) is out of its range")
            }
            return type == "bool" ? .bool(integer == 1) : .int(integer)
        default:
            throw refuse("takes a value of type \(attribute.type), not \(value)")
        }
    }
}

/// One attribute a batch update sets: its position, and its new value as a checked constant, or as an expression
/// each store computes per row.
package struct BatchAssignment {
    package let index: Int
    package let expression: FormatExpression
    /// The value, checked against the attribute, when the expression is a constant.
    package let constant: AttributeValue?

    /// The refusal of new values read across a to-one relationship: a store computes them from the row alone.
    package static func acrossToOne(_ entity: ModelEntity) -> ObjectGraphError {
        .invalidBatchRequest(
            entity: entity.name, reason: "a new value reads across a to-one relationship, which a batch update cannot; compute it through a context")
    }

    /// Refuses an expression whose values (of `family`, nil when unknown) can never be the attribute's type: a
    /// store computing the values in SQL checks this before it runs the statement.
    package func checkFamily(_ family: PredicateValue.Family?, of entity: ModelEntity) throws {
        let attribute = entity.attributes[index]
        let fits = switch attribute.type {
        case .int16, .int32, .int64, .bool, .double, .float: family == nil || family == .number
        case .string: family == nil || family == .string
        case .date: family == .date
        default: false
        }
        guard BatchValueCheck.typeName(attribute.type) != nil, fits else {
            throw ObjectGraphError.invalidBatchRequest(
                entity: entity.name,
                reason: "'\(attribute.name)' takes a value of type \(attribute.type), which its new value's expression does not give\(family.map { " (it gives \($0.rawValue))" } ?? ""); set a constant instead")
        }
    }
}

extension BatchUpdateRequest {
    /// The request's attributes of `entity`, in name order, each settable, with constants checked: what both stores
    /// refuse alike before touching a row.
    package func assignments(of entity: ModelEntity) throws -> [BatchAssignment] {
        guard !propertiesToUpdate.isEmpty else {
            throw ObjectGraphError.invalidBatchRequest(entity: entity.name, reason: "it names no attribute to update")
        }
        return try propertiesToUpdate.keys.sorted().map { key in
            let index = try BatchInsertColumns.settableAttribute(key, of: entity, verb: "update")
            let expression = propertiesToUpdate[key]!
            guard case .constant(let value) = expression else { return BatchAssignment(index: index, expression: expression, constant: nil) }
            return BatchAssignment(
                index: index, expression: expression, constant: try BatchInsertColumns.checked(AttributeValue(value), attribute: index, of: entity, row: nil))
        }
    }
}


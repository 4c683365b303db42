import PredicateFormat

/// A predicate made ready to judge many rows of some entities, as a fetch beside pending rows or a results controller
/// beside an import does: resolved once per entity to attribute positions (``ResolvedPredicate``), so that a row's
/// keys are read by position. Where it reads more than a row's own attributes (a relationship, `SELF`), rows of that
/// entity are judged through a key-value source, as before.
struct RowPredicate {
    let predicate: FormatPredicate
    private let resolved: [String: ResolvedPredicate]

    init(_ predicate: FormatPredicate, entities names: some Sequence<String>, model: Model) {
        self.predicate = predicate
        var resolved: [String: ResolvedPredicate] = [:]
        for name in names {
            guard let entity = model.entityIfPresent(name) else { continue }
            resolved[name] = ResolvedPredicate(predicate, position: { entity.attributeIndex[$0] })
        }
        self.resolved = resolved
    }

    /// Whether `row` matches: read by position where the predicate resolved for the row's entity, else through
    /// `source(row)`, which the general evaluator reads (nil: the row matches nothing).
    func evaluate(_ row: Snapshot, through source: (Snapshot) -> (any KeyValueSource)?) throws(FormatPredicateError) -> Bool {
        if let resolved = resolved[row.objectID.entityName] {
            return try resolved.evaluate { row.values[$0].predicateValue }
        }
        guard let source = source(row) else { return false }
        return try predicate.evaluate(with: source)
    }
}

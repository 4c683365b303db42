import PredicateFormat

/// A fetch request kept in a model under a name, its predicate holding `$variables` to fill when it is used: Core
/// Data's fetch request templates, as Xcode's model editor writes them.
///
/// ```swift
/// let request = try model.fetchRequest(fromTemplateNamed: "byAuthor", substitutionVariables: ["NAME": "Ann"])
/// ```
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The entity the request fetches.
    public var entityName: String
    /// The predicate, with its variables unfilled.
    public var predicate: FormatPredicate

    /// Creates a template.
    public init(entityName: String, predicate: FormatPredicate) {
        self.entityName = entityName
        self.predicate = predicate
    }
}

extension Model {
    /// A request made from the template `name`, its `$variables` replaced by `substitutionVariables` (Swift values,
    /// as for `%@`).
    ///
    /// - Throws: ``ObjectGraphError/invalidFetch(entity:reason:)`` when there is no such template, or a variable
    ///   has no value or a value a predicate cannot hold.
    public func fetchRequest(fromTemplateNamed name: String, substitutionVariables: [String: Any?] = [:]) throws -> FetchRequest {
        guard let template = fetchRequestTemplates[name] else {
            let known = fetchRequestTemplates.keys.sorted().joined(separator: ", ")
            throw ObjectGraphError.invalidFetch(entity: name, reason: "the model has no fetch request template '\(name)' (it has: \(known.isEmpty ? "none" : known))")
        }
        var request = FetchRequest(entityName: template.entityName)
        do {
            request.predicate = try template.predicate.withSubstitutionVariables(substitutionVariables)
        } catch {
            throw ObjectGraphError.invalidFetch(entity: template.entityName, reason: "template '\(name)': \(error.description)")
        }
        if let unfilled = request.predicate?.unboundVariables.sorted().first {
            throw ObjectGraphError.invalidFetch(entity: template.entityName, reason: "template '\(name)' needs a value for $\(unfilled)")
        }
        return request
    }
}

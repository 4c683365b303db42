import Foundation
import GRDB
import PredicateFormat

/// Derived attributes, computed by SQLite itself: triggers recompute a derived column whenever what it derives
/// from changes, in the same transaction, as Core Data does. So a save that changes a book's author updates both
/// authors' `books.@count`, whichever objects the saving context had loaded.
///
/// Trigger names hold a `.` and spaces (`"Author.bookCount on insert"`), so they meet no table or index.
enum DerivationTriggers {
    /// The function the string derivations call: `og_case(value, 'lower' | 'upper' | 'canonical')`, by the same
    /// Swift code as everywhere else (SQLite's own `lower` knows only ASCII).
    static let caseFunction = DatabaseFunction("og_case", argumentCount: 2, pure: true) { values in
        guard case .string(let text) = values[0].storage, case .string(let kind) = values[1].storage else { return values[0] }
        switch kind {
        case "lower": return text.lowercased()
        case "upper": return text.uppercased()
        default: return StringMatching.fold(text, [.caseInsensitive, .diacriticInsensitive])
        }
    }

    /// Seconds since 2001 (how dates are stored) of the statement's time: Julian day 2451910.5 is 2001-01-01 UTC.
    static let now = "((julianday('now') - 2451910.5) * 86400.0)"

    /// The statements that create every trigger of `model`.
    static func statements(model: Model) -> [String] {
        var statements: [String] = []
        for entity in model.entities {
            let inherited = entity.attributes.count - entity.description.attributes.count
            for (offset, attribute) in entity.description.attributes.enumerated() {
                guard let text = attribute.derivation, let derivation = Derivation(text) else { continue }
                statements += triggers(
                    for: derivation, named: "\(entity.name).\(attribute.name)", column: entity.attributeColumns[inherited + offset], of: entity, model: model)
            }
        }
        return statements
    }

    private static func triggers(for derivation: Derivation, named name: String, column: String, of entity: ModelEntity, model: Model) -> [String] {
        let table = sqlQuoted(entity.tableName)
        let target = sqlQuoted(column)
        let id = RowColumn.id
        // Rows of this entity and its sub-entities only, when its table holds others too.
        func kinds(_ row: String) -> String {
            let tree = model.entityIfPresent(entity.rootName)?.selfAndDescendantNames.count ?? 1
            guard entity.selfAndDescendantNames.count < tree else { return "1" }
            return "\(row).\(RowColumn.entity) IN (\(entity.selfAndDescendantNames.map(sqlStringLiteral).joined(separator: ", ")))"
        }
        func trigger(_ event: String, on source: String, when: String = "1", _ body: String) -> String {
            "CREATE TRIGGER \(sqlQuoted("\(name) on \(event) of \(source)")) AFTER \(event) ON \(source) WHEN \(when) BEGIN \(body); END"
        }
        func setOwnRow(_ value: String) -> String { "UPDATE \(table) SET \(target) = \(value) WHERE \(id) = NEW.\(id)" }
        switch derivation {
        case .now:
            return [
                trigger("INSERT", on: table, when: kinds("NEW"), setOwnRow(now)),
                trigger("UPDATE", on: table, when: kinds("NEW"), setOwnRow(now)),
            ]
        case .lowercase(let key), .uppercase(let key), .canonical(let key):
            let kind = switch derivation { case .lowercase: "lower"; case .uppercase: "upper"; default: "canonical" }
            let source = sqlQuoted(entity.attributeIndex[key].map { entity.attributeColumns[$0] } ?? key)
            let value = "og_case(NEW.\(source), '\(kind)')"
            return [
                trigger("INSERT", on: table, when: kinds("NEW"), setOwnRow(value)),
                trigger("UPDATE OF \(source)", on: table, when: kinds("NEW"), setOwnRow(value)),
            ]
        case .toOne(let relationshipName, let key):
            guard let relationship = entity.relationship(named: relationshipName), case .foreignKey(let foreignKey) = relationship.storage,
                  let destination = model.entityIfPresent(relationship.destinationEntityName),
                  let position = destination.attributeIndex[key] else { return [] }
            let reference = sqlQuoted(foreignKey)
            let destinationTable = sqlQuoted(destination.tableName)
            let source = sqlQuoted(destination.attributeColumns[position])
            let value = "(SELECT d.\(source) FROM \(destinationTable) AS d WHERE d.\(id) = NEW.\(reference))"
            return [
                trigger("INSERT", on: table, when: kinds("NEW"), setOwnRow(value)),
                trigger("UPDATE OF \(reference)", on: table, when: kinds("NEW"), setOwnRow(value)),
                trigger("UPDATE OF \(source)", on: destinationTable,
                        "UPDATE \(table) SET \(target) = NEW.\(source) WHERE \(reference) = NEW.\(id) AND \(kinds(table))"),
            ]
        case .count(let relationshipName):
            guard let relationship = entity.relationship(named: relationshipName),
                  let destination = model.entityIfPresent(relationship.destinationEntityName) else { return [] }
            let (linkTable, owner): (String, String)
            switch relationship.storage {
            case .inverseForeignKey(let column, _): (linkTable, owner) = (sqlQuoted(destination.tableName), sqlQuoted(column))
            case .joinTable(let joinTable, let isSourceSide): (linkTable, owner) = (sqlQuoted(joinTable), isSourceSide ? "source" : "target")
            case .foreignKey, .transient: return []
            }
            let count = "(SELECT COUNT(*) FROM \(linkTable) AS l WHERE l.\(owner) = \(table).\(id))"
            func recount(_ row: String) -> String { "UPDATE \(table) SET \(target) = \(count) WHERE \(id) = \(row).\(owner) AND \(kinds(table))" }
            return [
                trigger("INSERT", on: table, when: kinds("NEW"), setOwnRow("(SELECT COUNT(*) FROM \(linkTable) AS l WHERE l.\(owner) = NEW.\(id))")),
                trigger("INSERT", on: linkTable, recount("NEW")),
                trigger("DELETE", on: linkTable, recount("OLD")),
                trigger("UPDATE OF \(owner)", on: linkTable, "\(recount("OLD")); \(recount("NEW"))"),
            ]
        }
    }
}

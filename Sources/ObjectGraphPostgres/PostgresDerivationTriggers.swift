import ObjectGraph
import PredicateFormat

/// Derived attributes in PostgreSQL, computed by triggers as the SQLite store's are (see `DerivationTriggers`):
/// `now()`, a case form of another attribute, a to-one's attribute (kept current when the destination changes),
/// and a to-many's count (kept current when its members come and go). Each trigger runs a PL/pgSQL function of its
/// own, numbered (`og_derive_1`, …) since PostgreSQL names are short.
enum PostgresDerivationTriggers {
    static func statements(model: Model) -> [String] {
        var statements: [String] = []
        for entity in model.entities {
            let inherited = entity.attributes.count - entity.description.attributes.count
            for (offset, attribute) in entity.description.attributes.enumerated() {
                guard let text = attribute.derivation, let derivation = Derivation(text) else { continue }
                statements += triggers(for: derivation, column: entity.attributeColumns[inherited + offset], of: entity, model: model, first: statements.count)
            }
        }
        return statements
    }

    private static func triggers(for derivation: Derivation, column: String, of entity: ModelEntity, model: Model, first: Int) -> [String] {
        let table = pgQuoted(entity.tableName)
        let target = pgQuoted(column)
        let id = pgQuoted(StorageNames.rowID)
        let entityColumn = pgQuoted(StorageNames.rowEntity)
        var statements: [String] = []
        // Rows of this entity and its sub-entities only, when its table holds others too.
        func kinds(_ row: String) -> String {
            let tree = model.entityIfPresent(entity.rootName)?.selfAndDescendantNames.count ?? 1
            guard entity.selfAndDescendantNames.count < tree else { return "TRUE" }
            return "\(row).\(entityColumn) IN (\(entity.selfAndDescendantNames.map(PostgresSchema.sqlLiteral).joined(separator: ", ")))"
        }
        /// A trigger running `body` (PL/pgSQL statements) for each row.
        func trigger(_ timing: String, _ event: String, on source: String, when: String = "TRUE", _ body: String, returning row: String = "NEW") {
            let name = "og_derive_\((first + statements.count) / 2 + 1)"
            statements.append("""
                CREATE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \(body); RETURN \(row); END $$
                """)
            statements.append("CREATE TRIGGER \(name) \(timing) \(event) ON \(source) FOR EACH ROW WHEN (\(when)) EXECUTE FUNCTION \(name)()")
        }
        func setOwnRow(_ value: String) -> String { "NEW.\(target) := \(value)" }
        switch derivation {
        case .now:
            trigger("BEFORE", "INSERT OR UPDATE", on: table, when: kinds("NEW"),
                    setOwnRow("EXTRACT(EPOCH FROM clock_timestamp())::DOUBLE PRECISION - 978307200"))
        case .lowercase(let key), .uppercase(let key), .canonical(let key):
            let source = "NEW." + pgQuoted(entity.attributeIndex[key].map { entity.attributeColumns[$0] } ?? key)
            let value = switch derivation {
            case .lowercase: "lower(\(source))"
            case .uppercase: "upper(\(source))"
            default: "og_fold(\(source), 3)"
            }
            trigger("BEFORE", "INSERT OR UPDATE", on: table, when: kinds("NEW"), setOwnRow(value))
        case .toOne(let relationshipName, let key):
            guard let relationship = entity.relationship(named: relationshipName), case .foreignKey(let foreignKey) = relationship.storage,
                  let destination = model.entityIfPresent(relationship.destinationEntityName),
                  let position = destination.attributeIndex[key] else { return [] }
            let reference = pgQuoted(foreignKey)
            let destinationTable = pgQuoted(destination.tableName)
            let source = pgQuoted(destination.attributeColumns[position])
            trigger("BEFORE", "INSERT OR UPDATE", on: table, when: kinds("NEW"),
                    setOwnRow("(SELECT d.\(source) FROM \(destinationTable) AS d WHERE d.\(id) = NEW.\(reference))"))
            trigger("AFTER", "UPDATE OF \(source)", on: destinationTable,
                    "UPDATE \(table) SET \(target) = NEW.\(source) WHERE \(reference) = NEW.\(id) AND \(kinds(table))")
        case .count(let relationshipName):
            guard let relationship = entity.relationship(named: relationshipName),
                  let destination = model.entityIfPresent(relationship.destinationEntityName) else { return [] }
            let (linkTable, owner): (String, String)
            switch relationship.storage {
            case .inverseForeignKey(let column, _): (linkTable, owner) = (pgQuoted(destination.tableName), pgQuoted(column))
            case .joinTable(let joinTable, let isSourceSide): (linkTable, owner) = (pgQuoted(joinTable), isSourceSide ? "source" : "target")
            case .foreignKey, .transient: return []
            }
            let count = "(SELECT COUNT(*) FROM \(linkTable) AS l WHERE l.\(owner) = \(table).\(id))"
            func recount(_ row: String) -> String { "UPDATE \(table) SET \(target) = \(count) WHERE \(id) = \(row).\(owner) AND \(kinds(table))" }
            trigger("BEFORE", "INSERT", on: table, when: kinds("NEW"),
                    setOwnRow("(SELECT COUNT(*) FROM \(linkTable) AS l WHERE l.\(owner) = NEW.\(id))"))
            trigger("AFTER", "INSERT", on: linkTable, recount("NEW"))
            trigger("AFTER", "DELETE", on: linkTable, recount("OLD"), returning: "OLD")
            trigger("AFTER", "UPDATE OF \(owner)", on: linkTable, "\(recount("OLD")); \(recount("NEW"))")
        }
        return statements
    }
}

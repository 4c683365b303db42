/// How a migration fills a new join table from what the old store kept of the same relationship: one `SELECT` of
/// `(owner, member, owner_order, member_order)` over the old tables, whatever kept the links there (a join table of
/// either orientation, a to-one's column, a one-to-many's column), then one `INSERT` that puts each value where the
/// new table keeps it. `owner_order` is the member's position in its owner's list, `member_order` the owner's in
/// its member's list; NULL where the old store kept no order.
///
/// Written once for both SQL stores: `oldTable` names a table as the migration set it aside, `quoted` quotes a name,
/// and `nullInteger` is the dialect's typed NULL.
package struct JoinTableCopy {
    let oldTable: (String) -> String
    let quoted: (String) -> String
    let nullInteger: String

    package init(oldTable: @escaping (String) -> String, quoted: @escaping (String) -> String, nullInteger: String) {
        (self.oldTable, self.quoted, self.nullInteger) = (oldTable, quoted, nullInteger)
    }

    /// The `INSERT` filling `relationship`'s join table (`isSourceSide` its side there) from `old`, the relationship
    /// it was, of `oldEntity`, reaching `oldDestination`; nil when the old store kept nothing of it.
    package func statement(
        for relationship: ModelRelationship, isSourceSide: Bool, table: String, from old: ModelRelationship,
        of oldEntity: ModelEntity, to oldDestination: ModelEntity
    ) -> String? {
        guard let rows = oldLinks(old, of: oldEntity, to: oldDestination) else { return nil }
        // The new table: `position` orders the source's list, `inverse_position` (ordered both ways) the target's.
        let (owner, member) = isSourceSide ? ("source", "target") : ("target", "source")
        var columns = [owner, member, "position"]
        var values = ["l.owner", "l.member", isSourceSide ? "l.owner_order" : "l.member_order"]
        if relationship.isOrderedBothWays {
            columns.append("inverse_position")
            values.append(isSourceSide ? "l.member_order" : "l.owner_order")
        }
        if !relationship.isOrdered && !relationship.isOrderedBothWays && isSourceSide { values[2] = nullInteger }
        return "INSERT INTO \(quoted(table)) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM (\(rows)) AS l"
    }

    /// The old store's links of `old` as `(owner, member, owner_order, member_order)`.
    private func oldLinks(_ old: ModelRelationship, of oldEntity: ModelEntity, to oldDestination: ModelEntity) -> String? {
        let id = quoted(StorageNames.rowID)
        func select(_ owner: String, _ member: String, _ ownerOrder: String?, _ memberOrder: String?) -> String {
            "SELECT \(owner) AS owner, \(member) AS member, \(ownerOrder ?? nullInteger) AS owner_order, \(memberOrder ?? nullInteger) AS member_order"
        }
        switch old.storage {
        case .joinTable(let table, let isSourceSide):
            let inverse = old.isOrderedBothWays ? "inverse_position" : nil
            let columns = isSourceSide ? select("source", "target", "position", inverse) : select("target", "source", inverse, "position")
            return "\(columns) FROM \(oldTable(table))"
        case .foreignKey(let column):
            // The inverse's order, when it was an ordered one-to-many, is kept beside the to-one's column.
            var memberOrder: String?
            if case .inverseForeignKey(_, let order?)? = oldDestination.relationship(named: old.inverseName)?.storage { memberOrder = "o.\(quoted(order))" }
            return "\(select("o.\(id)", "o.\(quoted(column))", nil, memberOrder)) FROM \(oldTable(oldEntity.tableName)) AS o WHERE o.\(quoted(column)) IS NOT NULL"
        case .inverseForeignKey(let column, let order):
            return "\(select("d.\(quoted(column))", "d.\(id)", order.map { "d.\(quoted($0))" }, nil)) FROM \(oldTable(oldDestination.tableName)) AS d WHERE d.\(quoted(column)) IS NOT NULL"
        case .transient:
            return nil
        }
    }
}

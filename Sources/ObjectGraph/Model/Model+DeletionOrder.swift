extension Model {
    /// The positions of `ids` in the order a store deletes their rows: a table's rows before the rows of the tables
    /// its foreign keys refer to, and in the given order within a table.
    ///
    /// Deleting a referenced row first makes the store act on every row that refers to it (setting the reference to
    /// nothing, for a nullify), and when those rows are deleted by the same save that work is thrown away: deleting
    /// 50,000 books before their chapters first set 50,000 chapters to no book. Tables that refer to each other are
    /// taken in name order.
    package func deletionOrder(of ids: [ObjectID]) -> [Int] {
        // Rows of one entity (the usual save) stay as they are, without a look-up per row.
        guard let first = ids.first?.entityName, !ids.allSatisfy({ $0.entityName == first }) else { return Array(ids.indices) }
        let rootOfID = ids.map { entityIfPresent($0.entityName)?.rootName ?? $0.entityName }
        let roots = Set(rootOfID)
        guard roots.count > 1 else { return Array(ids.indices) }
        // The roots each root's foreign keys refer to, among those deleted from.
        var references: [String: Set<String>] = [:]
        for entity in entities where roots.contains(entity.rootName) {
            for relationship in entity.relationships {
                guard case .foreignKey = relationship.storage, let destination = entityIfPresent(relationship.destinationEntityName),
                      destination.rootName != entity.rootName, roots.contains(destination.rootName) else { continue }
                references[entity.rootName, default: []].insert(destination.rootName)
            }
        }
        var remaining = roots.sorted()
        var rank: [String: Int] = [:]
        while !remaining.isEmpty {
            // The first root no other remaining root refers to (any, where they refer to each other).
            let next = remaining.firstIndex { root in !remaining.contains { $0 != root && references[$0]?.contains(root) == true } } ?? 0
            rank[remaining.remove(at: next)] = rank.count
        }
        let ranks = rootOfID.map { rank[$0]! }
        return ids.indices.sorted { (ranks[$0], $0) < (ranks[$1], $1) }
    }
}

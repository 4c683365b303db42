import ObjectGraph
import PostgresNIO

/// The links one save writes to one join table: the owners whose old links go, and every new link, written in
/// two statements however many owners changed.
struct JoinTableLinks {
    /// Whether the relationship is ordered: its links keep their positions; an unordered one's are NULL.
    let isOrdered: Bool
    private var clearedOwners: [Int64] = []
    private var owners: [Int64] = []
    /// Each owner's destinations, in order (given new contents twice, an owner keeps the last).
    private var destinations: [Int64: [Int64]] = [:]

    init(isOrdered: Bool) { self.isOrdered = isOrdered }

    /// Sets `owner`'s links to `destinations`, in order; `isNew` for an owner this save inserted, which has none
    /// stored to remove.
    mutating func add(owner: Int64, isNew: Bool, destinations: [Int64]) {
        if self.destinations.updateValue(destinations, forKey: owner) == nil {
            owners.append(owner)
            if !isNew { clearedOwners.append(owner) }
        }
    }

    func write(to table: String, in session: PostgresSession) throws {
        if !clearedOwners.isEmpty {
            var binds = StatementBindings()
            binds.append(clearedOwners)
            try session.query("DELETE FROM \(pgQuoted(table)) WHERE source = ANY($1::BIGINT[])", binds)
        }
        var sources: [Int64] = [], targets: [Int64] = [], positions: [Int64] = []
        for owner in owners {
            for (position, destination) in destinations[owner, default: []].enumerated() {
                sources.append(owner)
                targets.append(destination)
                positions.append(Int64(position))
            }
        }
        guard !sources.isEmpty else { return }
        var binds = StatementBindings()
        binds.append(sources)
        binds.append(targets)
        binds.append(positions)
        try session.query("""
            INSERT INTO \(pgQuoted(table)) (source, target, position)
            SELECT source, target, \(isOrdered ? "position" : "NULL") FROM unnest($1::BIGINT[], $2::BIGINT[], $3::BIGINT[]) AS links(source, target, position)
            """, binds)
    }
}

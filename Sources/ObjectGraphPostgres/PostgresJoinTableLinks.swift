import ObjectGraph
import PostgresNIO

/// The links one save writes to one join table: the owners whose old links go, and every new link, written in
/// two statements however many owners changed.
struct JoinTableLinks {
    /// Whether the relationship is ordered: its links keep their positions; an unordered one's are NULL.
    let isOrdered: Bool
    /// Whether its inverse is ordered too: a link that stays keeps its `inverse_position`, a new one goes to the
    /// end of its target's list.
    let isOrderedBothWays: Bool
    private var clearedOwners: [Int64] = []
    private var owners: [Int64] = []
    /// Each owner's destinations, in order (given new contents twice, an owner keeps the last).
    private var destinations: [Int64: [Int64]] = [:]

    init(isOrdered: Bool, isOrderedBothWays: Bool = false) { (self.isOrdered, self.isOrderedBothWays) = (isOrdered, isOrderedBothWays) }

    /// Sets `owner`'s links to `destinations`, in order; `isNew` for an owner this save inserted, which has none
    /// stored to remove.
    mutating func add(owner: Int64, isNew: Bool, destinations: [Int64]) {
        if self.destinations.updateValue(destinations, forKey: owner) == nil {
            owners.append(owner)
            if !isNew { clearedOwners.append(owner) }
        }
    }

    func write(to table: String, in session: PostgresSession) throws {
        var kept: [Link: Int64] = [:]
        if isOrderedBothWays && !clearedOwners.isEmpty {
            var binds = StatementBindings()
            binds.append(clearedOwners)
            for row in try session.query("SELECT source, target, inverse_position FROM \(pgQuoted(table)) WHERE source = ANY($1::BIGINT[])", binds) {
                let cells = row.makeRandomAccess()
                if let position = try cells[2].decode(Int64?.self) {
                    kept[Link(source: try cells[0].decode(Int64.self), target: try cells[1].decode(Int64.self))] = position
                }
            }
        }
        if !clearedOwners.isEmpty {
            var binds = StatementBindings()
            binds.append(clearedOwners)
            try session.query("DELETE FROM \(pgQuoted(table)) WHERE source = ANY($1::BIGINT[])", binds)
        }
        var sources: [Int64] = [], targets: [Int64] = [], positions: [Int64] = [], inversePositions: [Int64] = []
        for owner in owners {
            for (position, destination) in destinations[owner, default: []].enumerated() {
                sources.append(owner)
                targets.append(destination)
                positions.append(Int64(position))
                // -1: none kept (positions are never negative).
                if isOrderedBothWays { inversePositions.append(kept[Link(source: owner, target: destination)] ?? -1) }
            }
        }
        guard !sources.isEmpty else { return }
        var binds = StatementBindings()
        binds.append(sources)
        binds.append(targets)
        binds.append(positions)
        guard isOrderedBothWays else {
            try session.query("""
                INSERT INTO \(pgQuoted(table)) (source, target, position)
                SELECT source, target, \(isOrdered ? "position" : "NULL") FROM unnest($1::BIGINT[], $2::BIGINT[], $3::BIGINT[]) AS links(source, target, position)
                """, binds)
            return
        }
        // A new link goes after its target's list as stored before this statement (new links to one target tie,
        // and then its list orders them by key, unless this save brought the target's list too).
        binds.append(inversePositions)
        try session.query("""
            INSERT INTO \(pgQuoted(table)) (source, target, position, inverse_position)
            SELECT links.source, links.target, links.position,
                   coalesce(nullif(links.inverse, -1), (SELECT max(j.inverse_position) + 1 FROM \(pgQuoted(table)) AS j WHERE j.target = links.target), 0)
            FROM unnest($1::BIGINT[], $2::BIGINT[], $3::BIGINT[], $4::BIGINT[]) AS links(source, target, position, inverse)
            """, binds)
    }

    private struct Link: Hashable {
        let source: Int64
        let target: Int64
    }
}

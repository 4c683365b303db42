import Foundation
import ObjectGraph
import PostgresNIO
import PredicateFormat

/// A batch update as two statements, where its plan read every matched row and wrote each back (4.2 times the
/// one `UPDATE` raw postgres-nio sends for 200,000 rows):
///
/// 1. `SELECT` of the new values computed by the server, from the matched rows locked for the transaction, keeping
///    only the first row whose values an attribute refuses (`LIMIT 1`): that row's values are checked as a plan
///    checks them, so the request fails with the same error, naming the attribute.
/// 2. `UPDATE … RETURNING` of the same expressions, cast to their columns, with every row's version moved on. The
///    rows are locked and the expressions stable, so each row gets the values step 1 checked; a row another
///    transaction inserted in between is updated only if its values fit.
///
/// Expressions that change from call to call (`now()`, `random()`) are left to the plan, which computes each value
/// once.
struct PostgresBatchUpdate {
    let store: PostgresStore
    let session: PostgresSession

    /// The request's result, or nil when it is the plan's to run.
    func run(_ request: BatchUpdateRequest, source: TransactionSource) throws -> BatchResult? {
        let (entity, table) = try store.layout(for: request.entityName)
        let assignments = try request.assignments(of: entity)
        let computed = assignments.filter { $0.constant == nil }
        var fetch = StoreFetchRequest(entityName: entity.name)
        fetch.includesSubentities = request.includesSubentities
        fetch.predicate = request.predicate
        let expressions = computed.map(\.expression)
        if !expressions.isEmpty {
            // Each row's new values from its own attributes only, as the plan's evaluator reads them.
            let alone = try store.selection(StoreFetchRequest(entityName: entity.name), expressions: expressions, aggregatingRows: false)
            if !alone.joins.isEmpty { throw BatchAssignment.acrossToOne(entity) }
        }
        let selection = try store.selection(fetch, expressions: expressions, aggregatingRows: false)
        let compiled = Array(zip(selection.compiled.expressions, selection.compiled.expressionFamilies))
        for (assignment, expression) in zip(computed, compiled) { try assignment.checkFamily(expression.1, of: entity) }
        guard compiled.allSatisfy({ $0.1 != nil && !Self.isVolatile($0.0) }) else { return nil }

        let from = "FROM \(pgQuoted(table.name)) AS t0 \(selection.joins) WHERE \(selection.condition)"
        let values = compiled.map { "(\($0.0))" }
        let fits = zip(computed, values).map { Self.fits($1, entity.attributes[$0.index]) }
        if !computed.isEmpty {
            let columns = values.enumerated().map { "\($1) AS v\($0)" }.joined(separator: ", ")
            let check = """
                SELECT * FROM (SELECT \(columns) \(from) FOR UPDATE OF t0) AS s
                WHERE NOT (\(computed.indices.map { Self.fits("s.v\($0)", entity.attributes[computed[$0].index]) }.joined(separator: " AND "))) LIMIT 1
                """
            if let refused = try session.query(check, selection.binds).first {
                let cells = refused.makeRandomAccess()
                for (position, assignment) in computed.enumerated() {
                    _ = try BatchInsertColumns.computed(try Self.value(cells[position], family: compiled[position].1), attribute: assignment.index, of: entity)
                }
                // The SQL and the check disagree: refuse rather than leave the row out of the update.
                let keys = computed.map { "'\(entity.attributes[$0.index].name)'" }.joined(separator: ", ")
                throw ObjectGraphError.invalidBatchRequest(
                    entity: entity.name, reason: "the server refused a new value of \(keys) for a row matched, which the request's own check accepts")
            }
        }

        var binds = selection.binds
        var sets = zip(computed, values).map { assignment, value in
            let column = entity.attributeColumns[assignment.index]
            return "\(pgQuoted(column)) = CAST(\(value) AS \(PostgresValueCoding.sqlType(ofColumn: column, in: table)))"
        }
        for assignment in assignments {
            guard let constant = assignment.constant else { continue }
            PostgresValueCoding.append(constant, to: &binds)
            sets.append("\(pgQuoted(entity.attributeColumns[assignment.index])) = $\(binds.count)")
        }
        let id = pgQuoted(StorageNames.rowID), version = pgQuoted(StorageNames.rowVersion)
        sets.append("\(version) = t0.\(version) + 1")
        // A predicate's joins are the selection's, not the UPDATE's: then the rows go by key.
        let filter = selection.joins.isEmpty ? selection.condition : "t0.\(id) IN (SELECT t0.\(id) \(from))"
        let update = """
            UPDATE \(pgQuoted(table.name)) AS t0 SET \(sets.joined(separator: ", "))
            WHERE \(([filter] + fits).joined(separator: " AND "))
            RETURNING t0.\(id), t0.\(pgQuoted(StorageNames.rowEntity))
            """
        let rows = try store.guardingUniqueness(entity) { try session.query(update, binds) }
        var byEntity: [String: [Int64]] = [:]
        var count = 0
        for row in rows {
            let (key, name) = try row.decode((Int64, String).self)
            byEntity[name, default: []].append(key)
            count += 1
        }
        var record = HistoryRecord(source: source)
        var ids: [ObjectID] = []
        let names = assignments.map { entity.attributes[$0.index].name }
        for (name, keys) in byEntity.sorted(by: { $0.key < $1.key }) {
            record.add(entityName: name, keys: keys, .update, properties: names)
            if request.resultType == .objectIDs { ids += keys.sorted().map { ObjectID(entityName: name, rawKey: $0) } }
        }
        try store.writeHistory(record, in: session)
        guard request.resultType == .objectIDs else { return BatchResult(count: count) }
        return BatchResult(count: count, objectIDs: ids, changes: StoreChanges(updated: ids))
    }

    /// Whether `sql` calls a function whose value changes from call to call (see the compiler's PostgreSQL dialect).
    private static func isVolatile(_ sql: String) -> Bool { sql.contains("random()") || sql.contains("clock_timestamp()") }

    /// A condition true when `value` (SQL) is one `attribute` takes, as ``BatchInsertColumns/computed(_:attribute:of:)``
    /// judges it: nil only where optional; for integers and Booleans, a whole number in the type's range.
    private static func fits(_ value: String, _ attribute: AttributeDescription) -> String {
        let range: (Int64, Int64)? = switch attribute.type {
        case .int16: (Int64(Int16.min), Int64(Int16.max))
        case .int32: (Int64(Int32.min), Int64(Int32.max))
        case .int64: (Int64.min, Int64.max)
        case .bool: (0, 1)
        default: nil
        }
        let kind = range.map { low, high in
            "trunc(\(value)::NUMERIC) = \(value)::NUMERIC AND \(value)::NUMERIC BETWEEN \(low) AND \(high)"
        } ?? "TRUE"
        return attribute.isOptional ? "(\(value) IS NULL OR (\(kind)))" : "(\(value) IS NOT NULL AND \(kind))"
    }

    /// A computed value as the plan's evaluator would give it, for the check that names what is wrong with it.
    private static func value(_ cell: PostgresCell, family: PredicateValue.Family?) throws -> AttributeValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8: return .int(try cell.decode(Int64.self))
        case .text, .varchar: return .string(try cell.decode(String.self))
        case .bool: return .bool(try cell.decode(Bool.self))
        // An aggregate of integers (`@sum`) is NUMERIC.
        case .numeric: return .double(Double(try cell.decode(Decimal.self).description) ?? .nan)
        default:
            let number = try cell.decode(Double.self)
            return family == .date ? .date(Date(timeIntervalSinceReferenceDate: number)) : .double(number)
        }
    }
}

import Foundation
import GRDB
import GRDBSQLite
import PredicateFormat

/// Batch requests in SQL: each one write transaction, with its history, all of it or none of it.
extension SQLiteStore {
    public func execute(_ request: BatchRequest, source: TransactionSource) throws -> BatchResult {
        let start = ContinuousClock.now
        let result = try writeStore { db in
            var history = HistoryRecord(source: source)
            let entity = try model.entity(named: request.entityName)
            let result: BatchResult
            do {
                switch request {
                case .insert(let insert): result = try batchInsert(insert, db: db, history: &history)
                case .update(let update): result = try batchUpdate(update, db: db, history: &history)
                case .delete(let delete): result = try batchDelete(delete, db: db, history: &history)
                }
            } catch let error as DatabaseError where error.message?.hasPrefix(BatchValueCheck.prefix) == true {
                throw ObjectGraphError.invalidBatchRequest(entity: entity.name, reason: String(error.message!.dropFirst(BatchValueCheck.prefix.count)))
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                throw SQLiteSaveTransaction.uniqueness(entity, error)
            }
            try writeHistory(history, in: db)
            return result
        }
        ObjectGraphLogging.logger.debug("batch \(request.kindName) of \(request.entityName) wrote \(result.count) rows to \(location) in \(Self.milliseconds(since: start)) ms")
        return result
    }

    /// The result of a request that changed `ids` of its entity (and `changes` in all).
    private func batchResult(_ type: BatchResultType, count: Int, ids: @autoclosure () -> [ObjectID], changes: @autoclosure () -> StoreChanges) -> BatchResult {
        guard type == .objectIDs else { return BatchResult(count: count) }
        return BatchResult(count: count, objectIDs: ids(), changes: changes())
    }

    // MARK: Insert

    /// Rows are taken in blocks: each block's keys in one step of the sequence, its rows written by the save's
    /// multi-row INSERTs. Where the tree has uniqueness constraints, a conflicting row updates the stored one under the
    /// keys the row gives, and `RETURNING` tells inserted rows (version 1) from updated ones.
    private func batchInsert(_ request: BatchInsertRequest, db: Database, history: inout HistoryRecord) throws -> BatchResult {
        let columns = try BatchInsertColumns(request, model: model)
        let entity = columns.entity
        let (_, table) = try layout(for: entity.name)
        guard let entityColumns = table.entities[entity.name] else { throw ObjectGraphError.unknownEntity(entity.name) }
        let tree = entity.rootName == entity.name ? entity : try model.entity(named: entity.rootName)
        let constrained = tree.selfAndDescendantNames.compactMap(model.entityIfPresent).contains { !$0.uniquenessConstraints.isEmpty }
        let upserting = constrained && request.upserts
        // Upserting, a block's rows give the same keys, and its statement updates a matched row under those alone.
        var statementsByKeys: [[Bool]: InsertStatements] = [:]
        func statements(giving gives: [Bool]) throws -> InsertStatements {
            if let statements = statementsByKeys[gives] { return statements }
            var suffix = ""
            if upserting {
                let assignments = request.keys.indices.filter { gives[$0] }.map { position in
                    let column = sqlQuoted(entity.attributeColumns[entity.attributeIndex[request.keys[position]]!])
                    return "\(column) = excluded.\(column)"
                } + ["\(RowColumn.version) = \(RowColumn.version) + 1"]
                suffix = " ON CONFLICT DO UPDATE SET \(assignments.joined(separator: ", ")) RETURNING \(RowColumn.id), \(RowColumn.entity), \(RowColumn.version)"
            }
            let statements = try InsertStatements(
                entityName: entity.name, table: table.name, columns: entityColumns.insertColumns, storedAttributes: nil, suffix: suffix, in: db)
            statementsByKeys[gives] = statements
            return statements
        }
        let stored = entity.storedAttributes
        let toOneCount = entityColumns.insertColumns.count - stored.count
        let recording = recordsHistory || request.resultType == .objectIDs
        var inserted: [ObjectID] = []
        var updated: [ObjectID] = []
        // The keys each updated row was written under, for history.
        var updatedKeys: [[String]] = []
        var count = 0
        // The rows of a block, one after another, each `width` values in attribute order.
        let width = entity.attributes.count
        let blockSize = 4_096
        var block: [AttributeValue] = []
        block.reserveCapacity(blockSize * width)
        var blockRows = 0
        var blockGives = Array(repeating: true, count: request.keys.count)

        func write(_ statement: Statement, _ rows: Range<Int>, keys: ArraySlice<Int64>) throws {
            let raw = statement.sqliteStatement
            sqlite3_reset(raw)
            var index: Int32 = 1
            for (row, key) in zip(rows, keys) {
                try statement.bind(key, at: index)
                index += 1
                for attribute in stored {
                    try statement.bind(block[row * width + attribute], at: index)
                    index += 1
                }
                for _ in 0..<toOneCount {
                    try statement.bind(DatabaseValue.null, at: index)
                    index += 1
                }
            }
            statementCount.add(1, ordering: .relaxed)
            let written = recordsHistory ? request.keys.indices.filter { blockGives[$0] }.map { request.keys[$0] }.sorted() : []
            while true {
                let code = sqlite3_step(raw)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { throw Statement.lastError(of: raw) }
                let id = ObjectID(
                    entityName: sqlite3_column_text(raw, 1).map { String(cString: $0) } ?? entity.name, rawKey: sqlite3_column_int64(raw, 0))
                if sqlite3_column_int64(raw, 2) == 1 {
                    inserted.append(id)
                } else {
                    updated.append(id)
                    if recordsHistory { updatedKeys.append(written) }
                }
            }
            count += rows.count
        }

        func flush() throws {
            guard blockRows > 0 else { return }
            let keys = try allocate(db, root: entity.rootName, count: blockRows)
            try statements(giving: blockGives).forEachStatement(over: 0..<blockRows) { statement, rows in try write(statement, rows, keys: keys[rows]) }
            if !upserting && recording { inserted += keys.map { ObjectID(entityName: entity.name, rawKey: $0) } }
            block.removeAll(keepingCapacity: true)
            blockRows = 0
        }

        try columns.forEachRow(of: request) { _, row, gives in
            if upserting && gives != blockGives {
                try flush()
                blockGives = gives
            }
            block.append(contentsOf: row)
            blockRows += 1
            if blockRows == blockSize { try flush() }
        }
        try flush()
        if recordsHistory {
            for id in inserted { history.add(id, .insert) }
            for (id, keys) in zip(updated, updatedKeys) { history.add(id, .update, properties: keys) }
        }
        return batchResult(
            request.resultType, count: count, ids: upserting ? inserted + updated : inserted,
            changes: StoreChanges(inserted: inserted, updated: updated))
    }

    // MARK: Update

    /// One `UPDATE … RETURNING`: constants are bound as the save binds them, computed values are the compiled
    /// expressions, checked by ``BatchValueCheck``; every changed row's version moves on.
    private func batchUpdate(_ request: BatchUpdateRequest, db: Database, history: inout HistoryRecord) throws -> BatchResult {
        let (entity, table) = try layout(for: request.entityName)
        let assignmentList = try request.assignments(of: entity)
        let keys = assignmentList.map { entity.attributes[$0.index].name }
        let constants = assignmentList.compactMap { assignment in assignment.constant.map { (column: entity.attributeColumns[assignment.index], value: $0) } }
        let computed = assignmentList.filter { $0.constant == nil }
        var (conditions, arguments) = entityFilter(entity, includesSubentities: request.includesSubentities)
        let expressions = computed.map(\.expression)
        let compiled: CompiledPredicate
        do {
            if !expressions.isEmpty {
                let alone = try SQLCompiler(schema: self).compile(nil, entity: entity.name, alias: "t0", expressions: expressions)
                if !alone.joins.isEmpty { throw BatchAssignment.acrossToOne(entity) }
            }
            compiled = try SQLCompiler(schema: self).compile(
                request.predicate, entity: entity.name, alias: "t0", expressions: expressions, firstArgumentIndex: arguments.count + 1)
        } catch let error as FormatPredicateError {
            throw ObjectGraphError.invalidPredicate(entity: entity.name, error: error)
        }
        arguments += compiled.arguments
        conditions.append(compiled.condition)
        var assignments: [String] = []
        for (assignment, (sql, family)) in zip(computed, zip(compiled.expressions, compiled.expressionFamilies)) {
            try assignment.checkFamily(family, of: entity)
            let (index, attribute) = (assignment.index, entity.attributes[assignment.index])
            let type = BatchValueCheck.typeName(attribute.type)!
            arguments.append(attribute.name.databaseValue)
            let checked = "og_batch_value(\(sql), '\(type)', \(attribute.isOptional ? 1 : 0), ?\(arguments.count))"
            // A value SQLite computed alone (no function of ours, so nothing volatile and nothing costly to compute
            // twice) skips the call when its storage class already fits; the call converts or refuses the rest.
            if !sql.contains("og_"), let fits = BatchValueCheck.fits(sql, type) {
                assignments.append("\(sqlQuoted(entity.attributeColumns[index])) = CASE WHEN \(fits) THEN \(sql) ELSE \(checked) END")
            } else {
                assignments.append("\(sqlQuoted(entity.attributeColumns[index])) = \(checked)")
            }
        }
        for (column, value) in constants {
            arguments.append(SQLiteValueCoding.encode(value))
            assignments.append("\(sqlQuoted(column)) = ?\(arguments.count)")
        }
        assignments.append("\(RowColumn.version) = t0.\(RowColumn.version) + 1")
        let condition = conditions.joined(separator: " AND ")
        let filter = compiled.joins.isEmpty ? condition
            : "t0.\(RowColumn.id) IN (SELECT t0.\(RowColumn.id) FROM \(sqlQuoted(table.name)) AS t0 \(compiled.joins.joined(separator: " ")) WHERE \(condition))"
        let returning = recordsHistory || request.resultType == .objectIDs
        let sql = "UPDATE \(sqlQuoted(table.name)) AS t0 SET \(assignments.joined(separator: ", ")) WHERE \(filter)"
            + (returning ? " RETURNING \(RowColumn.id), \(RowColumn.entity)" : "")
        let statement = try db.makeStatement(sql: sql)
        try statement.bind(arguments)
        var byEntity: [String: [Int64]] = [:]
        try step(bound: statement) { row in
            let name = sqlite3_column_text(row, 1).map { String(cString: $0) } ?? entity.name
            byEntity[name, default: []].append(sqlite3_column_int64(row, 0))
            return true
        }
        let count = returning ? byEntity.values.reduce(0) { $0 + $1.count } : db.changesCount
        var ids: [ObjectID] = []
        for (name, rowKeys) in byEntity.sorted(by: { $0.key < $1.key }) {
            if recordsHistory { history.add(entityName: name, keys: rowKeys, .update, properties: keys) }
            if request.resultType == .objectIDs { ids += rowKeys.sorted().map { ObjectID(entityName: name, rawKey: $0) } }
        }
        return batchResult(request.resultType, count: count, ids: ids, changes: StoreChanges(updated: ids))
    }
}

extension BatchRequest {
    var kindName: String {
        switch self {
        case .insert: "insert"
        case .update: "update"
        case .delete: "delete"
        }
    }
}

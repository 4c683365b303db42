import Foundation
import ObjectGraph
import PostgresNIO

/// What became of a transaction on the server: the answer to a save whose COMMIT's answer was lost
/// (`ObjectGraphError.saveOutcomeUnknown`).
public enum TransactionOutcome: String, Sendable, Hashable {
    /// It committed: the save is in the store.
    case committed
    /// It was rolled back: nothing of the save was written, and saving again writes it once.
    case rolledBack
    /// The server is still at it (a slow COMMIT, or a connection it has not yet found gone): ask again later.
    case inProgress
}

extension PostgresStore {
    /// What became of the transaction a `ObjectGraphError.saveOutcomeUnknown` names,
    /// read from the server's record of its transactions (`pg_xact_status`). A save's COMMIT whose answer was lost
    /// is looked up this way by the store itself for up to the query timeout; past it, the app asks when the server
    /// is back, before saving again.
    ///
    /// ```swift
    /// do {
    ///     try ctx.save()
    /// } catch ObjectGraphError.saveOutcomeUnknown(_, let transaction, _) {
    ///     switch try store.outcome(ofTransaction: transaction) {
    ///     case .committed: ctx.reset()             // it is in the store: read it again
    ///     case .rolledBack: try ctx.save()         // nothing was written: saving again writes it once
    ///     case .inProgress: break                  // ask again later
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: `ObjectGraphError.storeReadFailed` when the server cannot be asked, or no longer
    ///   keeps the transaction's status (it is older than the server's record of transactions).
    public func outcome(ofTransaction transaction: String) throws -> TransactionOutcome {
        try read { session in try PostgresConnectionPool.outcome(of: transaction, in: session) }
    }
}

extension PostgresConnectionPool {
    /// What the server says became of `transaction`.
    static func outcome(of transaction: String, in session: PostgresSession) throws -> TransactionOutcome {
        guard UInt64(transaction) != nil else {
            throw ObjectGraphError.storeReadFailed(path: session.pool.location, reason: "\"\(transaction)\" is not a transaction ID (a whole number)")
        }
        var binds = StatementBindings()
        binds.append(transaction)
        let status = try session.query("SELECT pg_xact_status(CAST($1 AS TEXT)::xid8)", binds).first?.decode(String?.self)
        switch status {
        case "committed": return .committed
        case "aborted": return .rolledBack
        case "in progress": return .inProgress
        default:
            throw ObjectGraphError.storeReadFailed(
                path: session.pool.location, reason: "the server no longer keeps the status of transaction \(transaction): it is too old")
        }
    }

    /// Learns what became of `transaction`, whose COMMIT's answer was lost, on a connection of its own (the
    /// session's is gone), asking until the query timeout: returns when it committed, throws `lostCommit` when it
    /// was rolled back, and `ObjectGraphError.saveOutcomeUnknown` when the server could
    /// not tell in time.
    func settle(_ transaction: String, lostCommit: PostgresErrors.Failure) throws {
        let deadline = ContinuousClock.now + configuration.queryTimeout
        var connection: PostgresConnection?
        defer { connection?.closeSoon() }
        var answer = "the server could not be asked"
        repeat {
            var outcome: TransactionOutcome?
            do {
                let asked = try connection ?? connect()
                connection = asked
                outcome = try Self.outcome(of: transaction, in: PostgresSession(connection: asked, pool: self))
            } catch {
                answer = "asking the server failed (\(error))"
                if connection?.isClosed == true { connection = nil }
            }
            switch outcome {
            case .committed:
                ObjectGraphLogging.logger.info("\(location): a COMMIT's answer was lost (\(lostCommit.message)); transaction \(transaction) committed")
                return
            case .rolledBack:
                throw lostCommit
            case .inProgress:
                answer = "the server still had it in progress"
            case nil:
                break
            }
            Thread.sleep(forTimeInterval: 0.1)
        } while ContinuousClock.now < deadline
        throw ObjectGraphError.saveOutcomeUnknown(
            path: location, transaction: transaction,
            reason: "its COMMIT's answer was lost (\(lostCommit.message)), and \(answer) within \(configuration.queryTimeout)")
    }
}

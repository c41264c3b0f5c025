import HearthCore
import HearthSQLite

// The outbox (`auth_outbox`) and the push queue (`push_queue`) keep a message's delivery in the same four
// columns, `attempts, next_attempt_at, last_error, dead_at`: they are read, written and selected on here.
extension SQLiteAuthStorage {
    /// The rows still to be tried and due by the time bound to `?`.
    static let dueRows = "dead_at IS NULL AND next_attempt_at <= ?"
    /// The rows given up on (`?` is bound to the earliest time, so that both conditions take a time).
    static let deadRows = "dead_at IS NOT NULL AND next_attempt_at >= ?"

    /// Binds a delivery's four columns, from parameter `first` on.
    static func bind(_ delivery: OutboxMessage.Delivery, to s: Statement, from first: Int32) {
        s.bind(first, Int64(delivery.attempts))
        s.bind(first + 1, delivery.nextAttemptAt.microseconds)
        if let error = delivery.lastError { s.bind(first + 2, error) } else { s.bindNull(first + 2) }
        if let dead = delivery.deadAt { s.bind(first + 3, dead.microseconds) } else { s.bindNull(first + 3) }
    }

    /// A delivery read from its four columns, from column `first` on.
    static func delivery(_ s: Statement, from first: Int32) -> OutboxMessage.Delivery {
        OutboxMessage.Delivery(attempts: Int(s.int(first)), nextAttemptAt: Timestamp(microseconds: s.int(first + 1)),
                               lastError: s.isNull(first + 2) ? nil : s.text(first + 2),
                               deadAt: s.isNull(first + 3) ? nil : Timestamp(microseconds: s.int(first + 3)))
    }

    /// The rows of `table` (its `columns`, the delivery's four last) that meet `condition` (`dueRows` or
    /// `deadRows`) at `time`, oldest first, at most `limit`, each made by `row`.
    func queueRows<Row: Sendable>(_ table: String, columns: String, where condition: String, time: Timestamp, limit: Int,
                                  _ row: @escaping @Sendable (Statement) throws -> Row) async throws(HearthError) -> [Row] {
        try await reading { c -> [Row] in
            let s = try c.prepare("SELECT \(columns), attempts, next_attempt_at, last_error, dead_at FROM \(table) WHERE \(condition) ORDER BY seq LIMIT ?")
            defer { s.reset() }
            s.bind(1, time.microseconds)
            s.bind(2, Int64(max(0, min(limit, Int(Int32.max)))))
            var out: [Row] = []
            while try s.step() { out.append(try row(s)) }
            return out
        }
    }

    /// Records the delivery of the message `id` of `table`; false when there is no such message.
    func updateDelivery(in table: String, id: String, _ delivery: OutboxMessage.Delivery) async throws(HearthError) -> Bool {
        try await writing { c -> Bool in
            let s = try c.prepare("UPDATE \(table) SET attempts = ?, next_attempt_at = ?, last_error = ?, dead_at = ? WHERE id = ?")
            Self.bind(delivery, to: s, from: 1)
            s.bind(5, id)
            try s.run()
            return c.changes > 0
        }
    }
}

import HearthCore
import HearthSQLite

/// The queue of events for function endpoints, in the `function_events` table. The store keeps the rows;
/// which changes cause events, and how they are delivered, is the engine's.
extension ReadContext {
    static let eventColumns = """
        seq, id, endpoint, ordering_key, body, created_at, queued_at, attempts, next_attempt_at, last_error, dead_at
        """

    static let dueSQL = CachedSQL("""
        SELECT \(eventColumns) FROM function_events e
        WHERE dead_at IS NULL AND next_attempt_at <= ?1
          AND NOT EXISTS (SELECT 1 FROM function_events p
                          WHERE p.ordering_key = e.ordering_key AND p.dead_at IS NULL AND p.seq < e.seq)
        ORDER BY seq
        """)

    /// Up to `limit` pending events due at `now`, in sequence order, each the first pending event of its
    /// ordering key (so a key's later events wait for it), skipping the sequences in `skipping` and the
    /// events of the endpoints in `excluding`.
    public func dueFunctionEvents(now: Timestamp, skipping: Set<Int64>, excluding: Set<String> = [],
                                  limit: Int) throws -> [FunctionEventRecord] {
        let s = try connection.prepare(Self.dueSQL)
        defer { s.reset() }
        s.bind(1, now.microseconds)
        var out: [FunctionEventRecord] = []
        while out.count < limit, try s.step() {
            if skipping.contains(s.int(0)) || (!excluding.isEmpty && excluding.contains(s.text(2))) { continue }
            out.append(Self.event(s))
        }
        return out
    }

    /// Up to `limit` pending (or dead) events after sequence `after`, in sequence order.
    public func functionEvents(dead: Bool, after: Int64, limit: Int) throws -> [FunctionEventRecord] {
        let s = try connection.prepare("""
            SELECT \(Self.eventColumns) FROM function_events
            WHERE dead_at IS \(dead ? "NOT " : "")NULL AND seq > ? ORDER BY seq LIMIT ?
            """)
        defer { s.reset() }
        s.bind(1, after)
        s.bind(2, Int64(max(0, limit)))
        var out: [FunctionEventRecord] = []
        while try s.step() { out.append(Self.event(s)) }
        return out
    }

    /// The event with this id, or nil.
    public func functionEvent(id: String) throws -> FunctionEventRecord? {
        let s = try connection.prepare("SELECT \(Self.eventColumns) FROM function_events WHERE id = ?")
        defer { s.reset() }
        s.bind(1, id)
        return try s.step() ? Self.event(s) : nil
    }

    static func event(_ s: Statement) -> FunctionEventRecord {
        var record = FunctionEventRecord(id: s.text(1), endpoint: s.text(2), orderingKey: s.text(3), body: s.blob(4),
                                         createdAt: Timestamp(microseconds: s.int(5)))
        record.sequence = s.int(0)
        record.queuedAt = Timestamp(microseconds: s.int(6))
        record.attempts = Int(s.int(7))
        record.nextAttemptAt = Timestamp(microseconds: s.int(8))
        record.lastError = s.isNull(9) ? nil : s.text(9)
        record.deadAt = s.isNull(10) ? nil : Timestamp(microseconds: s.int(10))
        return record
    }
}

extension WriteContext {
    static let insertEventSQL = CachedSQL("""
        INSERT INTO function_events(id, endpoint, ordering_key, body, created_at, queued_at, attempts, next_attempt_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """)
    static let removeEventSQL = CachedSQL("DELETE FROM function_events WHERE id = ? AND dead_at IS NULL RETURNING ordering_key")
    static let keyPendingSQL = CachedSQL("SELECT 1 FROM function_events WHERE ordering_key = ? AND dead_at IS NULL LIMIT 1")

    /// Queues events, in order, in this transaction.
    public func addFunctionEvents(_ events: [FunctionEventRecord]) throws {
        try Self.addFunctionEvents(events, on: connection)
    }

    /// Queues events, in order, on the writer's connection: for a job that runs on the store's writer
    /// without a `WriteContext` (an account change, through `SQLiteAccess`).
    package static func addFunctionEvents(_ events: [FunctionEventRecord], on connection: SQLiteConnection) throws {
        let s = try connection.prepare(insertEventSQL)
        defer { s.reset() }
        for event in events {
            s.reset()
            s.bind(1, event.id)
            s.bind(2, event.endpoint)
            s.bind(3, event.orderingKey)
            s.bind(4, event.body)
            s.bind(5, event.createdAt.microseconds)
            s.bind(6, event.queuedAt.microseconds)
            s.bind(7, Int64(event.attempts))
            s.bind(8, event.nextAttemptAt.microseconds)
            try s.run()
        }
    }

    /// Removes a pending event (delivered); answers whether it was there and pending, and whether later events
    /// of its ordering key are pending (they waited for it, and may go now).
    @discardableResult
    public func removePendingFunctionEvent(id: String) throws -> (removed: Bool, laterPending: Bool) {
        let remove = try connection.prepare(Self.removeEventSQL)
        defer { remove.reset() }
        remove.bind(1, id)
        guard try remove.step() else { return (false, false) }
        let later = try connection.prepare(Self.keyPendingSQL)
        defer { later.reset() }
        later.bind(1, remove.text(0))
        return (true, try later.step())
    }

    /// Records an attempt's outcome on a pending event: when to try next, the error, and when it died (nil:
    /// still pending); returns whether the event was there and pending.
    @discardableResult
    public func recordFunctionEventAttempt(id: String, attempts: Int, nextAttemptAt: Timestamp, lastError: String,
                                           deadAt: Timestamp?) throws -> Bool {
        let s = try connection.prepare("""
            UPDATE function_events SET attempts = ?, next_attempt_at = ?, last_error = ?, dead_at = ?
            WHERE id = ? AND dead_at IS NULL
            """)
        defer { s.reset() }
        s.bind(1, Int64(attempts))
        s.bind(2, nextAttemptAt.microseconds)
        s.bind(3, lastError)
        if let deadAt { s.bind(4, deadAt.microseconds) } else { s.bindNull(4) }
        s.bind(5, id)
        try s.run()
        return connection.changes > 0
    }

    /// Makes a dead event pending again, due at `now` and queued anew (its maximum age counts from `now`), at
    /// the end of the queue; returns whether a dead event had that id.
    @discardableResult
    public func requeueDeadFunctionEvent(id: String, now: Timestamp) throws -> Bool {
        guard let event = try reader.functionEvent(id: id), event.deadAt != nil else { return false }
        let delete = try connection.prepare("DELETE FROM function_events WHERE id = ?")
        defer { delete.reset() }
        delete.bind(1, id)
        try delete.run()
        var again = event
        again.queuedAt = now
        again.nextAttemptAt = now
        try addFunctionEvents([again])
        let s = try connection.prepare("UPDATE function_events SET attempts = ?, last_error = ? WHERE id = ?")
        defer { s.reset() }
        s.bind(1, Int64(event.attempts))
        if let error = event.lastError { s.bind(2, error) } else { s.bindNull(2) }
        s.bind(3, id)
        try s.run()
        return true
    }
}

import HearthCore
import HearthSQLite

/// Pending function timers (`function_timers`, read by due time through its index, never whole) and the
/// schedules' last slots (`function_schedules`). Which documents arm which timers is the engine's.
extension ReadContext {
    /// Up to `limit` timers due at `now`, earliest first.
    public func dueFunctionTimers(now: Timestamp, limit: Int) throws -> [FunctionTimerRecord] {
        let s = try connection.prepare("""
            SELECT name, path, due_at FROM function_timers WHERE due_at <= ? ORDER BY due_at LIMIT ?
            """)
        defer { s.reset() }
        s.bind(1, now.microseconds)
        s.bind(2, Int64(max(0, limit)))
        var out: [FunctionTimerRecord] = []
        while try s.step() {
            out.append(FunctionTimerRecord(name: s.text(0), path: s.text(1), dueAt: Timestamp(microseconds: s.int(2))))
        }
        return out
    }

    /// When the earliest pending timer is due, or nil when none is pending.
    public func nextFunctionTimer() throws -> Timestamp? {
        let s = try connection.prepare("SELECT due_at FROM function_timers ORDER BY due_at LIMIT 1")
        defer { s.reset() }
        return try s.step() ? Timestamp(microseconds: s.int(0)) : nil
    }

    /// How many timers are pending.
    public func functionTimerCount() throws -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM function_timers") ?? 0)
    }

    /// When the timer `name` of the document at `path` is due, or nil when it is not armed.
    public func functionTimer(name: String, path: String) throws -> Timestamp? {
        let s = try connection.prepare("SELECT due_at FROM function_timers WHERE name = ? AND path = ?")
        defer { s.reset() }
        s.bind(1, name)
        s.bind(2, path)
        return try s.step() ? Timestamp(microseconds: s.int(0)) : nil
    }

    /// What is kept of the schedule `name`, or nil when it never ran.
    public func functionSchedule(name: String) throws -> FunctionScheduleState? {
        let s = try connection.prepare("SELECT spec, last_slot FROM function_schedules WHERE name = ?")
        defer { s.reset() }
        s.bind(1, name)
        return try s.step() ? FunctionScheduleState(spec: s.text(0), lastSlot: Timestamp(microseconds: s.int(1))) : nil
    }
}

extension WriteContext {
    /// Arms the timer `name` of the document at `path` for `due` (replacing its earlier time), or drops it (nil).
    public func setFunctionTimer(name: String, path: String, due: Timestamp?) throws {
        let s: Statement
        if let due {
            s = try connection.prepare("INSERT OR REPLACE INTO function_timers(name, path, due_at) VALUES (?, ?, ?)")
            s.bind(3, due.microseconds)
        } else {
            s = try connection.prepare("DELETE FROM function_timers WHERE name = ? AND path = ?")
        }
        defer { s.reset() }
        s.bind(1, name)
        s.bind(2, path)
        try s.run()
    }

    /// Records the slot a schedule last fired, with the expression it ran with.
    public func setFunctionSchedule(name: String, _ state: FunctionScheduleState) throws {
        let s = try connection.prepare("INSERT OR REPLACE INTO function_schedules(name, spec, last_slot) VALUES (?, ?, ?)")
        defer { s.reset() }
        s.bind(1, name)
        s.bind(2, state.spec)
        s.bind(3, state.lastSlot.microseconds)
        try s.run()
    }
}

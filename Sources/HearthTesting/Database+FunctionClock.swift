import HearthCore
import HearthEngine

extension Database {
    /// Runs the timers or schedules at a time the test chose, and answers what the run did.
    public func runFunctionClock(_ operation: FunctionsOperation) async throws -> FunctionClockOutcome {
        guard case .functionClock(let outcome) = try await perform(.functions(operation), as: .admin) else {
            throw ExpectationFailure("not a timers or schedules outcome")
        }
        return outcome
    }

    /// When the timer `name` of the document at `path` is due, or nil when it is not armed.
    public func functionTimer(_ name: String, _ path: String) async throws -> Timestamp? {
        try await storage.read { try $0.functionTimer(name: name, path: path) }
    }

    /// What is kept of the schedule `name`, or nil when it never ran.
    public func functionSchedule(_ name: String) async throws -> FunctionScheduleState? {
        try await storage.read { try $0.functionSchedule(name: name) }
    }

    /// The pending function events, in queue order.
    public func pendingFunctionEvents() async throws -> [FunctionEventRecord] {
        guard case .functionEvents(let events) = try await perform(.functions(.events(dead: false, after: 0, limit: 1000)), as: .admin) else {
            throw ExpectationFailure("not a list of events")
        }
        return events
    }
}

extension Timestamp {
    /// A time written in RFC 3339 (`2026-03-29T01:00:00Z`), for tests' tables; traps on a malformed one.
    public static func at(_ text: String) -> Timestamp {
        guard let time = Timestamp(rfc3339: text) else { fatalError("not an RFC 3339 time: \(text)") }
        return time
    }
}

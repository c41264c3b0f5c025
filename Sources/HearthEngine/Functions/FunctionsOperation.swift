import HearthCore

/// An event's 2xx answer: its id and the writes the answer carries (none for most).
public struct FunctionAcknowledgement: Sendable {
    /// The event's id.
    public var id: String
    /// The answer's writes, committed with the event's removal.
    public var writes: [Write]

    /// Makes an acknowledgement.
    public init(id: String, writes: [Write] = []) {
        self.id = id
        self.writes = writes
    }
}

/// What became of an acknowledgement (`FunctionsOperation.delivered`).
public struct AcknowledgementOutcome: Sendable {
    /// Why the answer's writes were not committed (the event stays pending), or nil: committed, or the event
    /// was no longer pending.
    public var error: (any Error)?
    /// Whether later events of the event's ordering key are pending: they waited for it, and may go now.
    public var laterPending: Bool

    public init(error: (any Error)? = nil, laterPending: Bool = false) {
        self.error = error
        self.laterPending = laterPending
    }
}

/// An operation on the queue of function events: what the admin endpoints and the delivery service ask.
public enum FunctionsOperation: Sendable {
    /// Up to `limit` pending (or dead) events after sequence `after`, in sequence order.
    case events(dead: Bool, after: Int64, limit: Int)
    /// One event by id (nil in the outcome's list when missing).
    case event(id: String)
    /// Up to `limit` events due now, each the first pending one of its ordering key, skipping those in flight
    /// and those of the endpoints in `excluding` (which have as many in flight as they may).
    case due(skipping: Set<Int64>, excluding: Set<String> = [], limit: Int)
    /// Events were acknowledged: each one's answer's writes are committed as the admin in the transaction that
    /// removes it, so their effect happens once; nothing is written for an event no longer pending. Given
    /// together, they commit in one round of the group commit. Answers `.acknowledged`, one entry each.
    case delivered([FunctionAcknowledgement])
    /// An attempt failed: the event is tried again at `nextAttemptAt`, or is dead (`dead`), with `error`.
    case failed(id: String, attempts: Int, nextAttemptAt: Timestamp, error: String, dead: Bool)
    /// A dead event is made pending again, due now.
    case retry(id: String)
    /// Fires up to `limit` timers due at `now` (the clock of the caller, which tests may move): each becomes an
    /// event in the transaction that removes it. Answers how many fired and when the next is due.
    case fireTimers(now: Timestamp, limit: Int)
    /// When the next timer is due, and (`count`) how many are pending.
    case timers(count: Bool)
    /// Runs the schedules of the file in force at `now`: each fires at most once, for its latest slot due.
    /// Answers how many fired and when the next slot is due.
    case runSchedules(now: Timestamp)

    /// Whether it writes.
    public var writes: Bool {
        switch self {
        case .events, .event, .due, .timers: return false
        case .delivered, .failed, .retry, .fireTimers, .runSchedules: return true
        }
    }
}

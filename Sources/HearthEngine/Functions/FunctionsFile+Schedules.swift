import Foundation
import HearthCore

/// Schedules: which slot is due, and the event it sends. A run missed while the server was down fires once,
/// for the latest slot missed; the slot fired is kept (`FunctionScheduleState`) so no slot fires twice.
extension FunctionsFile.Schedule {
    /// The expression and time zone as one text: a schedule whose `spec` changed starts again from now
    /// rather than catching up on slots of its old expression.
    public var spec: String { "\(cron.description) \(timeZone.identifier)" }

    /// The first slot after `after`.
    public func next(after: Timestamp) -> Timestamp? { cron.next(after: after, in: timeZone) }

    /// The latest slot after `last` and at or before `now`, or nil when none is due: the one slot a run that
    /// missed several fires for.
    public func latestSlot(after last: Timestamp, through now: Timestamp) -> Timestamp? {
        guard var slot = next(after: last), slot <= now else { return nil }
        // Skip most of a long outage at once: the last two days hold the latest slot when any of them does.
        let recent = Timestamp(microseconds: now.microseconds - 2 * 86_400_000_000)
        if recent > slot, let near = next(after: recent), near <= now { slot = near }
        while let later = next(after: slot), later <= now { slot = later }
        return slot
    }

    /// The event of one slot: `{"id", "type": "schedule", "name", "time", "schedule": {"name", "scheduledTime"}}`,
    /// where `time` is when the slot was due.
    func event(slot: Timestamp, queuedAt: Timestamp, makeID: () -> String) -> FunctionEventRecord {
        let id = makeID()
        var w = JSONWriter()
        w.raw("{\"id\":")
        w.string(id)
        w.raw(",\"type\":\"schedule\",\"name\":")
        w.string(name)
        w.raw(",\"time\":\"")
        w.rfc3339(slot)
        w.raw("\",\"schedule\":{\"name\":")
        w.string(name)
        w.raw(",\"scheduledTime\":\"")
        w.rfc3339(slot)
        w.raw("\"}}")
        return FunctionEventRecord(id: id, endpoint: endpoint, orderingKey: "\(endpoint)/schedule/\(name)",
                                   body: w.bytes, createdAt: queuedAt)
    }
}

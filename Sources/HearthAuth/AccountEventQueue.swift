import HearthCore
import HearthSQLite

/// A change to an account that others may want to hear of.
public enum AccountChange: Sendable {
    /// The account was made (sign-up, anonymous sign-in, the admin API, a fixture, `hearth users create`).
    case created
    /// The account was deleted (by its owner or the admin).
    case deleted
}

/// What queues, inside an account change's own write job, the events it causes (the engine's function
/// events): so the change and its events are committed together or not at all. `SQLiteAuthStorage` calls
/// it on the writer's connection; the accounts know nothing of triggers or of the queue's table.
package protocol AccountEventQueue: Sendable {
    /// Queues the events of `change` to `user` (as stored: before its deletion for `.deleted`), at `time`.
    func queue(_ change: AccountChange, _ user: UserRecord, at time: Timestamp, on connection: SQLiteConnection) throws
    /// Told once such a change is durable, so that its events are delivered without waiting.
    func committed()
}

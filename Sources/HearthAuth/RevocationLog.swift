import HearthCore

/// The log of revocations that storage shared between processes keeps, so that a server hears of sessions
/// another process on the same data folder revoked (`RevocationWatcher` reads it).
public protocol RevocationLog: Sendable {
    /// The sequence number of the newest logged revocation (0 when none was ever logged).
    func latestRevocationSequence() throws(HearthError) -> Int64
    /// The sequence number of the oldest revocation the log still holds (nil when it is empty).
    func oldestRevocationSequence() throws(HearthError) -> Int64?
    /// Revocations logged after `sequence`, oldest first, at most `limit`, each with its sequence number.
    func revocations(after sequence: Int64, limit: Int) throws(HearthError) -> [(sequence: Int64, event: RevocationEvent)]
}

import HearthCore

extension AuthService {
    /// What a sweep removed.
    public struct SweepReport: Sendable, Hashable {
        /// Ended sessions deleted.
        public var sessions: Int
        /// Expired one-time tokens deleted.
        public var oneTimeTokens: Int
    }

    /// Deletes ended sessions and expired one-time tokens and forgets stale throttle entries. Run it
    /// periodically (the server's session sweeper).
    @discardableResult
    public func sweep() async throws(HearthError) -> SweepReport {
        let time = now()
        let sessions = try await storage.deleteSessions(endedBefore: time)
        let tokens = try await storage.deleteOneTimeTokens(expiredBefore: time)
        loginThrottle.withLock { $0.sweep() }
        mailThrottle.withLock { $0.sweep() }
        creationThrottle.withLock { $0.sweep() }
        return SweepReport(sessions: sessions, oneTimeTokens: tokens)
    }
}

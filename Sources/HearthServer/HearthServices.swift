import HearthAuth
import HearthEngine

/// The parts of a running Hearth server that callers (the CLI, the tests) may need.
public struct HearthServices: Sendable {
    /// The database engine.
    public let database: Database
    /// The admin key in force.
    public let adminKey: AdminKey
    /// The server's metrics.
    public let metrics: ServerMetrics
    /// Accounts and sessions.
    public let auth: AuthService
    /// Live updates.
    public let feed: ChangeFeed
}

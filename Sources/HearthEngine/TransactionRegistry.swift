import Foundation
import HearthCore

/// Open optimistic transactions: the versions of the documents each has read, checked again at commit.
/// A transaction expires 270 s after it began or 60 s after its last use (Firestore's limits).
public final class TransactionRegistry: @unchecked Sendable {
    /// Lifetimes and bounds.
    public struct Configuration: Sendable {
        /// Longest life of a transaction, in seconds.
        public var maxLifetime: Double = 270
        /// Longest idle time, in seconds.
        public var maxIdle: Double = 60
        /// Most open transactions at once; beyond it, `begin` answers resource-exhausted.
        public var maxOpen: Int = 10_000
        /// Makes the default configuration.
        public init() {}
    }

    struct Entry {
        let identity: Identity
        let started: Double
        var lastUsed: Double
        /// Each read document's update time, or nil when it was missing.
        var reads: [DocumentPath: Timestamp?] = [:]
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private let configuration: Configuration
    private let now: @Sendable () -> Double

    /// Makes a registry; `now` is a monotonic clock in seconds (injectable for tests).
    public init(configuration: Configuration = .init(), now: @escaping @Sendable () -> Double = TransactionRegistry.monotonicSeconds) {
        self.configuration = configuration
        self.now = now
    }

    /// Seconds from a monotonic clock.
    public static func monotonicSeconds() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    /// Opens a transaction for an identity and returns its id.
    public func begin(identity: Identity) throws(HearthError) -> String {
        let t = now()
        lock.lock()
        defer { lock.unlock() }
        sweepLocked(t)
        if entries.count >= configuration.maxOpen {
            throw .resourceExhausted("too many open transactions (\(configuration.maxOpen)); commit or roll back some")
        }
        let id = makeAutoID() + makeAutoID()
        entries[id] = Entry(identity: identity, started: t, lastUsed: t)
        return id
    }

    /// Records that the transaction read a document at a version (nil = missing). The first read of a path wins.
    public func recordRead(_ id: String, identity: Identity, path: DocumentPath, version: Timestamp?) throws(HearthError) {
        let t = now()
        lock.lock()
        defer { lock.unlock() }
        var entry = try liveEntryLocked(id, identity: identity, at: t)
        if entry.reads[path] == nil { entry.reads[path] = .some(version) }
        entry.lastUsed = t
        entries[id] = entry
    }

    /// Checks the transaction is open for this identity, touching it.
    public func touch(_ id: String, identity: Identity) throws(HearthError) {
        let t = now()
        lock.lock()
        defer { lock.unlock() }
        var entry = try liveEntryLocked(id, identity: identity, at: t)
        entry.lastUsed = t
        entries[id] = entry
    }

    /// Ends the transaction and returns the versions it read, for the commit to check.
    public func finish(_ id: String, identity: Identity) throws(HearthError) -> [DocumentPath: Timestamp?] {
        let t = now()
        lock.lock()
        defer { lock.unlock() }
        let entry = try liveEntryLocked(id, identity: identity, at: t)
        entries[id] = nil
        return entry.reads
    }

    /// Ends the transaction without committing.
    public func rollback(_ id: String, identity: Identity) throws(HearthError) {
        let t = now()
        lock.lock()
        defer { lock.unlock() }
        _ = try liveEntryLocked(id, identity: identity, at: t)
        entries[id] = nil
    }

    /// How many transactions are open.
    public var openCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    private func liveEntryLocked(_ id: String, identity: Identity, at t: Double) throws(HearthError) -> Entry {
        guard let entry = entries[id], entry.identity == identity else {
            throw .invalidArgument("transaction '\(id.prefix(64))' has expired or is not valid")
        }
        if t - entry.started > configuration.maxLifetime || t - entry.lastUsed > configuration.maxIdle {
            entries[id] = nil
            throw .invalidArgument("transaction '\(id.prefix(64))' has expired or is not valid")
        }
        return entry
    }

    private func sweepLocked(_ t: Double) {
        entries = entries.filter { t - $0.value.started <= configuration.maxLifetime && t - $0.value.lastUsed <= configuration.maxIdle }
    }
}

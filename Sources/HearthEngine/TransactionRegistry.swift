import Foundation
import HearthCore

/// Open optimistic transactions: the versions of the documents each has read, checked again at commit.
/// A transaction expires 270 s after it began or 60 s after its last use (Firestore's limits).
///
/// What a transaction costs is its entry and its read set, so both are bounded: the table as a whole, each
/// caller's share of it (a signed-in user, or the address of callers without a token), each address's share
/// whoever the callers are, and the documents one transaction may read. One caller filling its share never
/// keeps another from beginning.
public final class TransactionRegistry: @unchecked Sendable {
    /// Lifetimes and bounds.
    public struct Configuration: Sendable {
        /// Longest life of a transaction.
        public var maxLifetime: Duration = .seconds(270)
        /// Longest idle time.
        public var maxIdle: Duration = .seconds(60)
        /// Most open transactions at once; beyond it, `begin` answers resource-exhausted.
        public var maxOpen: Int = 10_000
        /// Most open transactions of one caller: a signed-in user, or an address for callers without a token.
        public var maxOpenPerCaller: Int = 20
        /// Most open transactions begun from one address, whoever the callers (apart from the admin).
        public var maxOpenPerAddress: Int = 200
        /// Most documents one transaction may read (each is remembered until the commit).
        public var maxReads: Int = 10_000
        /// Makes the default configuration.
        public init() {}
    }

    /// Who a transaction counts against, besides the table as a whole.
    public struct Caller: Sendable, Equatable {
        /// The caller's identity.
        public var identity: Identity
        /// The address the request came from, when known.
        public var address: String?

        /// Makes a caller.
        public init(_ identity: Identity, address: String? = nil) {
            self.identity = identity
            self.address = address
        }

        /// The share it draws on: its user, or its address when it has no user; nil for the admin.
        var share: String? {
            if identity.isAdmin { return nil }
            if let uid = identity.uid { return "user:" + uid }
            return address.map { "address:" + $0 }
        }

        /// The address whose share it draws on too; nil for the admin.
        var addressShare: String? {
            identity.isAdmin ? nil : address
        }
    }

    struct Entry {
        let identity: Identity
        let share: String?
        let address: String?
        let started: Double
        var lastUsed: Double
        /// Each read document's update time, or nil when it was missing.
        var reads: [DocumentPath: Timestamp?] = [:]
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var openByShare: [String: Int] = [:]
    private var openByAddress: [String: Int] = [:]
    private var lastSweep: Double = -.infinity
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

    /// Opens a transaction for a caller and returns its id.
    public func begin(_ caller: Caller) throws(HearthError) -> String {
        let t = now()
        lock.lock()
        defer { lock.unlock() }
        // Expired entries go at most once a second, or when a bound is reached, so a burst of begins does not
        // walk the whole table each time.
        let share = caller.share, address = caller.addressShare
        if t - lastSweep >= 1 || entries.count >= configuration.maxOpen || isFull(share, address) {
            sweepLocked(t)
        }
        if let share, openByShare[share, default: 0] >= configuration.maxOpenPerCaller {
            throw .resourceExhausted("too many open transactions for this caller (\(configuration.maxOpenPerCaller)); "
                                     + "commit or roll back some, or let them expire (\(Int(configuration.maxIdle.inSeconds)) s idle)")
        }
        if let address, openByAddress[address, default: 0] >= configuration.maxOpenPerAddress {
            throw .resourceExhausted("too many open transactions from this address (\(configuration.maxOpenPerAddress)); "
                                     + "commit or roll back some, or let them expire (\(Int(configuration.maxIdle.inSeconds)) s idle)")
        }
        if entries.count >= configuration.maxOpen {
            throw .resourceExhausted("too many open transactions (\(configuration.maxOpen)); commit or roll back some")
        }
        let id = makeAutoID() + makeAutoID()
        entries[id] = Entry(identity: caller.identity, share: share, address: address, started: t, lastUsed: t)
        if let share { openByShare[share, default: 0] += 1 }
        if let address { openByAddress[address, default: 0] += 1 }
        return id
    }

    /// Records that the transaction read a document at a version (nil = missing). The first read of a path wins.
    public func recordRead(_ id: String, identity: Identity, path: DocumentPath, version: Timestamp?) throws(HearthError) {
        let t = now()
        lock.lock()
        defer { lock.unlock() }
        var entry = try liveEntryLocked(id, identity: identity, at: t)
        if entry.reads[path] == nil {
            guard entry.reads.count < configuration.maxReads else {
                throw .resourceExhausted("a transaction may read at most \(configuration.maxReads) documents")
            }
            entry.reads[path] = .some(version)
        }
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
        removeLocked(id)
        return entry.reads
    }

    /// Ends the transaction without committing.
    public func rollback(_ id: String, identity: Identity) throws(HearthError) {
        let t = now()
        lock.lock()
        defer { lock.unlock() }
        _ = try liveEntryLocked(id, identity: identity, at: t)
        removeLocked(id)
    }

    /// How many transactions are open (expired ones may still count until the next sweep).
    public var openCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    private func isFull(_ share: String?, _ address: String?) -> Bool {
        share.map { openByShare[$0, default: 0] >= configuration.maxOpenPerCaller } == true
            || address.map { openByAddress[$0, default: 0] >= configuration.maxOpenPerAddress } == true
    }

    private func isExpired(_ entry: Entry, at t: Double) -> Bool {
        t - entry.started > configuration.maxLifetime.inSeconds || t - entry.lastUsed > configuration.maxIdle.inSeconds
    }

    private func liveEntryLocked(_ id: String, identity: Identity, at t: Double) throws(HearthError) -> Entry {
        guard let entry = entries[id], entry.identity == identity else {
            throw .invalidArgument("transaction '\(id.prefix(64))' has expired or is not valid")
        }
        if isExpired(entry, at: t) {
            removeLocked(id)
            throw .invalidArgument("transaction '\(id.prefix(64))' has expired or is not valid")
        }
        return entry
    }

    private func removeLocked(_ id: String) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        if let share = entry.share { decrement(&openByShare, share) }
        if let address = entry.address { decrement(&openByAddress, address) }
    }

    private func decrement(_ counts: inout [String: Int], _ key: String) {
        let left = counts[key, default: 1] - 1
        counts[key] = left > 0 ? left : nil
    }

    private func sweepLocked(_ t: Double) {
        lastSweep = t
        for (id, entry) in entries where isExpired(entry, at: t) { removeLocked(id) }
    }
}

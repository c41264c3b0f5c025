import Foundation
import HearthCore
import Synchronization

/// One client's live-update session: its identity, its targets, and the bounded queue of events for it.
/// The protocol layer calls `listen`/`unlisten` as messages arrive and sends what `takeReady` answers.
public final class ListenConnection: @unchecked Sendable {
    /// The connection's number, unique in this server.
    public let id: Int
    let feed: ChangeFeed
    let queue: EventQueue
    private let lock = NSLock()
    private var identityValue: Identity
    private var sessionValue: ListenSession?
    private var expiresValue: ContinuousClock.Instant?
    /// The serial of each current target: events of earlier targets with a reused id are dropped.
    private var targets: [String: Int] = [:]
    private var nextSerial = 0
    private var closed = false

    init(id: Int, feed: ChangeFeed, identity: Identity, session: ListenSession?, expires: ContinuousClock.Instant?) {
        self.id = id
        self.feed = feed
        self.identityValue = identity
        self.sessionValue = session
        self.expiresValue = expires
        self.queue = EventQueue(limit: feed.configuration.maxQueuedEvents)
        feed.connectionObjectCount.add(1, ordering: .relaxed)
    }

    deinit { feed.connectionObjectCount.subtract(1, ordering: .relaxed) }

    /// Who the connection acts as.
    public var identity: Identity { lock.withLock { identityValue } }
    /// The session the credentials belong to, when they are a user's.
    public var session: ListenSession? { lock.withLock { sessionValue } }
    /// Targets open now.
    public var targetCount: Int { lock.withLock { targets.count } }
    /// When the access token the connection acts with stops working (nil for the admin key and for no
    /// credentials): the connection ends then unless the client sends a fresh token first.
    public var credentialsExpire: ContinuousClock.Instant? { lock.withLock { expiresValue } }

    /// Sets the credentials sent in an `auth` message. On a connection without credentials, only before its
    /// first target. On a user's connection, a fresh token of the same account (after a refresh, or from
    /// another sign-in) replaces the one it acts with, so that it keeps working past the old token's expiry;
    /// its open targets are then decided again with the new identity, as when the account's claims change.
    public func authenticate(_ identity: Identity, session: ListenSession?, expires: ContinuousClock.Instant?) throws(HearthError) {
        lock.lock()
        switch (identityValue, identity) {
        case (.unauthenticated, _):
            guard targets.isEmpty else {
                lock.unlock()
                throw .failedPrecondition("auth must come before the first listen")
            }
            identityValue = identity
            sessionValue = session
            expiresValue = expires
            lock.unlock()
        case (.user(let uid, _), .user(let freshUID, _)) where uid == freshUID && !closed:
            identityValue = identity
            sessionValue = session
            expiresValue = expires
            lock.unlock()
            feed.send(.identityChanged(connection: id, identity: identity))
        default:
            lock.unlock()
            throw .failedPrecondition(
                "the connection is already authenticated; only a fresh token of the same account may replace its token (open a new connection to change accounts)")
        }
    }

    /// Takes the identity its session has now (its account's claims changed); later checks use it.
    func refresh(_ identity: Identity) {
        lock.withLock { identityValue = identity }
    }

    /// Adds a target: checked against the limits and the rules now, its first snapshot follows as an event.
    public func listen(id targetID: String, target asked: ListenTarget, resumeToken: String?) throws(HearthError) {
        let limits = feed.configuration
        guard !targetID.isEmpty, targetID.utf8.count <= limits.maxTargetIDBytes else {
            throw .invalidArgument("target id must be 1 to \(limits.maxTargetIDBytes) bytes")
        }
        let resume = try resumeToken.map { token throws(HearthError) in try LogPosition(resumeToken: token) }
        lock.lock()
        guard !closed else {
            lock.unlock()
            throw .unavailable("the connection is closed")
        }
        guard targets[targetID] == nil else {
            lock.unlock()
            throw .alreadyExists("target id '\(targetID)' is already listening; unlisten it first or choose another id")
        }
        guard targets.count < limits.maxTargetsPerConnection else {
            lock.unlock()
            throw .resourceExhausted("a connection may hold at most \(limits.maxTargetsPerConnection) targets")
        }
        nextSerial += 1
        let (identity, serial) = (identityValue, nextSerial)
        lock.unlock()
        // Read before deciding: if the rules change meanwhile, the feed sees an older generation and decides again.
        let rulesGeneration = feed.database.rules.generation
        let target: ListenTarget
        do {
            target = try feed.authorizer.admitTarget(identity, asked)
        } catch let error as HearthError {
            throw error
        } catch {
            throw .permissionDenied()
        }
        // Ended meanwhile (revoked, expired): a target added now would be kept for a connection the feed let go.
        guard lock.withLock({ () -> Bool in
            if closed { return false }
            targets[targetID] = serial
            return true
        }) else { throw .unavailable("the connection is closed") }
        feed.send(.add(Subscriber(connection: self, targetID: targetID, serial: serial, identity: identity,
                                  target: target, resume: resume, rulesGeneration: rulesGeneration)))
    }

    /// Removes a target; no event of it follows.
    public func unlisten(id targetID: String) throws(HearthError) {
        let serial = lock.withLock { targets.removeValue(forKey: targetID) }
        guard let serial else { throw .notFound("no target with id '\(targetID.prefix(256))' is listening") }
        feed.send(.remove(connection: id, targetID: targetID, serial: serial))
    }

    /// Makes the connection call `ready` whenever events wait to be sent that its writer was not told of,
    /// from whichever thread queued them; the writer then calls `takeReady` until it answers no events, where
    /// it runs (an event loop) instead of in a task of its own.
    public func onEventsReady(_ ready: @escaping @Sendable () -> Void) {
        queue.onReady(ready)
    }

    /// The events to send now (every one queued, up to `max`), without waiting. With `writable` false (the
    /// client reads slowly) none are taken unless the connection is over, whose last event always goes out.
    /// No events and `finished` false: the writer is told again when there are. `finished`: the connection
    /// is over once these are sent.
    public func takeReady(max: Int = 64, writable: Bool = true) -> (events: [ListenEvent], finished: Bool) {
        while true {
            var taken = queue.takeReady(max: max, writable: writable)
            if taken.events.isEmpty { return taken }
            taken.events.removeAll(where: isStale)
            if !taken.events.isEmpty || taken.finished { return taken }
        }
    }

    /// Events waiting to be sent.
    public var queuedEvents: Int { queue.count }

    /// Ends the connection (the client left): every target is dropped.
    public func close() {
        lock.withLock {
            closed = true
            targets.removeAll()
        }
        queue.finish(with: nil)
        feed.send(.disconnect(connection: id))
    }

    /// A snapshot of a target that was unlistened (or whose id was reused) since it was queued: not sent.
    private func isStale(_ event: ListenEvent) -> Bool {
        if case .snapshot(let s) = event { return !isCurrent(s.targetID, s.serial) }
        return false
    }

    func isCurrent(_ targetID: String, _ serial: Int) -> Bool {
        lock.withLock { targets[targetID] == serial }
    }

    /// Forgets a target the feed ended (with an error queued for it).
    func targetEnded(_ targetID: String, serial: Int, error: HearthError) {
        let current = lock.withLock { () -> Bool in
            guard targets[targetID] == serial else { return false }
            targets[targetID] = nil
            return true
        }
        // A full queue ends the whole connection, which the feed does right after.
        if current { _ = queue.push(.targetError(id: targetID, error: error)) }
    }

    /// Queues a reply to a client's message (a pong or an error). Replies are bounded by the message rate, not
    /// by the event limit, so that a client is always told what went wrong.
    public func reply(_ event: ListenEvent) {
        queue.pushControl(event)
    }

    /// Ends the connection from the server's side with a last event (sent before the close frame).
    public func terminate(_ error: HearthError, closeCode: UInt16) {
        lock.withLock {
            closed = true
            targets.removeAll()
        }
        queue.finish(with: .closed(error: error, closeCode: closeCode))
    }
}

/// The signed-in session a connection's credentials belong to, so that revoking it ends the connection.
public struct ListenSession: Sendable, Hashable {
    /// The account.
    public var uid: String
    /// The session.
    public var sessionID: String

    /// Makes a session reference.
    public init(uid: String, sessionID: String) {
        self.uid = uid
        self.sessionID = sessionID
    }
}

/// One target of one connection, as the feed tracks it.
struct Subscriber: Sendable {
    let connection: ListenConnection
    let targetID: String
    let serial: Int
    var identity: Identity
    let target: ListenTarget
    let resume: LogPosition?
    /// The rules generation (`RulesInForce.generation`) read before the target was authorized.
    let rulesGeneration: Int
}

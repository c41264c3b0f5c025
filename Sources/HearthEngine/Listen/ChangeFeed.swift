import Foundation
import HearthAuth
import HearthCore
import Logging
import ServiceLifecycle
import Synchronization

/// Live updates: fed by the change log after each commit, it matches each change against the open targets
/// (found through indexes by document, collection and collection group, never by visiting every target),
/// keeps one view per distinct query shared by its listeners, and queues snapshots for their connections.
///
/// Everything it tracks is touched only by `run`'s loop, in the order messages arrive: commits in commit
/// order, target changes in the order connections made them. A target's first result is read at a known
/// change-log position, and only later changes are applied to it.
public final class ChangeFeed: Service, Sendable {
    /// Limits and timings.
    public let configuration: ListenConfiguration
    let database: Database
    let authorizer: ListenAuthorizer
    let revocations: RevocationHub?
    /// A session's identity as it is now, to follow a change of its account's claims; nil when unknown.
    let identities: (@Sendable (ListenSession) async throws -> Identity?)?
    let logger: Logger
    let inbox: AsyncStream<FeedMessage>.Continuation
    /// Where commits wait while no view is open.
    let handOver: CommitHandOver
    let messages: AsyncStream<FeedMessage>
    private let counter = ConnectionCounter()
    let openConnectionCount = Atomic<Int>(0)
    /// `ListenConnection` objects not yet freed, open or not.
    let connectionObjectCount = Atomic<Int>(0)

    /// Connections the feed serves now: connected and not yet ended (by the client leaving, or by the server:
    /// revoked, too slow, shutting down).
    public var openConnections: Int { openConnectionCount.load(ordering: .relaxed) }

    /// Commits dropped so far because the feed had `ListenConfiguration.maxQueuedChangeBytes` waiting (its
    /// views were read again instead).
    public var droppedCommits: Int { handOver.dropped }

    /// Starts following the database's commits; `run` processes them.
    public init(database: Database, configuration: ListenConfiguration = .init(), authorizer: ListenAuthorizer? = nil,
                revocations: RevocationHub? = nil, identities: (@Sendable (ListenSession) async throws -> Identity?)? = nil,
                logger: Logger = Logger(label: "hearth.listen")) {
        self.database = database
        self.configuration = configuration
        self.authorizer = authorizer ?? database.listenAuthorizer
        self.revocations = revocations
        self.identities = identities
        self.logger = logger
        let (messages, inbox) = AsyncStream<FeedMessage>.makeStream(bufferingPolicy: .unbounded)
        self.messages = messages
        self.inbox = inbox
        let handOver = CommitHandOver(inbox: inbox, maxQueuedBytes: configuration.maxQueuedChangeBytes)
        self.handOver = handOver
        database.storage.add(commitObserver: handOver)
        database.rules.onInstall { generation in inbox.yield(.rulesChanged(generation: generation)) }
    }

    /// Opens a connection acting as `identity` (`.unauthenticated` until an `auth` message, if any), whose
    /// credentials stop working at `expires` (nil: never, as for the admin key).
    public func connect(identity: Identity, session: ListenSession? = nil,
                        expires: ContinuousClock.Instant? = nil) -> ListenConnection {
        let connection = ListenConnection(id: counter.next(), feed: self, identity: identity, session: session,
                                          expires: expires)
        // Known from the start, so that revoking its session ends it even before its first target.
        send(.connect(connection))
        return connection
    }

    func send(_ message: FeedMessage) { inbox.yield(message) }

    /// Processes commits and target changes until graceful shutdown, then ends every connection with 1001.
    public func run() async throws {
        let state = FeedState(feed: self)
        // A stopped feed hears no more commits (the store may outlive it, as in tests and tools).
        defer { database.storage.remove(commitObserver: handOver) }
        // Discarding: a task group keeps each finished child until it is awaited, and this loop awaits none of
        // its loads, look-ups and checks, one per target added or changed.
        await withDiscardingTaskGroup { group in
            if let revocations {
                let events = revocations.events()
                group.addTask { [inbox] in
                    for await event in events.cancelOnGracefulShutdown() { inbox.yield(.revoke(event)) }
                }
            }
            for await message in messages.cancelOnGracefulShutdown() {
                if case .census(let reply) = message {
                    var census = state.census()
                    census.holdsTasks = !group.isEmpty
                    reply.resume(returning: census)
                    continue
                }
                state.handle(message, load: { request in
                    group.addTask { [database, inbox] in
                        do {
                            let result = try await database.storage.readAtPosition { context, position in
                                try ChangeFeed.load(request, context: context, at: position)
                            }
                            inbox.yield(.loaded(view: request.view, generation: request.generation, result: .success(result)))
                        } catch {
                            let failure = error as? HearthError ?? .internal()
                            inbox.yield(.loaded(view: request.view, generation: request.generation, result: .failure(failure)))
                        }
                    }
                }, refresh: { connection, session in
                    guard let identities = self.identities else { return }
                    group.addTask { [inbox, logger] in
                        do {
                            if let identity = try await identities(session) {
                                inbox.yield(.identityChanged(connection: connection, identity: identity))
                            } else {
                                // The session no longer works (revoked, or its account disabled or gone).
                                inbox.yield(.revoke(RevocationEvent(uid: session.uid, sessionIDs: [session.sessionID],
                                                                    reason: .sessionEnded)))
                            }
                        } catch {
                            // Not knowing is not a reason to end a listener; the next news looks again.
                            logger.warning("looking a listener's session up failed", metadata: ["error": "\(error)"])
                        }
                    }
                }, reauthorize: { subscribers in
                    // Off the loop: rules may read documents, and a reload re-checks every open target at once.
                    group.addTask { [authorizer, inbox] in
                        var denied: [Denial] = []
                        for subscriber in subscribers {
                            do {
                                _ = try authorizer.admitTarget(subscriber.identity, subscriber.target)
                            } catch {
                                denied.append(Denial(connection: subscriber.connection.id, serial: subscriber.serial,
                                                     error: error as? HearthError ?? .permissionDenied()))
                            }
                        }
                        if !denied.isEmpty { inbox.yield(.denied(denied)) }
                    }
                })
            }
            let open = state.connections.values.map(\.connection)
            state.closeAll(.unavailable("the server is shutting down; resume on another connection"), closeCode: 1001)
            // Give the connections a moment to send their close frames before the HTTP server stops.
            let deadline = ContinuousClock.now + .seconds(1)
            while open.contains(where: { $0.queuedEvents > 0 }) && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
            try? await Task.sleep(for: .milliseconds(50))
            group.cancelAll()
        }
    }
}

/// Hands commits to the feed's loop while it has a view open, and keeps only the latest hand-overs while it
/// has none: waking the loop for every commit that concerns no one cost creates server CPU for nothing
/// (`bench/README.md`).
///
/// What waits for the loop is bounded (`maxQueuedBytes`): when commits come faster than the loop takes them,
/// later ones are dropped until it has taken every one queued before, and then it is told to read every view
/// again (`.changesMissed`), which reads them all.
///
/// Nothing a view needs is lost. A view's first result is read at a change-log position after the view
/// starts listening (`startListening`, before its load is asked for), and only later changes are applied to
/// it. The store hands changes over in commit order, one hand-over at a time, after their `COMMIT` and before
/// their writers are acknowledged, so a result read later includes every one kept. The latest hand-overs kept
/// are given to the new view with the result's position deciding, as for any change that arrives while a
/// view loads.
final class CommitHandOver: CommitObserver {
    private struct State {
        var listening = false
        var parked: [[ChangeRecord]] = []
        /// Bytes of the commits queued for the loop and not taken yet.
        var queuedBytes = 0
        /// Whether commits were dropped since the loop last caught up.
        var dropping = false
        var dropped = 0
    }

    /// Hand-overs kept while no view is open; more than the one that can precede its commit, for margin.
    static let kept = 4
    private let state = Mutex(State())
    private let inbox: AsyncStream<FeedMessage>.Continuation
    let maxQueuedBytes: Int

    init(inbox: AsyncStream<FeedMessage>.Continuation, maxQueuedBytes: Int = ListenConfiguration().maxQueuedChangeBytes) {
        self.inbox = inbox
        self.maxQueuedBytes = maxQueuedBytes
    }

    /// What a commit's changes weigh while queued: the stored documents, and a little for each record.
    static func bytes(_ changes: [ChangeRecord]) -> Int {
        changes.reduce(0) { $0 + 64 + ($1.document?.data.count ?? 0) }
    }

    /// Commits dropped so far.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Called by the store for each hand-over, in commit order. The message is queued under the lock, so that
    /// hand-overs and a switch to listening are in one order.
    func committed(_ changes: [ChangeRecord]) {
        state.withLock { state in
            if state.listening {
                let size = Self.bytes(changes)
                // One commit always fits an empty queue, however large, or it would be dropped for good.
                if state.dropping || (state.queuedBytes > 0 && state.queuedBytes + size > maxQueuedBytes) {
                    state.dropping = true
                    state.dropped += 1
                    return
                }
                state.queuedBytes += size
                inbox.yield(.commit(changes))
            } else {
                if state.parked.count == Self.kept { state.parked.removeFirst() }
                state.parked.append(changes)
            }
        }
    }

    /// From now on every hand-over reaches the loop; returns those kept meanwhile, oldest first.
    func startListening() -> [[ChangeRecord]] {
        state.withLock { state in
            state.listening = true
            defer { state.parked.removeAll() }
            return state.parked
        }
    }

    /// The loop has no view open: hand-overs are kept instead of queued.
    func stopListening() {
        state.withLock { $0.listening = false }
    }

    /// The loop took a commit off its queue. Once it has taken every commit queued before a drop, it is told to
    /// read every view again, ahead of any later commit.
    func taken(_ changes: [ChangeRecord]) {
        state.withLock { state in
            state.queuedBytes -= Self.bytes(changes)
            if state.dropping && state.queuedBytes <= 0 {
                state.queuedBytes = 0
                state.dropping = false
                inbox.yield(.changesMissed)
            }
        }
    }
}

/// What the feed's loop processes.
enum FeedMessage: Sendable {
    case connect(ListenConnection)
    case commit([ChangeRecord])
    /// Commits were dropped on their way to the loop (`CommitHandOver`): every view reads its result again.
    case changesMissed
    case add(Subscriber)
    case remove(connection: Int, targetID: String, serial: Int)
    case disconnect(connection: Int)
    case loaded(view: Int, generation: Int, result: Result<LoadResult, HearthError>)
    case revoke(RevocationEvent)
    /// New rules are in force: every open target is authorized again.
    case rulesChanged(generation: Int)
    /// Targets the rules no longer allow.
    case denied([Denial])
    /// A connection's session has a new identity (its account's claims changed): its targets are checked again.
    case identityChanged(connection: Int, identity: Identity)
    /// Asks for the loop's counts (`ChangeFeed.census`).
    case census(CheckedContinuation<ChangeFeed.Census, Never>)
}

/// A target that failed its authorization when checked again.
struct Denial: Sendable {
    let connection: Int
    let serial: Int
    let error: HearthError
}

/// Hands out connection numbers.
final class ConnectionCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}

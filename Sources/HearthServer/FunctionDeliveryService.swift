import Foundation
import HearthCore
import HearthEngine
import HearthMail
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus
import ServiceLifecycle

/// Delivers function events by Standard Webhooks: reads the events due a page at a time (never the whole
/// queue), POSTs each, signed, to its endpoint, and records the outcome through `Database.perform`: a 2xx
/// answer removes the event, committing the writes it carries in the same transaction; anything else is
/// retried by the retry policy until the event is too old, then the event is dead with the reason.
/// A document's events go one at a time (the queue hands out only the first pending one of each, and an event
/// stays in flight until its outcome is committed), and each endpoint has a bounded number of attempts in
/// flight, so a slow endpoint holds up no other. An answered attempt frees its endpoint's slot at once: its
/// acknowledgement waits for the writer with the others answered meanwhile (`PendingAcknowledgements`).
/// Reading the queue is a pass on an event loop (`DeliveryPasses`), an attempt and its outcome are callbacks,
/// on the connection's event loop and then the writer's thread, so an event costs no task, continuation or
/// thread hop of its own.
struct FunctionDeliveryService: Service {
    let database: Database
    let settings: FunctionsSettings
    let passes: DeliveryPasses
    /// Issues the tokens of endpoints that declare an identity.
    let tokens: IdentityTokens
    let metrics: ServerMetrics
    let logger: Logger

    func run() async {
        // Connecting may take no longer than an answer may.
        let client = WebhookClient(connectTimeout: min(settings.timeout, .seconds(10)),
                                   keepIdle: max(1, settings.concurrencyPerEndpoint), trustRoots: settings.trustRoots)
        let flights = InFlight(attempts: settings.concurrencyPerEndpoint, held: settings.pageSize)
        let acknowledgements = PendingAcknowledgements(database: database)
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        passes.start(on: loop) { done in pass(client, flights, acknowledgements, then: done) }
        let poll = loop.scheduleRepeatedTask(initialDelay: .init(settings.pollInterval), delay: .init(settings.pollInterval)) { _ in
            passes.signal()
        }
        try? await gracefulShutdown()
        poll.cancel()
        passes.stop()
        // Attempts still unanswered end with their connections, their events pending (sent again after a
        // restart); answers already in are recorded before the service returns.
        flights.stop()
        client.shutdown()
        await flights.drained()
    }

    /// SQLite instructions the read of the events due may take on the event loop: a page of the queue's
    /// index, skipping those in flight. A read that needs more runs on a reader thread.
    static let dueInstructions = 20_000

    /// One pass, on the passes' loop: reads the events due that the room allows, and sends those admitted. The
    /// read runs on the loop (no hop to a reader thread and back for each event, which is most of what an event
    /// costs at a moderate rate), unless it needs more than `dueInstructions`.
    func pass(_ client: WebhookClient, _ flights: InFlight, _ acknowledgements: PendingAcknowledgements,
              then done: @escaping @Sendable () -> Void) {
        guard let room = flights.room(endpoints: database.functions.file?.endpoints.count ?? 0) else { return done() }
        let read = DatabaseOperation.functions(.due(skipping: room.skipping, excluding: room.full, limit: room.free))
        let handle: @Sendable (Result<Outcome, any Error>) -> Void = { result in
            switch result {
            case .success(.functionEvents(let due)):
                flights.read(due.count, of: room.free)
                for event in due where flights.admit(event) {
                    deliver(event, client, flights, acknowledgements)
                }
            case .success:
                logger.error("could not read the function events due", metadata: ["error": "the queue answered something else"])
            case .failure(let error):
                logger.error("could not read the function events due", metadata: ["error": "\(error)"])
            }
            done()
        }
        database.perform(read, as: .admin, placement: .here(instructions: Self.dueInstructions)) { result in
            if case .failure(let error) = result, error is ReadBudgetExceeded {
                return database.perform(read, as: .admin, placement: .readers, completion: handle)
            }
            handle(result)
        }
    }

    /// What an attempt came to.
    enum Answer: Sendable {
        /// A 2xx answer, with the writes it carries.
        case acknowledged([Write])
        /// Not delivered: tried again later, or dead at once when `permanent`.
        case failed(String, permanent: Bool)
        /// The server is shutting down: the event stays pending, sent again after a restart.
        case cancelled
    }

    /// One attempt at one event, and its outcome recorded. The endpoint's slot is freed once the attempt is
    /// answered; the event stays in flight (skipped by reads of the queue) until its outcome is committed.
    func deliver(_ event: FunctionEventRecord, _ client: WebhookClient, _ flights: InFlight,
                 _ acknowledgements: PendingAcknowledgements) {
        let attempts = event.attempts + 1
        attempt(event, client, flights) { answer in
            // The endpoint's next event read from the queue goes at once; else the queue may have more of its
            // events, if the last read left them there for its share.
            switch flights.answered(event) {
            case .next(let next): deliver(next, client, flights, acknowledgements)
            case .readAgain: passes.signal()
            case .done: break
            }
            // Once its outcome is committed, the event's later events, if any, may go.
            let done: @Sendable (_ laterPending: Bool) -> Void = { laterPending in
                if flights.end(event, laterPending: laterPending) { passes.signal() }
            }
            switch answer {
            case .cancelled:
                done(true)
            case .failed(let failure, let permanent):
                record(event, attempts: attempts, failure: failure, permanent: permanent) { done(true) }
            case .acknowledged(let writes):
                acknowledgements.commit(FunctionAcknowledgement(id: event.id, writes: writes)) { outcome in
                    if let error = outcome.error {
                        if let error = error as? HearthError, error.code != .internal && error.code != .unavailable {
                            record(event, attempts: attempts, failure: "the answer's writes were not committed: \(error.message)",
                                   permanent: true) { done(true) }
                            return
                        }
                        logger.error("could not record a function event's delivery", metadata: ["id": "\(event.id)", "error": "\(error)"])
                        return done(true)
                    }
                    metrics.functionDelivered.increment()
                    metrics.functionDeliveryLatency.record(.microseconds(max(0, Timestamp.now().microseconds - event.createdAt.microseconds)))
                    logger.debug("function event delivered", metadata: ["id": "\(event.id)", "endpoint": "\(event.endpoint)",
                                                                         "attempts": "\(attempts)", "writes": "\(writes.count)"])
                    done(outcome.laterPending)
                }
            }
        }
    }

    /// Sends one attempt and hands its answer to `answered`, once.
    func attempt(_ event: FunctionEventRecord, _ client: WebhookClient, _ flights: InFlight,
                 answered: @escaping @Sendable (Answer) -> Void) {
        metrics.functionAttempts.increment()
        guard let endpoint = database.functions.file?.endpoints[event.endpoint] else {
            return answered(.failed("the endpoint '\(event.endpoint)' is no longer in the functions file", permanent: true))
        }
        guard let identity = endpoint.identity else {
            return send(event, body: event.body, to: endpoint, client, flights, answered: answered)
        }
        // Made now, for this attempt: the stored event never holds a token. Issuing one may take the writer.
        Task {
            do throws(HearthError) {
                let (token, expiresIn) = try await tokens.token(for: identity)
                send(event, body: IdentityTokens.adding(token: token, expiresIn: expiresIn, to: event.body), to: endpoint,
                     client, flights, answered: answered)
            } catch {
                answered(.failed("could not issue the identity token: \(error.message)", permanent: false))
            }
        }
    }

    /// Signs and posts the body, and reads the answer: its status, and the writes a 2xx answer carries.
    func send(_ event: FunctionEventRecord, body: [UInt8], to endpoint: FunctionsFile.Endpoint, _ client: WebhookClient,
              _ flights: InFlight, answered: @escaping @Sendable (Answer) -> Void) {
        let timestamp = Int64(Date().timeIntervalSince1970)
        let headers = [("content-type", "application/json"), ("user-agent", "hearth"), ("webhook-id", event.id),
                       ("webhook-timestamp", String(timestamp)),
                       ("webhook-signature", endpoint.signer.sign(id: event.id, timestamp: timestamp, body: body))]
        client.post(endpoint.url, headers: headers, body: body, timeout: settings.timeout,
                    maxAnswerBytes: settings.maxAnswerBytes) { (result: Result<(status: Int, answer: ByteBuffer), any Error>) in
            switch result {
            case .success(let reply):
                answered(Self.answer(status: reply.status, reply.answer))
            case .failure(let error):
                answered(flights.stopped ? .cancelled : .failed("\(error)", permanent: false))
            }
        }
    }

    /// What an answer's status and body come to.
    static func answer(status: Int, _ reply: ByteBuffer) -> Answer {
        guard (200..<300).contains(status) else {
            let excerpt = String(decoding: reply.readableBytesView.prefix(200), as: UTF8.self)
            return .failed("HTTP \(status)" + (excerpt.isEmpty ? "" : ": \(excerpt)"), permanent: false)
        }
        if reply.readableBytes == 0 { return .acknowledged([]) }
        do {
            return .acknowledged(try writes(in: Array(reply.readableBytesView)))
        } catch {
            return .failed("the answer's writes were refused: \(error.message)", permanent: true)
        }
    }

    /// The writes of an answer: `{"writes": [...]}` in the `/v1/commit` format; any other answer (empty, not
    /// JSON, an object without `writes`) carries none.
    static func writes(in answer: [UInt8]) throws(HearthError) -> [Write] {
        guard answer.contains(where: { $0 == UInt8(ascii: "{") }), let json = try? JSON.parse(answer),
              case .object(let pairs) = json, pairs.contains(where: { $0.0 == "writes" }) else { return [] }
        if let other = pairs.first(where: { $0.0 != "writes" }) {
            throw .invalidArgument("unknown key '\(other.0.prefix(64))' beside 'writes' (an answer holds only writes)")
        }
        return try CommitRequest(json: json).writes
    }

    /// Records a failed attempt: retried later by the policy, or dead (at once when `permanent`); then `then`.
    func record(_ event: FunctionEventRecord, attempts: Int, failure: String, permanent: Bool,
                then done: @escaping @Sendable () -> Void) {
        let now = Timestamp.now()
        let (next, reason, dead): (Timestamp, String, Bool)
        switch permanent ? nil : settings.retry.afterFailure(attempts: attempts, queuedAt: event.queuedAt, now: now,
                                                             random: Double.random(in: 0...1)) {
        case nil: (next, reason, dead) = (now, failure, true)
        case .retry(let at)?: (next, reason, dead) = (at, failure, false)
        case .dead(let why)?: (next, reason, dead) = (now, "\(failure) (\(why))", true)
        }
        database.perform(.functions(.failed(id: event.id, attempts: attempts, nextAttemptAt: next, error: reason, dead: dead)),
                         as: .admin) { [logger, metrics] result in
            defer { done() }
            if case .failure(let error) = result {
                logger.error("could not record a function event's attempt", metadata: ["id": "\(event.id)", "error": "\(error)"])
                return
            }
            if dead {
                metrics.functionDead.increment()
                logger.error("function event dead; retry it with POST /v1/functions/events/{id}/retry", metadata: [
                    "id": "\(event.id)", "endpoint": "\(event.endpoint)", "attempts": "\(attempts)", "reason": "\(reason)"])
            } else {
                logger.warning("function event not delivered; will retry", metadata: [
                    "id": "\(event.id)", "endpoint": "\(event.endpoint)", "attempts": "\(attempts)",
                    "retryAt": "\(next.rfc3339)", "error": "\(failure)"])
            }
        }
    }
}

/// The events in flight, from the read of the queue that handed them out until their outcome is committed:
/// their sequences (which the next read skips), the attempts each endpoint has unanswered, and the events read
/// but waiting for one of their endpoint's attempts to be answered. A waiting event is sent as the attempt
/// before it is answered, without another read of the queue: the queue is read a page at a time while events
/// come faster than they are answered, not once for each. It is still the first pending event of its document
/// (the queue hands out no other while it is pending), so order holds as it does for one being attempted.
final class InFlight: @unchecked Sendable {
    /// Attempts unanswered per endpoint, at most.
    let attempts: Int
    /// Events in flight in all, at most (attempting, waiting, or their outcomes not yet committed), so that
    /// memory does not grow with the queue.
    let held: Int
    private let lock = NSLock()
    private var events: Set<Int64> = []
    private var attempting: [String: Int] = [:]
    private var waiting: [String: [FunctionEventRecord]] = [:]
    private var waitingCount = 0
    /// The endpoints whose events the last read of the queue left there, as they held their share.
    private var heldBack = Set<String>()
    /// Whether the queue may hold events due that no read will hand out unless one is woken for: the last
    /// read filled its room or failed, a wake-up found no room to read, or an event ended with later events of
    /// its ordering key pending (the reads skipped them while it was in flight).
    private var leftInQueue = false
    /// Events an endpoint may hold (attempting or waiting), so that a slow endpoint leaves room for the others.
    private var share: Int
    /// The endpoints of the functions file, as of the last look at the room.
    private var endpoints = 1
    private var stopping = false
    /// Waits, once stopping, for the last event in flight to end.
    private var drain: CheckedContinuation<Void, Never>?

    init(attempts: Int, held: Int) {
        self.attempts = max(1, attempts)
        self.held = max(1, held)
        share = max(self.attempts, self.held)
    }

    /// The events in flight.
    var count: Int { lock.withLock { events.count } }

    /// Whether the service is stopping: an attempt that fails now was cut short by it, not by the endpoint.
    var stopped: Bool { lock.withLock { stopping } }

    /// What the next read of the queue may hand out, or nil when it need not be read now (full, or every
    /// endpoint has events waiting for its attempts and less than half the room is free): up to `free` events,
    /// none of those in flight (`skipping`) nor of the endpoints holding their share (`full`). `endpoints`:
    /// how many the functions file declares.
    func room(endpoints: Int) -> (skipping: Set<Int64>, full: Set<String>, free: Int)? {
        lock.lock()
        defer { lock.unlock() }
        self.endpoints = max(1, endpoints)
        let free = held - events.count
        leftInQueue = true
        guard !stopping, free > 0, worthReading else { return nil }
        share = max(attempts, held / self.endpoints)
        var full = Set<String>()
        for (endpoint, busy) in attempting where busy + (waiting[endpoint]?.count ?? 0) >= share { full.insert(endpoint) }
        heldBack = full
        return (events, full, free)
    }

    /// A read of the queue with room for `limit` events handed out `count`: fewer means it left none due there.
    func read(_ count: Int, of limit: Int) {
        lock.withLock { leftInQueue = count >= limit }
    }

    /// Takes an event read from the queue: true to attempt it now; false when it waits for its endpoint, or
    /// is left in the queue (already in flight, its endpoint holding its share, or the service stopping).
    func admit(_ event: FunctionEventRecord) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let busy = attempting[event.endpoint, default: 0], queued = waiting[event.endpoint]?.count ?? 0
        guard busy + queued < share else {
            heldBack.insert(event.endpoint)
            return false
        }
        guard !stopping, !events.contains(event.sequence), events.count < held else { return false }
        events.insert(event.sequence)
        if busy < attempts {
            attempting[event.endpoint] = busy + 1
            return true
        }
        waiting[event.endpoint, default: []].append(event)
        waitingCount += 1
        return false
    }

    /// What follows an answered attempt.
    enum AfterAnswer {
        /// The endpoint's next waiting event, to attempt now in its place.
        case next(FunctionEventRecord)
        /// Read the queue again: the last read left some of the endpoint's events there, for its share.
        case readAgain
        /// Nothing: the endpoint's new events reach it by the reads their commits cause.
        case done
    }

    /// The event's attempt is answered (or given up): the endpoint's next waiting event goes in its place, or
    /// its slot is freed.
    func answered(_ event: FunctionEventRecord) -> AfterAnswer {
        lock.lock()
        defer { lock.unlock() }
        if !stopping, let next = waiting[event.endpoint]?.first {
            waiting[event.endpoint]!.removeFirst()
            if waiting[event.endpoint]!.isEmpty { waiting[event.endpoint] = nil }
            waitingCount -= 1
            return .next(next)
        }
        attempting[event.endpoint, default: 1] -= 1
        if attempting[event.endpoint]! <= 0 { attempting[event.endpoint] = nil }
        return heldBack.contains(event.endpoint) ? .readAgain : .done
    }

    /// The event's outcome is committed: the next read of the queue may see it, or the one after it (and,
    /// when `laterPending`, the events of its ordering key that waited for it). Answers whether a read is worth
    /// waking for: not when every event due went out with the reads before (the commits that queue new ones
    /// wake the service themselves).
    func end(_ event: FunctionEventRecord, laterPending: Bool) -> Bool {
        lock.lock()
        events.remove(event.sequence)
        if laterPending { leftInQueue = true }
        let drained = stopping && events.isEmpty ? drain.take() : nil
        let wake = !stopping && leftInQueue && worthReading
        lock.unlock()
        drained?.resume()
        return wake
    }

    /// Whether to read the queue: an endpoint has nothing waiting (its new events would wait for the read),
    /// or half the room is free. Else the waiting events go first, without a read.
    private var worthReading: Bool {
        waitingCount == 0 || waiting.count < endpoints || (held - events.count) * 2 >= held
    }

    /// The service stops: the waiting events are let go (pending, sent after a restart), and no more start.
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        stopping = true
        for event in waiting.values.joined() { events.remove(event.sequence) }
        waiting = [:]
        waitingCount = 0
    }

    /// Returns once stopped with no event in flight: their outcomes are recorded.
    func drained() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if stopping && events.isEmpty {
                lock.unlock()
                continuation.resume()
            } else {
                drain = continuation
                lock.unlock()
            }
        }
    }
}

/// Acknowledgements on their way to the writer: the first goes at once, and those answered while it commits
/// wait for it and then go together, as one `.functions(.delivered)`: one commit per round of the writer
/// rather than one per event.
final class PendingAcknowledgements: @unchecked Sendable {
    typealias Done = @Sendable (AcknowledgementOutcome) -> Void
    private let database: Database
    private let lock = NSLock()
    private var waiting: [(FunctionAcknowledgement, Done)] = []
    private var committing = false

    init(database: Database) { self.database = database }

    /// Commits the acknowledgement; hands `done` what became of it once it is committed, or why its writes were not.
    func commit(_ acknowledgement: FunctionAcknowledgement, done: @escaping Done) {
        lock.lock()
        waiting.append((acknowledgement, done))
        let lead = !committing
        committing = true
        lock.unlock()
        if lead { drain() }
    }

    /// The acknowledgements waiting; none ends the round of commits (the next one starts a new round).
    private func take() -> [(FunctionAcknowledgement, Done)] {
        lock.lock()
        defer { lock.unlock() }
        let batch = waiting
        waiting = []
        if batch.isEmpty { committing = false }
        return batch
    }

    /// Commits what waits, and once committed, what came meanwhile: from the writer's thread, no task.
    private func drain() {
        let batch = take()
        if batch.isEmpty { return }
        database.perform(.functions(.delivered(batch.map { $0.0 })), as: .admin) { [self] result in
            var outcomes: [AcknowledgementOutcome]
            switch result {
            case .success(.acknowledged(let answered)) where answered.count == batch.count:
                outcomes = answered
            case .success:
                outcomes = Array(repeating: AcknowledgementOutcome(error: HearthError.internal("the acknowledgements answered something else")),
                                 count: batch.count)
            case .failure(let error):
                outcomes = Array(repeating: AcknowledgementOutcome(error: error), count: batch.count)
            }
            for (k, (_, done)) in batch.enumerated() { done(outcomes[k]) }
            drain()
        }
    }
}

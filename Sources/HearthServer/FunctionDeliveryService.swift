import Foundation
import HearthCore
import HearthEngine
import HearthMail
import Logging
import NIOCore
import NIOHTTP1
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
struct FunctionDeliveryService: Service {
    let database: Database
    let settings: FunctionsSettings
    let wakeup: FunctionsWakeup
    /// Issues the tokens of endpoints that declare an identity.
    let tokens: IdentityTokens
    let metrics: ServerMetrics
    let logger: Logger

    func run() async {
        // Connecting may take no longer than an answer may.
        let client = WebhookClient(connectTimeout: min(settings.timeout, .seconds(10)),
                                   keepIdle: max(1, settings.concurrencyPerEndpoint), trustRoots: settings.trustRoots)
        let flights = InFlight()
        let acknowledgements = PendingAcknowledgements(database: database)
        await withDiscardingTaskGroup { group in
            group.addTask { await wakeup.tick(every: settings.pollInterval) }
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                let room = flights.room(endpoints: database.functions.file?.endpoints.keys.map { $0 } ?? [],
                                        attempts: settings.concurrencyPerEndpoint, held: settings.pageSize)
                var due: [FunctionEventRecord] = []
                if room.free > 0 {
                    do {
                        guard case .functionEvents(let events) = try await database.perform(
                            .functions(.due(skipping: room.skipping, excluding: room.full, limit: room.free)), as: .admin) else { break }
                        due = events
                    } catch {
                        logger.error("could not read the function events due", metadata: ["error": "\(error)"])
                    }
                }
                for event in due where flights.start(event, limit: settings.concurrencyPerEndpoint) {
                    group.addTask {
                        await deliver(event, client, flights, acknowledgements)
                        flights.end(event)
                        wakeup.signal()
                    }
                }
                await wakeup.wait()
            }
            group.cancelAll()
        }
        client.shutdown()
    }

    /// What an attempt came to.
    enum Answer {
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
                 _ acknowledgements: PendingAcknowledgements) async {
        let attempts = event.attempts + 1
        let answer = await attempt(event, client)
        flights.answered(event)
        wakeup.signal()
        switch answer {
        case .cancelled:
            return
        case .failed(let failure, let permanent):
            await record(event, attempts: attempts, failure: failure, permanent: permanent)
        case .acknowledged(let writes):
            if let error = await acknowledgements.commit(FunctionAcknowledgement(id: event.id, writes: writes)) {
                if let error = error as? HearthError, error.code != .internal && error.code != .unavailable {
                    await record(event, attempts: attempts, failure: "the answer's writes were not committed: \(error.message)",
                                 permanent: true)
                } else {
                    logger.error("could not record a function event's delivery", metadata: ["id": "\(event.id)", "error": "\(error)"])
                }
                return
            }
            metrics.functionDelivered.increment()
            metrics.functionDeliveryLatency.record(.microseconds(max(0, Timestamp.now().microseconds - event.createdAt.microseconds)))
            logger.debug("function event delivered", metadata: ["id": "\(event.id)", "endpoint": "\(event.endpoint)",
                                                                 "attempts": "\(attempts)", "writes": "\(writes.count)"])
        }
    }

    /// Sends one attempt and reads its answer.
    func attempt(_ event: FunctionEventRecord, _ client: WebhookClient) async -> Answer {
        metrics.functionAttempts.increment()
        guard let endpoint = database.functions.file?.endpoints[event.endpoint] else {
            return .failed("the endpoint '\(event.endpoint)' is no longer in the functions file", permanent: true)
        }
        var body = event.body
        if let identity = endpoint.identity {
            // Made now, for this attempt: the stored event never holds a token.
            do {
                let (token, expiresIn) = try await tokens.token(for: identity)
                body = IdentityTokens.adding(token: token, expiresIn: expiresIn, to: body)
            } catch {
                return .failed("could not issue the identity token: \(error.message)", permanent: false)
            }
        }
        let timestamp = Int64(Date().timeIntervalSince1970)
        let headers = [("content-type", "application/json"), ("user-agent", "hearth"), ("webhook-id", event.id),
                       ("webhook-timestamp", String(timestamp)),
                       ("webhook-signature", endpoint.signer.sign(id: event.id, timestamp: timestamp, body: body))]
        let answer: [UInt8]
        do {
            let (status, reply) = try await client.post(endpoint.url, headers: headers, body: body, timeout: settings.timeout,
                                                        maxAnswerBytes: settings.maxAnswerBytes)
            guard (200..<300).contains(status) else {
                let excerpt = String(decoding: reply.readableBytesView.prefix(200), as: UTF8.self)
                return .failed("HTTP \(status)" + (excerpt.isEmpty ? "" : ": \(excerpt)"), permanent: false)
            }
            answer = Array(reply.readableBytesView)
        } catch {
            if Task.isCancelled { return .cancelled }
            return .failed("\(error)", permanent: false)
        }
        do {
            return .acknowledged(try Self.writes(in: answer))
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

    /// Records a failed attempt: retried later by the policy, or dead (at once when `permanent`).
    func record(_ event: FunctionEventRecord, attempts: Int, failure: String, permanent: Bool) async {
        let now = Timestamp.now()
        var next = now, reason = failure, dead = permanent
        if !permanent {
            switch settings.retry.afterFailure(attempts: attempts, queuedAt: event.queuedAt, now: now,
                                               random: Double.random(in: 0...1)) {
            case .retry(let at): next = at
            case .dead(let why): dead = true; reason = "\(failure) (\(why))"
            }
        }
        do {
            _ = try await database.perform(.functions(.failed(id: event.id, attempts: attempts, nextAttemptAt: next,
                                                               error: reason, dead: dead)), as: .admin)
        } catch {
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

/// The events in flight: their sequences (which the next read of the queue skips), from the start of an
/// attempt until its outcome is committed, and how many attempts each endpoint has unanswered.
final class InFlight: @unchecked Sendable {
    private let lock = NSLock()
    private var events: Set<Int64> = []
    private var attempting: [String: Int] = [:]

    /// What the next read of the queue may hand out: up to `free` events, none of those in flight
    /// (`skipping`) nor of the endpoints with `attempts` unanswered (`full`), and no more than `held` events
    /// in flight in all (attempts and outcomes not yet committed), so memory does not grow with the queue.
    func room(endpoints: [String], attempts: Int, held: Int) -> (skipping: Set<Int64>, full: Set<String>, free: Int) {
        lock.lock()
        defer { lock.unlock() }
        let limit = max(1, attempts)
        let full = Set(attempting.filter { $0.value >= limit }.keys)
        // Events of an endpoint no longer in the file still go through (to be marked dead): at least one at a time.
        var free = endpoints.isEmpty ? 1 : endpoints.reduce(0) { $0 + max(0, limit - attempting[$1, default: 0]) }
        free = min(free, max(0, held - events.count))
        return (events, full, free)
    }

    /// Counts an event in flight, unless it is already or its endpoint has `limit` attempts unanswered.
    func start(_ event: FunctionEventRecord, limit: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !events.contains(event.sequence), attempting[event.endpoint, default: 0] < max(1, limit) else { return false }
        events.insert(event.sequence)
        attempting[event.endpoint, default: 0] += 1
        return true
    }

    /// The event's attempt is answered (or given up): its endpoint may start another.
    func answered(_ event: FunctionEventRecord) {
        lock.lock()
        defer { lock.unlock() }
        attempting[event.endpoint, default: 1] -= 1
        if attempting[event.endpoint] == 0 { attempting[event.endpoint] = nil }
    }

    /// The event's outcome is committed: the next read of the queue may see it, or the one after it.
    func end(_ event: FunctionEventRecord) {
        lock.lock()
        defer { lock.unlock() }
        events.remove(event.sequence)
    }
}

/// Acknowledgements on their way to the writer: the first goes at once, and those answered while it commits
/// wait for it and then go together, as one `.functions(.delivered)`: one commit per round of the writer
/// rather than one per event.
final class PendingAcknowledgements: @unchecked Sendable {
    private let database: Database
    private let lock = NSLock()
    private var waiting: [(FunctionAcknowledgement, CheckedContinuation<(any Error)?, Never>)] = []
    private var committing = false

    init(database: Database) { self.database = database }

    /// Commits the acknowledgement; answers nil once it is committed, or why its writes were not.
    func commit(_ acknowledgement: FunctionAcknowledgement) async -> (any Error)? {
        await withCheckedContinuation { continuation in
            lock.lock()
            waiting.append((acknowledgement, continuation))
            let lead = !committing
            committing = true
            lock.unlock()
            if lead { Task { await self.drain() } }
        }
    }

    /// The acknowledgements waiting; none ends the round of commits (the next one starts a new round).
    private func take() -> [(FunctionAcknowledgement, CheckedContinuation<(any Error)?, Never>)] {
        lock.lock()
        defer { lock.unlock() }
        let batch = waiting
        waiting = []
        if batch.isEmpty { committing = false }
        return batch
    }

    private func drain() async {
        while true {
            let batch = take()
            if batch.isEmpty { return }
            var errors: [(any Error)?]
            do {
                guard case .acknowledged(let outcomes) = try await database.perform(.functions(.delivered(batch.map { $0.0 })), as: .admin),
                      outcomes.count == batch.count else { throw HearthError.internal("the acknowledgements answered something else") }
                errors = outcomes
            } catch {
                errors = Array(repeating: error, count: batch.count)
            }
            for (k, (_, continuation)) in batch.enumerated() { continuation.resume(returning: errors[k]) }
        }
    }
}

/// Wakes a service: after a commit that `wakesFor` (when given) says concerns it, and when signalled.
final class FunctionsWakeup: CommitObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var signalled = false
    private var waiter: CheckedContinuation<Void, Never>?
    private let wakesFor: (@Sendable ([ChangeRecord]) -> Bool)?

    /// `wakesFor` decides, from a commit's changes, whether it concerns the service (nil: every commit does).
    init(wakesFor: (@Sendable ([ChangeRecord]) -> Bool)? = nil) { self.wakesFor = wakesFor }

    func committed(_ changes: [ChangeRecord]) {
        if wakesFor?(changes) ?? true { signal() }
    }

    func signal() {
        lock.lock()
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume()
        } else {
            signalled = true
            lock.unlock()
        }
    }

    /// Returns at the next signal (at once if one came since the last wait). Something must signal: a
    /// `tick(every:)` running beside the waiter makes it a wait of at most that interval.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if signalled {
                signalled = false
                lock.unlock()
                continuation.resume()
            } else {
                waiter = continuation
                lock.unlock()
            }
        }
    }

    /// Signals every `interval` until cancelled, and once more then, so that a waiter sees the cancellation.
    func tick(every interval: Duration) async {
        while (try? await Task.sleep(for: interval)) != nil { signal() }
        signal()
    }

    /// Returns at the next signal (at once if one came since the last wait), or after `timeout`.
    func wait(upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                if (try? await Task.sleep(for: timeout)) != nil { signal() }
            }
            await wait()
            group.cancelAll()
        }
    }
}

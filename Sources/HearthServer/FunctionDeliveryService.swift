import AsyncHTTPClient
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
/// A document's events go one at a time (the queue hands out only the first pending one of each), and each
/// endpoint has a bounded number of attempts in flight, so a slow endpoint holds up no other.
struct FunctionDeliveryService: Service {
    let database: Database
    let settings: FunctionsSettings
    let wakeup: FunctionsWakeup
    /// Issues the tokens of endpoints that declare an identity.
    let tokens: IdentityTokens
    let metrics: ServerMetrics
    let logger: Logger

    func run() async {
        var configuration = HTTPClient.Configuration()
        // A refused connection is tried again by the client's pool until the connect timeout: no longer than an answer may take.
        configuration.timeout = .init(connect: .nanoseconds(Int64(min(settings.timeout, .seconds(10)).inSeconds * 1e9)))
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(1, settings.concurrencyPerEndpoint)
        configuration.redirectConfiguration = .disallow
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let flights = InFlight()
        await withDiscardingTaskGroup { group in
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                let due: [FunctionEventRecord]
                do {
                    guard case .functionEvents(let events) = try await database.perform(
                        .functions(.due(skipping: flights.sequences, limit: settings.pageSize)), as: .admin) else { break }
                    due = events
                } catch {
                    logger.error("could not read the function events due", metadata: ["error": "\(error)"])
                    due = []
                }
                for event in due where flights.start(event, limit: settings.concurrencyPerEndpoint) {
                    group.addTask {
                        await deliver(event, client)
                        flights.end(event)
                        wakeup.signal()
                    }
                }
                await wakeup.wait(upTo: settings.pollInterval)
            }
            group.cancelAll()
        }
        try? await client.shutdown()
    }

    /// One attempt at one event, and its outcome recorded.
    func deliver(_ event: FunctionEventRecord, _ client: HTTPClient) async {
        let attempts = event.attempts + 1
        metrics.functionAttempts.increment()
        guard let endpoint = database.functions.file?.endpoints[event.endpoint] else {
            return await record(event, attempts: attempts,
                                failure: "the endpoint '\(event.endpoint)' is no longer in the functions file", permanent: true)
        }
        var body = event.body
        if let identity = endpoint.identity {
            // Made now, for this attempt: the stored event never holds a token.
            do {
                let (token, expiresIn) = try await tokens.token(for: identity)
                body = IdentityTokens.adding(token: token, expiresIn: expiresIn, to: body)
            } catch {
                return await record(event, attempts: attempts, failure: "could not issue the identity token: \(error.message)",
                                    permanent: false)
            }
        }
        let timestamp = Int64(Date().timeIntervalSince1970)
        var request = HTTPClientRequest(url: endpoint.url.absoluteString)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "hearth")
        request.headers.add(name: "webhook-id", value: event.id)
        request.headers.add(name: "webhook-timestamp", value: "\(timestamp)")
        request.headers.add(name: "webhook-signature",
                            value: WebhookSignature.sign(id: event.id, timestamp: timestamp, body: body, key: endpoint.key))
        request.body = .bytes(ByteBuffer(bytes: body))
        let answer: [UInt8]
        do {
            let response = try await client.execute(request, timeout: .nanoseconds(Int64(settings.timeout.inSeconds * 1e9)))
            let body = try await response.body.collect(upTo: settings.maxAnswerBytes)
            guard (200..<300).contains(response.status.code) else {
                let excerpt = String(decoding: body.readableBytesView.prefix(200), as: UTF8.self)
                return await record(event, attempts: attempts, failure: "HTTP \(response.status.code)"
                                    + (excerpt.isEmpty ? "" : ": \(excerpt)"), permanent: false)
            }
            answer = Array(body.readableBytesView)
        } catch {
            if Task.isCancelled { return }  // shutting down: the event stays pending, sent again after a restart
            return await record(event, attempts: attempts, failure: Self.describe(error), permanent: false)
        }
        let writes: [Write]
        do {
            writes = try Self.writes(in: answer)
        } catch {
            return await record(event, attempts: attempts, failure: "the answer's writes were refused: \(error.message)", permanent: true)
        }
        do {
            _ = try await database.perform(.functions(.delivered(id: event.id, writes: writes)), as: .admin)
            metrics.functionDelivered.increment()
            metrics.functionDeliveryLatency.record(.microseconds(max(0, Timestamp.now().microseconds - event.createdAt.microseconds)))
            logger.debug("function event delivered", metadata: ["id": "\(event.id)", "endpoint": "\(event.endpoint)",
                                                                 "attempts": "\(attempts)", "writes": "\(writes.count)"])
        } catch let error as HearthError where error.code != .internal && error.code != .unavailable {
            await record(event, attempts: attempts, failure: "the answer's writes were not committed: \(error.message)", permanent: true)
        } catch {
            logger.error("could not record a function event's delivery", metadata: ["id": "\(event.id)", "error": "\(error)"])
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

    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout: return "no answer within the timeout"
            case .connectTimeout: return "the connection timed out"
            default: return "\(error)"
            }
        }
        let text = "\(error)"
        return text.contains("refused") ? "connection refused" : text
    }
}

/// The events in flight: their sequences (which the next read of the queue skips) and how many go to each
/// endpoint.
final class InFlight: @unchecked Sendable {
    private let lock = NSLock()
    private var events: Set<Int64> = []
    private var perEndpoint: [String: Int] = [:]

    var sequences: Set<Int64> {
        lock.lock()
        defer { lock.unlock() }
        return events
    }

    /// Counts an event in flight, unless it is already or its endpoint has `limit` in flight.
    func start(_ event: FunctionEventRecord, limit: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !events.contains(event.sequence), perEndpoint[event.endpoint, default: 0] < max(1, limit) else { return false }
        events.insert(event.sequence)
        perEndpoint[event.endpoint, default: 0] += 1
        return true
    }

    func end(_ event: FunctionEventRecord) {
        lock.lock()
        defer { lock.unlock() }
        events.remove(event.sequence)
        perEndpoint[event.endpoint, default: 1] -= 1
    }
}

/// Wakes the delivery service: after each commit (which may have queued events) and each finished attempt.
final class FunctionsWakeup: CommitObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var signalled = false
    private var waiter: CheckedContinuation<Void, Never>?

    func committed(_ changes: [ChangeRecord]) { signal() }

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

    /// Returns at the next signal (at once if one came since the last wait), or after `timeout`.
    func wait(upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                if (try? await Task.sleep(for: timeout)) != nil { signal() }
            }
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
            group.cancelAll()
        }
    }
}

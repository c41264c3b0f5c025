import Foundation
import HearthCore
import HummingbirdWSClient
import Logging
import NIOConcurrencyHelpers
import NIOHTTP1
import NIOSSL
import NIOWebSocket
import HTTPTypes

/// A live-update listener (`GET /v1/listen`, docs/api.md): one WebSocket per listener, one target on it. It
/// keeps the target's view as the snapshots describe it and, when the connection drops (a network fault, the
/// server restarting, a backlog it was told to resume from), connects again and listens with the last
/// `resumeToken`, so the changes it missed arrive once and none twice. For a signed-in session it sends each
/// refreshed access token on the open socket (the `auth` message) before the old one expires.
final class Listener: @unchecked Sendable {
    let hearth: Hearth
    let target: JSON
    let continuation: AsyncThrowingStream<QuerySnapshot, any Error>.Continuation
    private let outbound = NIOLockedValueBox<WebSocketOutboundWriter?>(nil)
    // Touched only by the listener's own task.
    private var documents: [DocumentSnapshot] = []
    private var resumeToken: String?
    private var yielded = false

    init(hearth: Hearth, target: JSON, continuation: AsyncThrowingStream<QuerySnapshot, any Error>.Continuation) {
        self.hearth = hearth
        self.target = target
        self.continuation = continuation
    }

    /// The stream of a target's snapshots, each mapped to what the caller hands out.
    static func stream<S: Sendable>(hearth: Hearth, target: JSON,
                                    map: @escaping @Sendable (QuerySnapshot) -> S) -> AsyncThrowingStream<S, any Error> {
        AsyncThrowingStream { continuation in
            let (raw, rawContinuation) = AsyncThrowingStream<QuerySnapshot, any Error>.makeStream()
            let listener = Listener(hearth: hearth, target: target, continuation: rawContinuation)
            let run = Task { await listener.run() }
            let forward = Task {
                do {
                    for try await snapshot in raw { continuation.yield(map(snapshot)) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                run.cancel()
                forward.cancel()
                listener.closeSocket()
            }
        }
    }

    func closeSocket() {
        guard let writer = outbound.withLockedValue({ $0 }) else { return }
        Task { try? await writer.close(.goingAway, reason: nil) }
    }

    /// How one connection ended.
    enum Outcome {
        /// The target is gone for good (an error frame with its id, or credentials that cannot be renewed).
        case failed(HearthClientError)
        /// The connection dropped (or was never upgraded: `refused`); `progressed` when a snapshot came on it,
        /// `error` the last one the server sent.
        case dropped(progressed: Bool, error: HearthClientError?, refused: Bool)
    }

    func run() async {
        var failures = 0
        while !Task.isCancelled {
            let token: String?
            do { token = try await hearth.credentials.token() } catch {
                continuation.finish(throwing: error)
                return
            }
            switch await connectOnce(token: token) {
            case .failed(let error):
                continuation.finish(throwing: error)
                return
            case .dropped(let progressed, var error, let refused):
                failures = progressed ? 0 : failures + 1
                if refused, failures >= 2, let token, error == nil { error = await Self.refusal(of: token, hearth: hearth) }
                if let error, error.code == .unauthenticated {
                    // An expired or revoked token: a session renews it; a token handed over cannot be renewed.
                    guard case .session = await hearth.credentials.mode, let token,
                          (try? await hearth.credentials.refresh(replacing: token)) != nil else {
                        continuation.finish(throwing: error)
                        return
                    }
                }
            }
            // Back off, growing to 10 s, with jitter; at once after a connection that delivered.
            if failures > 0 {
                let delay = min(10, 0.1 * Double(1 << min(failures, 7))) * Double.random(in: 0.5...1.0)
                try? await Task.sleep(for: .seconds(delay))
            }
        }
        continuation.finish()
    }

    /// Why upgrades keep failing, when it is the token: the server refuses an upgrade whose token does not work
    /// with `401` before any frame, which the WebSocket client does not pass on, so an HTTP call with the same
    /// token tells. Nil when the token works (or the server cannot be reached).
    static func refusal(of token: String, hearth: Hearth) async -> HearthClientError? {
        do throws(HearthClientError) {
            _ = try await hearth.transport.send(.GET, "/v1/auth/me", token: token)
            return nil
        } catch {
            return error.status == 401 ? error : nil
        }
    }

    private func connectOnce(token: String?) async -> Outcome {
        var components = URLComponents(url: hearth.url, resolvingAgainstBaseURL: false) ?? URLComponents()
        let secure = components.scheme == "https"
        components.scheme = secure ? "wss" : "ws"
        let base = components.path.replacingOccurrences(of: "/+$", with: "", options: .regularExpression)
        components.path = base + "/v1/listen"
        let url = components.string ?? ""
        var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
        if let token { configuration.additionalHeaders[.authorization] = "Bearer \(token)" }
        let state = ConnectionState()
        do {
            try await WebSocketClient.connect(url: url, configuration: configuration,
                                              tlsConfiguration: secure ? TLSConfiguration.makeClientConfiguration() : nil,
                                              logger: Logger(label: "hearth.client.listen")) { inbound, outbound, _ in
                state.upgraded = true
                self.hearth.listenConnections.withLockedValue { $0 += 1 }
                self.outbound.withLockedValue { $0 = outbound }
                defer { self.outbound.withLockedValue { $0 = nil } }
                guard case .object(let targetPairs) = self.target else { return }
                var listen: [(String, JSON)] = [("type", .string("listen")), ("id", .string("t"))] + targetPairs
                if let resumeToken = self.resumeToken { listen.append(("resumeToken", .string(resumeToken))) }
                try await outbound.writeTextMessage(JSON.object(listen).text)
                let refresher = Task { await self.keepTokenFresh(outbound, sent: token) }
                defer { refresher.cancel() }
                for try await message in inbound.messages(maxSize: 64 << 20) {
                    guard case .text(let text) = message, let frame = try? JSON.parse(text) else { continue }
                    switch frame["type"]?.stringValue {
                    case "snapshot":
                        do {
                            try self.apply(frame)
                            state.progressed = true
                        } catch {
                            state.failure = error as? HearthClientError ?? .decoding("\(error)")
                            try await outbound.close(.unexpectedServerError, reason: nil)
                            return
                        }
                    case "error":
                        let error = HearthClientError(code: .init(rawValue: frame["code"]?.stringValue ?? "internal"),
                                                      message: frame["message"]?.stringValue ?? "")
                        if frame["id"] != nil {
                            state.failure = error
                            try await outbound.close(.normalClosure, reason: nil)
                            return
                        }
                        state.lastError = error
                    default:
                        continue
                    }
                }
            }
        } catch {
            // Could not connect, or the connection broke: tried again.
        }
        if let failure = state.failure { return .failed(failure) }
        return .dropped(progressed: state.progressed, error: state.lastError, refused: !state.upgraded)
    }

    /// What one connection's handler found, read after it returns.
    private final class ConnectionState: @unchecked Sendable {
        var upgraded = false
        var progressed = false
        var failure: HearthClientError?
        var lastError: HearthClientError?
    }

    /// Sends the session's refreshed access token on the socket before the one it acts with expires.
    private func keepTokenFresh(_ outbound: WebSocketOutboundWriter, sent: String?) async {
        var current = sent
        while !Task.isCancelled {
            guard let due = await hearth.credentials.refreshDue() else { return }
            let wait = max(due.timeIntervalSinceNow, 0)
            try? await Task.sleep(for: .seconds(wait))
            if Task.isCancelled { return }
            guard let fresh = try? await hearth.credentials.token(), fresh != current else {
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            do { try await outbound.writeTextMessage(JSON.object([("type", .string("auth")), ("token", .string(fresh))]).text) } catch { return }
            current = fresh
        }
    }

    /// Applies a snapshot frame to the view and hands out the result.
    private func apply(_ frame: JSON) throws(HearthClientError) {
        guard case .array(let items)? = frame["changes"], let token = frame["resumeToken"]?.stringValue else {
            throw .decoding("a snapshot frame without its changes or resume token")
        }
        let reset = frame["reset"] == .bool(true)
        if reset || (frame["initial"] == .bool(true) && resumeToken == nil) { documents = [] }
        var changes: [DocumentChange] = []
        for item in items {
            guard let kind = item["type"]?.stringValue.flatMap(DocumentChange.ChangeType.init(rawValue:)), let doc = item["doc"],
                  case .int(let oldIndex)? = item["oldIndex"], case .int(let newIndex)? = item["newIndex"],
                  let path = doc["path"]?.stringValue else {
                throw .decoding("a malformed change in a snapshot: \(item.text)")
            }
            let existing = documents.firstIndex { $0.reference.path == path }
            let snapshot: DocumentSnapshot
            if kind == .removed {
                if let existing { snapshot = documents[existing] } else { snapshot = try DocumentSnapshot(hearth: hearth, json: doc) }
            } else {
                snapshot = try DocumentSnapshot(hearth: hearth, json: doc)
            }
            if let existing { documents.remove(at: existing) }
            if kind != .removed { documents.insert(snapshot, at: min(max(Int(newIndex), 0), documents.count)) }
            changes.append(DocumentChange(type: kind, document: snapshot, oldIndex: Int(oldIndex), newIndex: Int(newIndex)))
        }
        resumeToken = token
        // A resumed listen whose first snapshot brings nothing new is not a new state.
        guard !yielded || !changes.isEmpty || reset else { return }
        yielded = true
        continuation.yield(QuerySnapshot(documents: documents, documentChanges: changes,
                                         readTime: frame["readTime"]?.stringValue.flatMap(Timestamp.init(rfc3339:)), isReset: reset))
    }
}

import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import ServiceLifecycle

/// `GET /v1/listen`: the WebSocket protocol (docs/api.md, Live updates) over the change feed. Credentials
/// come in the upgrade request (`Authorization: Bearer`, or `?token=` for browsers) or as the first message.
struct ListenEndpoint: Sendable {
    let feed: ChangeFeed
    let authenticator: Authenticator
    /// The event loops' queues of connections with events to write.
    let drains = PerEventLoop { LoopDrains(eventLoop: $0) }

    /// The path the protocol is served on.
    static let path = "/v1/listen"

    /// Decides an upgrade: only for the listen path with acceptable credentials. A refusal is answered with
    /// its reason (`RefusedUpgradeAnswer`): `401` for credentials that do not work, `404` for another path.
    func shouldUpgrade(_ request: HTTPRequest, channel: any Channel) async -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        let uri = URI(request.path ?? "")
        let credentials: Authenticator.Caller
        do {
            guard request.method == .get, uri.path == Self.path else {
                throw HearthError.notFound("only \(Self.path) speaks WebSocket (GET with an upgrade)")
            }
            credentials = try self.credentials(uri: uri, authorization: request.headerFields[.authorization])
        } catch {
            let refusal = RefusedUpgradeAnswer(error as? HearthError ?? .unauthenticated("the credentials could not be checked"))
            try? await channel.eventLoop.submit { try channel.pipeline.syncOperations.addHandler(refusal) }.get()
            return .dontUpgrade
        }
        return .upgrade([:]) { inbound, outbound, context in
            let connection = feed.connect(identity: credentials.identity, session: credentials.session,
                                          expires: credentials.expires)
            let writer = ListenChannelWriter(connection: connection, channel: channel,
                                             maxFrameBytes: feed.configuration.maxMessageBytes, drains: drains)
            await writer.install(on: channel)
            await serve(connection, writer: writer, inbound: inbound, outbound: outbound, logger: context.logger)
        }
    }

    /// The caller of an upgrade request: nobody, or a valid token's (an invalid one is an error), from the
    /// header or from `?token=`.
    func credentials(uri: URI, authorization: String?) throws(HearthError) -> Authenticator.Caller {
        if authorization == nil, let token = uri.queryParameters["token"] { return try authenticator.caller(token: String(token)) }
        return try authenticator.caller(authorization: authorization)
    }

    /// The plain-HTTP route: explains why a request to the listen path was not upgraded.
    func register(on router: Router<HearthRequestContext>) {
        router.get(RouterPath(stringLiteral: Self.path)) { request, _ -> Response in
            _ = try credentials(uri: request.uri, authorization: request.headers[.authorization])
            throw HearthError.invalidArgument("\(Self.path) speaks WebSocket: send an upgrade request (Connection: Upgrade, Upgrade: websocket)")
        }
    }

    // MARK: The connection

    func serve(_ connection: ListenConnection, writer: ListenChannelWriter, inbound: WebSocketInboundStream,
               outbound: WebSocketOutboundWriter, logger: Logger) async {
        let configuration = feed.configuration
        let session = SessionClock(configuration: configuration)
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await closeWhenDone(writer, outbound) }
                group.addTask { await watchDeadlines(connection, session, on: writer.eventLoop) }
                do {
                    for try await message in inbound.messages(maxSize: configuration.maxMessageBytes) {
                        guard case .text(let text) = message else {
                            connection.reply(.requestError(id: nil, error: .invalidArgument("messages must be JSON text frames, not binary")))
                            continue
                        }
                        guard session.received() else {
                            connection.reply(.requestError(id: nil, error: .resourceExhausted(
                                "more than \(Int(configuration.messagesPerSecond)) messages per second; the message was dropped")))
                            continue
                        }
                        await handle(text, connection)
                    }
                } catch {
                    // An oversized message ends the stream; tell the client why before closing.
                    connection.terminate(.payloadTooLarge("a message is over \(configuration.maxMessageBytes) bytes"), closeCode: 1009)
                }
                connection.close()
                await group.next()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            connection.terminate(.unavailable("the server is shutting down; reconnect and resume"), closeCode: 1001)
        }
    }

    func handle(_ text: String, _ connection: ListenConnection) async {
        switch ListenRequest.parse(text) {
        case .failure(let failure):
            connection.reply(.requestError(id: failure.targetID, error: failure.error))
        case .success(.ping):
            connection.reply(.pong)
        case .success(.auth(let token)):
            do {
                let caller = try authenticator.caller(token: token)
                try connection.authenticate(caller.identity, session: caller.session, expires: caller.expires)
            } catch {
                connection.reply(.requestError(id: nil, error: error))
            }
        case .success(.listen(let id, let target, let resumeToken)):
            do {
                try connection.listen(id: id, target: target, resumeToken: resumeToken)
            } catch {
                connection.reply(.requestError(id: id, error: error))
            }
        case .success(.unlisten(let id)):
            do {
                try connection.unlisten(id: id)
            } catch {
                connection.reply(.requestError(id: id, error: error))
            }
        }
    }

    /// Waits until the connection's writer is done, then closes the WebSocket as its last event asked.
    func closeWhenDone(_ writer: ListenChannelWriter, _ outbound: WebSocketOutboundWriter) async {
        guard let close = await writer.closeRequested() else { return }
        try? await outbound.close(WebSocketErrorCode(codeNumber: Int(close.code)), reason: close.reason)
    }

    static func writeError(_ error: HearthError, id: String?, to w: inout JSONWriter) {
        w.raw("{\"type\":\"error\"")
        if let id {
            w.raw(",\"id\":")
            w.string(id)
        }
        w.raw(",\"code\":")
        w.string(error.code.rawValue)
        w.raw(",\"message\":")
        w.string(error.message)
        w.raw("}")
    }

    /// Closes a connection that stays without credentials or without targets past its deadline, or whose
    /// access token expires before the client sends a fresh one. Its waits are timers of the connection's
    /// event loop (`EventLoop.wait`), which give their memory back as soon as the connection ends.
    func watchDeadlines(_ connection: ListenConnection, _ session: SessionClock, on eventLoop: any EventLoop) async {
        while !Task.isCancelled {
            let authenticated = connection.identity != .unauthenticated
            let expires = connection.credentialsExpire
            if let expires, expires <= .now {
                connection.terminate(.unauthenticated(
                    "the access token expired; send a fresh one in an auth message before it expires, or reconnect with one and resume"),
                    closeCode: 1008)
                return
            }
            let expiry = expires ?? .now + .seconds(3600)
            if let deadline = session.deadline(authenticated: authenticated, hasTargets: connection.targetCount > 0) {
                if deadline <= .now {
                    connection.terminate(authenticated
                        ? HearthError(.deadlineExceeded, "closed after \(feed.configuration.idleTimeout) without messages or targets")
                        : .unauthenticated("no credentials within \(feed.configuration.authTimeout)"), closeCode: authenticated ? 1000 : 1008)
                    return
                }
                await eventLoop.wait(until: min(deadline, expiry, .now + .seconds(1)))
            } else {
                // A connection with targets has no deadline; look again now and then (cheap for many connections),
                // and when its token expires.
                await eventLoop.wait(until: min(expiry, .now + max(.seconds(1), feed.configuration.idleTimeout / 2)))
            }
        }
    }
}

/// A connection's session state on the real clock, shared by the reader and the deadline watcher.
final class SessionClock: @unchecked Sendable {
    private let lock = NSLock()
    private var state: ListenSessionState<ContinuousClock.Instant>

    init(configuration: ListenConfiguration) {
        state = ListenSessionState(configuration: configuration, now: .now)
    }

    func received() -> Bool { lock.withLock { state.received(at: .now) == .accept } }

    func deadline(authenticated: Bool, hasTargets: Bool) -> ContinuousClock.Instant? {
        lock.withLock { state.deadline(authenticated: authenticated, hasTargets: hasTargets) }
    }
}

extension Authenticator.Caller {
    /// The session a user's listener belongs to, so that revoking it ends the listener.
    var session: ListenSession? {
        guard let uid = identity.uid, let sessionID else { return nil }
        return ListenSession(uid: uid, sessionID: sessionID)
    }
}

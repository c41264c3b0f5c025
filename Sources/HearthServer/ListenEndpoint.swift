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

/// `GET /v1/listen`: the WebSocket protocol of DESIGN §6 over the change feed. Credentials come in the
/// upgrade request (`Authorization: Bearer`, or `?token=` for browsers) or as the first message.
struct ListenEndpoint: Sendable {
    /// Who a bearer token speaks for: an identity and, for a user's access token, its session and when the
    /// token stops working.
    struct Credentials: Sendable {
        var identity: Identity
        var session: ListenSession?
        var expires: ContinuousClock.Instant?
    }

    /// Resolves a bearer token to the credentials it carries.
    typealias Authenticator = @Sendable (String) async throws(HearthError) -> Credentials

    let feed: ChangeFeed
    let authenticate: Authenticator

    /// The path the protocol is served on.
    static let path = "/v1/listen"

    /// Decides an upgrade: only for the listen path with acceptable credentials; anything else goes on to the
    /// router, whose `/v1/listen` route answers with the error.
    func shouldUpgrade(_ request: HTTPRequest) async -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard request.method == .get, let target = request.path else { return .dontUpgrade }
        let uri = URI(target)
        guard uri.path == Self.path, let credentials = try? await credentials(uri: uri, authorization: request.headerFields[.authorization])
        else { return .dontUpgrade }
        return .upgrade([:]) { inbound, outbound, context in
            let connection = feed.connect(identity: credentials.identity, session: credentials.session,
                                          expires: credentials.expires)
            await serve(connection, inbound: inbound, outbound: outbound, logger: context.logger)
        }
    }

    /// The credentials of an upgrade request: none, or a valid token (an invalid one is an error).
    func credentials(uri: URI, authorization: String?) async throws(HearthError) -> Credentials {
        if let header = authorization {
            guard let token = AdminKey.bearerToken(header) else {
                throw .unauthenticated("the Authorization header must be 'Bearer <token>'")
            }
            return try await authenticate(token)
        }
        if let token = uri.queryParameters["token"] { return try await authenticate(String(token)) }
        return Credentials(identity: .unauthenticated)
    }

    /// The plain-HTTP route: explains why a request to the listen path was not upgraded.
    func register(on router: Router<HearthRequestContext>) {
        router.get(RouterPath(stringLiteral: Self.path)) { request, _ -> Response in
            _ = try await credentials(uri: request.uri, authorization: request.headers[.authorization])
            throw HearthError.invalidArgument("\(Self.path) speaks WebSocket: send an upgrade request (Connection: Upgrade, Upgrade: websocket)")
        }
    }

    // MARK: The connection

    func serve(_ connection: ListenConnection, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, logger: Logger) async {
        let configuration = feed.configuration
        let session = SessionClock(configuration: configuration)
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await writeEvents(of: connection, to: outbound) }
                group.addTask { await watchDeadlines(connection, session) }
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
                let credentials = try await authenticate(token)
                try connection.authenticate(credentials.identity, session: credentials.session, expires: credentials.expires)
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

    /// Sends the connection's events, one whole message at a time, until it ends.
    func writeEvents(of connection: ListenConnection, to outbound: WebSocketOutboundWriter) async {
        let maxFrameBytes = feed.configuration.maxMessageBytes
        do {
            while let batch = await connection.nextBatch() {
                for event in batch {
                    var w = JSONWriter()
                    switch event {
                    case .snapshot(let snapshot):
                        // Most snapshots are encoded once for all their listeners; send those bytes as they are.
                        let frame = snapshot.encodedFrame()
                        if frame.count <= maxFrameBytes {
                            // Room before the payload for the frame header (at most 10 bytes from a server), so
                            // that the encoder writes header and payload as one buffer.
                            var buffer = ByteBufferAllocator().buffer(capacity: frame.count + 10)
                            buffer.moveWriterIndex(forwardBy: 10)
                            buffer.moveReaderIndex(forwardBy: 10)
                            buffer.writeBytes(frame)
                            try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: buffer)))
                        } else {
                            try await outbound.writeTextMessage(String(decoding: frame, as: UTF8.self))
                        }
                        continue
                    case .pong:
                        w.raw("{\"type\":\"pong\"}")
                    case .targetError(let id, let error), .requestError(let id?, let error):
                        Self.writeError(error, id: id, to: &w)
                    case .requestError(nil, let error):
                        Self.writeError(error, id: nil, to: &w)
                    case .closed(let error, let code):
                        Self.writeError(error, id: nil, to: &w)
                        try await outbound.writeTextMessage(String(decoding: w.bytes, as: UTF8.self))
                        try await outbound.close(WebSocketErrorCode(codeNumber: Int(code)), reason: String(error.message.prefix(100)))
                        return
                    }
                    try await outbound.writeTextMessage(String(decoding: w.bytes, as: UTF8.self))
                }
            }
        } catch {
            connection.close()
        }
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
    /// access token expires before the client sends a fresh one.
    func watchDeadlines(_ connection: ListenConnection, _ session: SessionClock) async {
        while !Task.isCancelled {
            let authenticated = connection.identity != .unauthenticated
            if let expires = connection.credentialsExpire {
                if expires <= .now {
                    connection.terminate(.unauthenticated(
                        "the access token expired; send a fresh one in an auth message before it expires, or reconnect with one and resume"),
                        closeCode: 1008)
                    return
                }
            }
            let expiry = connection.credentialsExpire ?? .now + .seconds(3600)
            if let deadline = session.deadline(authenticated: authenticated, hasTargets: connection.targetCount > 0) {
                if deadline <= .now {
                    connection.terminate(authenticated
                        ? HearthError(.deadlineExceeded, "closed after \(feed.configuration.idleTimeout) without messages or targets")
                        : .unauthenticated("no credentials within \(feed.configuration.authTimeout)"), closeCode: authenticated ? 1000 : 1008)
                    return
                }
                try? await Task.sleep(until: min(deadline, expiry, .now + .seconds(1)))
            } else {
                // A connection with targets has no deadline; look again now and then (cheap for many connections),
                // and when its token expires.
                try? await Task.sleep(until: min(expiry, .now + max(.seconds(1), feed.configuration.idleTimeout / 2)))
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

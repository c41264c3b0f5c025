import Foundation
import HearthCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A listen-protocol client as light as a channel handler, for load drivers that share the machine with the
/// server (the live-update benchmark): each frame is parsed and handed to `onFrame` on the connection's event
/// loop as it arrives, with no task per connection and no hop to one, as a plain handler reads an SSE
/// stream. `ListenClient` is the client for tests (views, waiting for frames, resuming).
public final class ListenFrameClient: Sendable {
    let channel: any Channel

    init(channel: any Channel) { self.channel = channel }

    /// Opens `/v1/listen` on loopback with the token in the upgrade request; returns once upgraded.
    public static func connect(port: Int, token: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                               onFrame: @escaping @Sendable (JSON) -> Void) async throws -> ListenFrameClient {
        try await connect(port: port, token: token, group: group, onText: { payload in
            if let json = try? JSON.parse(payload.readableBytesView) { onFrame(json) }
        })
    }

    /// Opens `/v1/listen` like `connect(port:token:group:onFrame:)`, handing each text message to `onText` as
    /// its bytes, unparsed: for a load driver that reads one field and leaves the CPU to the server.
    public static func connect(port: Int, token: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                               onText: @escaping @Sendable (ByteBuffer) -> Void) async throws -> ListenFrameClient {
        let upgraded = group.next().makePromise(of: Void.self)
        // Completed once: by the upgrade, or by the connection closing before it.
        let completed = NIOLockedValueBox(false)
        @Sendable func complete(_ result: Result<Void, any Error>) {
            if completed.withLockedValue({ done in defer { done = true }; return !done }) { upgraded.completeWith(result) }
        }
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: 1 << 24) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(FrameHandler(onText: onText))
                        complete(.success(()))
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/listen")
        head.headers.add(name: "Host", value: "127.0.0.1:\(port)")
        head.headers.add(name: "Authorization", value: "Bearer \(token)")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        channel.closeFuture.whenComplete { _ in
            complete(.failure(ListenClient.Failure(description: "the server did not upgrade the connection")))
        }
        try await upgraded.futureResult.get()
        return ListenFrameClient(channel: channel)
    }

    /// Sends a text message as is (a masked frame, as clients must).
    public func send(_ text: String) async throws {
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer)
        try await channel.writeAndFlush(frame).get()
    }

    /// Sends `{"type": "listen", "id", "query"}` with the query's JSON text.
    public func listen(_ id: String, query json: String) async throws {
        try await send(ListenClient.listenMessage(id, key: "query", value: json, resumeToken: nil))
    }

    /// Sends `{"type": "listen", "id", "doc"}`.
    public func listen(_ id: String, doc path: String) async throws {
        try await send(ListenClient.listenMessage(id, key: "doc", value: quote(path), resumeToken: nil))
    }

    /// Closes the connection.
    public func close() async {
        try? await channel.close().get()
    }

    /// Hands every text message to `onText` (joining continuation frames), answers pings and closes with the
    /// server.
    final class FrameHandler: ChannelInboundHandler, @unchecked Sendable {  // Touched on its event loop only.
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame
        let onText: @Sendable (ByteBuffer) -> Void
        var partial: ByteBuffer?

        init(onText: @escaping @Sendable (ByteBuffer) -> Void) { self.onText = onText }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .text where frame.fin:
                onText(frame.unmaskedData)
            case .text:
                partial = frame.unmaskedData
            case .continuation:
                var data = frame.unmaskedData
                partial?.writeBuffer(&data)
                if frame.fin, let whole = partial {
                    partial = nil
                    onText(whole)
                }
            case .ping:
                let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
                context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
            case .connectionClose:
                context.close(promise: nil)
            default:
                break
            }
        }
    }
}

import HearthCore
import NIOCore
import NIOHTTP1
import HTTPTypes

/// Gives a refused WebSocket upgrade the error that refused it (`401 unauthenticated` for a bad token), in the
/// one JSON error shape, instead of the empty `400` the WebSocket channel writes for every refusal. It is
/// added to a connection only when the listen endpoint refuses its upgrade, and leaves with that answer.
final class RefusedUpgradeAnswer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let reply: JSONReply

    init(_ error: HearthError) {
        reply = errorReply(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            head.status = HTTPResponseStatus(statusCode: reply.status.code, reasonPhrase: reply.status.reasonPhrase)
            for field in reply.headers { head.headers.replaceOrAdd(name: field.name.rawName, value: field.value) }
            head.headers.replaceOrAdd(name: "Content-Length", value: String(reply.bytes.count))
            context.write(wrapOutboundOut(.head(head)), promise: promise)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: reply.bytes)))), promise: nil)
        case .body:
            promise?.succeed()
        case .end:
            context.write(data, promise: promise)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}

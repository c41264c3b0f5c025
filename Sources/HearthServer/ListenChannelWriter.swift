import HearthCore
import HearthEngine
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// Writes a listen connection's events to its WebSocket channel from the channel's event loop, as they are
/// queued: no task per connection to wake and no hop through an asynchronous writer for each frame. A write
/// that reaches a thousand listeners of one query costs a thousand socket writes and little else.
///
/// It sits next to the socket (behind TLS on an HTTPS connection), below the WebSocket codec, and writes whole frames it encodes itself (text,
/// unmasked, split at the frame limit as the codec's writer splits them). Frames are whole messages, so its
/// writes and the codec's own (pings, the close handshake) interleave only between messages.
///
/// Backpressure: while the channel is not writable (the client reads slowly), events stay in the
/// connection's bounded queue, where later snapshots of a target merge into waiting ones and a full queue ends
/// the connection; writing resumes when the channel drains. A connection's last event (`closed`) always goes
/// out, after which the close handshake is left to the WebSocket handler (`closeRequested`).
final class ListenChannelWriter: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Why the writer stopped: the close code and reason to end the WebSocket with, or nil when the connection
    /// ended otherwise (the client left).
    typealias Close = (code: UInt16, reason: String)?

    let connection: ListenConnection
    let maxFrameBytes: Int
    let eventLoop: any EventLoop
    private let drains: LoopDrains
    /// Completed once, on the event loop, when no more events will be written.
    private let closePromise: EventLoopPromise<Close>
    // Event loop only.
    private var context: ChannelHandlerContext?
    private var channel: (any Channel)?
    private var closeDecided = false

    init(connection: ListenConnection, channel: any Channel, maxFrameBytes: Int, drains: PerEventLoop<LoopDrains>) {
        self.connection = connection
        self.maxFrameBytes = maxFrameBytes
        self.eventLoop = channel.eventLoop
        self.drains = drains(channel.eventLoop)
        self.closePromise = channel.eventLoop.makePromise(of: Close.self)
    }

    /// Waits until the writer is done: answers how to close the WebSocket, or nil.
    func closeRequested() async -> Close {
        (try? await closePromise.futureResult.get()) ?? nil
    }

    /// Adds the writer next to the socket (on an HTTPS connection, next to TLS, which encrypts what it writes)
    /// and starts writing the connection's events.
    func install(on channel: any Channel) async {
        do {
            try await channel.eventLoop.submit { [self] in
                let pipeline = channel.pipeline.syncOperations
                if let tls = try? pipeline.handler(type: NIOSSLServerHandler.self) {
                    try pipeline.addHandler(self, position: .after(tls))
                } else {
                    try pipeline.addHandler(self, position: .first)
                }
            }.get()
        } catch {
            eventLoop.execute { self.decideClose(nil) }
            return
        }
        connection.onEventsReady { [self] in drains.schedule(self) }
    }

    // MARK: Channel events (event loop)

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.channel = context.channel
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.channel = nil
        decideClose(nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        decideClose(nil)
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { drain() }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Writing (event loop)

    /// Writes what the connection has queued while the channel takes it.
    func drain() {
        guard let context, let channel, !closeDecided else { return }
        var wrote = false
        defer { if wrote { context.flush() } }
        while true {
            let (events, finished) = connection.takeReady(writable: channel.isWritable)
            if events.isEmpty {
                if finished { decideClose(nil) }
                return
            }
            wrote = true
            for event in events {
                var w = JSONWriter()
                switch event {
                case .snapshot(let snapshot):
                    // Most snapshots are encoded once for all their listeners, and framed once for those on
                    // this event loop: every one of them is sent the same buffer.
                    if let frame = snapshot.frame, frame.count <= maxFrameBytes {
                        context.write(wrapOutboundOut(drains.framed(frame, allocator: channel.allocator)), promise: nil)
                    } else {
                        writeText(snapshot.encodedFrame(), context, channel.allocator)
                    }
                    continue
                case .pong:
                    w.raw("{\"type\":\"pong\"}")
                case .targetError(let id, let error), .requestError(let id?, let error):
                    ListenEndpoint.writeError(error, id: id, to: &w)
                case .requestError(nil, let error):
                    ListenEndpoint.writeError(error, id: nil, to: &w)
                case .closed(let error, let code):
                    ListenEndpoint.writeError(error, id: nil, to: &w)
                    writeText(w.bytes, context, channel.allocator)
                    decideClose((code, String(error.message.prefix(100))))
                    return
                }
                writeText(w.bytes, context, channel.allocator)
            }
        }
    }

    /// Writes one text message: one frame, or a text frame and continuation frames of at most
    /// `maxFrameBytes` each.
    private func writeText(_ payload: [UInt8], _ context: ChannelHandlerContext, _ allocator: ByteBufferAllocator) {
        var start = 0
        repeat {
            let end = min(payload.count, start + maxFrameBytes)
            let opcode: UInt8 = start == 0 ? 0x1 : 0x0
            let fin: UInt8 = end == payload.count ? 0x80 : 0
            context.write(wrapOutboundOut(Self.frame(fin | opcode, payload[start..<end], allocator)), promise: nil)
            start = end
        } while start < payload.count
    }

    /// One frame as a server sends it (RFC 6455 §5.2): first byte (FIN and opcode), payload length, unmasked
    /// payload.
    static func frame(_ first: UInt8, _ payload: ArraySlice<UInt8>, _ allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: payload.count + 10)
        writeHeader(first, length: payload.count, to: &buffer)
        buffer.writeBytes(payload)
        return buffer
    }

    private static func writeHeader(_ first: UInt8, length: Int, to buffer: inout ByteBuffer) {
        buffer.writeInteger(first)
        if length < 126 {
            buffer.writeInteger(UInt8(length))
        } else if length <= 0xFFFF {
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
    }

    private func decideClose(_ close: Close) {
        guard !closeDecided else { return }
        closeDecided = true
        closePromise.succeed(close)
    }
}

/// The writers waiting to drain on one event loop: however many of its connections a commit reaches, the
/// loop is handed one task that drains them all.
final class LoopDrains: @unchecked Sendable {
    let eventLoop: any EventLoop
    private let lock = NIOLock()
    private var pending: [ListenChannelWriter] = []
    private var scheduled = false

    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    /// Drains `writer` on the loop soon, with the others waiting.
    func schedule(_ writer: ListenChannelWriter) {
        let start = lock.withLock { () -> Bool in
            pending.append(writer)
            defer { scheduled = true }
            return !scheduled
        }
        if start { eventLoop.execute { self.run() } }
    }

    // Event loop only: the last frame framed, and the bytes it was framed from. Holding the bytes keeps their
    // storage alive, so no other array can have the same address while they are compared by it.
    private var lastPayload: [UInt8] = []
    private var lastFramed: ByteBuffer?

    /// `payload` as one text frame, made once for all the loop's connections it goes to in a row.
    func framed(_ payload: [UInt8], allocator: ByteBufferAllocator) -> ByteBuffer {
        if let lastFramed, payload.count == lastPayload.count,
           payload.withUnsafeBufferPointer({ a in lastPayload.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }) {
            return lastFramed
        }
        let buffer = ListenChannelWriter.frame(0x81, payload[...], allocator)
        lastPayload = payload
        lastFramed = buffer
        return buffer
    }

    /// Writers drained per task. NIO runs the tasks queued while it runs tasks in the same pass, so the chunks
    /// of one fan-out run back to back before the loop reads its sockets again; ending the pass between chunks
    /// (a task due a microsecond later) was measured and did not lower the write or delivery latencies.
    static let chunk = 128

    private func run() {
        let (writers, more) = lock.withLock { () -> ([ListenChannelWriter], Bool) in
            let n = min(pending.count, Self.chunk)
            let writers = Array(pending[..<n])
            pending.removeFirst(n)
            if pending.isEmpty { scheduled = false }
            return (writers, !pending.isEmpty)
        }
        for writer in writers { writer.drain() }
        lastPayload = []
        lastFramed = nil
        if more { eventLoop.execute { self.run() } }
    }
}

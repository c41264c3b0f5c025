import NIOCore

/// One SMTP reply: a three-digit code and its text lines (several for a multi-line reply).
public struct SMTPReply: Sendable, Equatable, CustomStringConvertible {
    /// The reply code (220, 250, 354, 421, 550…).
    public var code: Int
    /// The text of each line, without the code and separator.
    public var lines: [String]

    /// 2xx and 3xx.
    public var isPositive: Bool { code >= 200 && code < 400 }
    /// 4xx: try again later.
    public var isTransient: Bool { code >= 400 && code < 500 }

    public var description: String { "\(code) \(lines.joined(separator: " / "))" }
}

/// Splits the server's bytes into replies: lines end in CRLF (a bare LF is tolerated), a line `250-text`
/// continues a reply and `250 text` (or `250` alone) ends it (RFC 5321 §4.2.1).
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply
    /// Longest reply line accepted; a server sending more is broken or hostile.
    static let maxLine = 4096
    private var lines: [String] = []
    private var code: Int?

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maxLine { throw SMTPFailure(transient: "the server sent a reply line over \(Self.maxLine) bytes") }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex
        var line = buffer.readString(length: length) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        if line.hasSuffix("\r") { line.removeLast() }
        let digits = line.prefix(3)
        guard digits.count == 3, let n = Int(digits), (200...599).contains(n) else {
            throw SMTPFailure(transient: "the server sent a line that is not a reply: '\(line.prefix(80))'")
        }
        if let code, code != n { throw SMTPFailure(transient: "the server mixed reply codes \(code) and \(n) in one reply") }
        let separator = line.dropFirst(3).first
        lines.append(String(line.dropFirst(4)))
        if separator == "-" {
            code = n
        } else {
            context.fireChannelRead(wrapInboundOut(SMTPReply(code: n, lines: lines)))
            lines = []
            code = nil
        }
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

/// Hands each reply to the one waiting for it; fails the wait when the connection drops, errs or the
/// wait's time runs out (and then closes, since the conversation is out of step). Used only on its
/// channel's event loop.
final class SMTPReplyWaiter: ChannelInboundHandler {
    typealias InboundIn = SMTPReply
    private var buffered: [SMTPReply] = []
    private var waiting: (promise: EventLoopPromise<SMTPReply>, timeout: Scheduled<Void>?)?
    private var ended: SMTPFailure?
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Fulfils `promise` with the next reply, or fails it after `timeout`.
    func expect(_ promise: EventLoopPromise<SMTPReply>, timeout: TimeAmount, what: String) {
        if !buffered.isEmpty { return promise.succeed(buffered.removeFirst()) }
        if let ended { return promise.fail(ended) }
        guard let context else { return promise.fail(SMTPFailure(transient: "the connection is gone")) }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let task = context.eventLoop.scheduleTask(in: timeout) {
            let (waiter, context) = bound.value
            waiter.finish(SMTPFailure(transient: "timed out after \(timeout.nanoseconds / 1_000_000_000) s waiting for the reply to \(what)"))
            context.close(promise: nil)
        }
        waiting = (promise, task)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let reply = unwrapInboundIn(data)
        if let waiting {
            self.waiting = nil
            waiting.timeout?.cancel()
            waiting.promise.succeed(reply)
        } else {
            buffered.append(reply)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(SMTPFailure(transient: "the server closed the connection"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish((error as? SMTPFailure) ?? SMTPFailure(transient: "connection error: \(error)"))
        context.close(promise: nil)
    }

    private func finish(_ failure: SMTPFailure) {
        if ended == nil { ended = failure }
        if let waiting {
            self.waiting = nil
            waiting.timeout?.cancel()
            waiting.promise.fail(failure)
        }
    }
}

import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// One request to the server that holds a data folder and its answer, over plain HTTP or HTTPS on loopback
/// (`ServerConnection`). Over HTTPS the tool trusts exactly the certificate in the file the server serves
/// (`PinnedCertificate`): the server's name is not checked, since the tool connects to a loopback address the
/// certificate need not name, and no certificate authority is consulted.
enum LoopbackExchange {
    /// Why an exchange failed, for `ServerConnection` to word.
    enum Failure: Error {
        /// No connection (refused, unresolvable): nothing was sent.
        case unreachable(String)
        /// The TLS handshake failed: nothing was sent. `mismatch` when the certificate served is not the file's.
        case handshake(String, mismatch: Bool)
        /// The connection ended, or timed out, before a whole answer came: the request may have taken effect.
        case noAnswer(String)
    }

    /// Sends `request` to `host:port` and answers the status and body, waiting at most `timeoutSeconds` for
    /// each next byte.
    static func run(host: String, port: Int, pinned: PinnedCertificate?, request: [UInt8],
                    timeoutSeconds: Int) throws(Failure) -> (Int, [UInt8]) {
        let timeout = TimeAmount.seconds(Int64(timeoutSeconds))
        let group = MultiThreadedEventLoopGroup.singleton
        let loop = group.next()
        let answer = loop.makePromise(of: (Int, [UInt8]).self)
        let verifier = pinned.map { PinnedCertificate.Verifier(expected: $0) }
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let verifier {
                        let handler = try NIOSSLClientHandler(context: try PinnedCertificate.context(), serverHostname: nil,
                                                              customVerificationCallback: { chain, result in verifier.verify(chain, result) })
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    try channel.pipeline.syncOperations.addHandler(AnswerReader(answer: answer, timeout: timeout))
                }
            }
        let channel: any Channel
        do {
            channel = try bootstrap.connect(host: host, port: port).wait()
        } catch {
            throw .unreachable(describe(error))
        }
        var buffer = channel.allocator.buffer(capacity: request.count)
        buffer.writeBytes(request)
        channel.writeAndFlush(buffer, promise: nil)
        do {
            return try answer.futureResult.wait()
        } catch let failure as Failure {
            throw failure
        } catch {
            // A handshake error comes before any byte of the request is written: nothing was sent.
            if error is NIOSSLError || error is BoringSSLError {
                throw .handshake(describe(error), mismatch: verifier?.refused.withLockedValue { $0 } ?? false)
            }
            throw .noAnswer(describe(error))
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError, let first = error.connectionErrors.first { return describe(first.error) }
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }

    /// Gathers the answer's bytes until it is whole (`ServerConnection.complete`) or the server closes.
    final class AnswerReader: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        private let answer: EventLoopPromise<(Int, [UInt8])>
        private let timeout: TimeAmount
        private var received: [UInt8] = []
        private var done = false
        private var deadline: Scheduled<Void>?

        init(answer: EventLoopPromise<(Int, [UInt8])>, timeout: TimeAmount) {
            self.answer = answer
            self.timeout = timeout
        }

        func handlerAdded(context: ChannelHandlerContext) { restartClock(context) }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            received += buffer.readBytes(length: buffer.readableBytes) ?? []
            restartClock(context)
            if let whole = ServerConnection.complete(received) { finish(context, .success(whole)) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            if let whole = ServerConnection.complete(received, atEnd: true) {
                finish(context, .success(whole))
            } else {
                finish(context, .failure(Failure.noAnswer("the connection was closed before the answer was whole")))
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) { finish(context, .failure(error)) }

        /// The server has `timeout` for each next byte; a large fixture load takes a while.
        private func restartClock(_ context: ChannelHandlerContext) {
            deadline?.cancel()
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            deadline = context.eventLoop.scheduleTask(in: timeout) { [self] in
                finish(loopBound.value, .failure(Failure.noAnswer("no answer within \(timeout.nanoseconds / 1_000_000_000) s")))
            }
        }

        private func finish(_ context: ChannelHandlerContext, _ result: Result<(Int, [UInt8]), any Error>) {
            guard !done else { return }
            done = true
            deadline?.cancel()
            answer.completeWith(result)
            context.close(promise: nil)
        }
    }
}

/// The certificate a tool trusts over HTTPS: the first (the server's own) in the PEM file the server was started
/// with (`--tls-cert`), whose absolute path the server recorded in the folder's owner record. Whoever may write
/// that file decides what the server serves anyway, so trusting it adds no one; a file replaced without the
/// SIGHUP that makes the server serve it no longer matches, and the tool says so.
struct PinnedCertificate: Sendable {
    let path: String
    let certificate: NIOSSLCertificate

    /// Reads the file; the error says what is wrong with it.
    init(path: String) throws(ToolError) {
        self.path = path
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw ToolError("cannot read \(path)")
        }
        guard let first = (try? NIOSSLCertificate.fromPEMBytes(Array(bytes)))?.first else {
            throw ToolError("\(path) holds no PEM certificate that can be read")
        }
        certificate = first
    }

    /// A client context that checks no name and no authority: the verifier decides alone. TLS 1.2 at least,
    /// as the server.
    static func context() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .noHostnameVerification
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["http/1.1"]
        return try NIOSSLContext(configuration: configuration)
    }

    /// Accepts a handshake only when the server's certificate is the pinned one, and remembers a refusal.
    final class Verifier: Sendable {
        let expected: PinnedCertificate
        let refused = NIOLockedValueBox(false)

        init(expected: PinnedCertificate) { self.expected = expected }

        func verify(_ chain: [NIOSSLCertificate], _ result: EventLoopPromise<NIOSSLVerificationResult>) {
            let matches = chain.first == expected.certificate
            if !matches { refused.withLockedValue { $0 = true } }
            result.succeed(matches ? .certificateVerified : .failed)
        }
    }
}

import HummingbirdCore
import Logging
import NIOCore
import NIOSSL

/// A server child channel (Hummingbird's HTTP/1 with its WebSocket upgrade) with a `ConnectionGuard` added to
/// every connection, behind the request decoder, and TLS in front of it all when the server serves HTTPS
/// (without it, a `FileRegionWriter` too).
struct GuardedHTTPChannel<Inner: ServerChildChannel>: ServerChildChannel {
    let inner: Inner
    let configuration: ConnectionConfiguration
    /// The origins allowed to call from a browser (`ConnectionGuard` adds the CORS headers); nil for none.
    let cors: CORSPolicy?
    /// The certificate served, when the server speaks HTTPS; nil for plain HTTP.
    let tls: ServerTLS?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
        channel.eventLoop.makeCompletedFuture { [tls] in
            // TLS first, before HTTP: the certificate in force when the connection arrives (`ServerTLS.reload`).
            if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.context)) }
        }.flatMap { [inner] in
            inner.setup(channel: channel, logger: logger)
        }.flatMapThrowing { [configuration, cors, tls] value in
            // Added last now, it sits right behind the upgrade handler; the HTTP handlers that replace that one
            // on a first plain request are added behind it, so it sees their answers and they its requests.
            try channel.pipeline.syncOperations.addHandler(ConnectionGuard(configuration: configuration, cors: cors))
            // Downloads leave by `sendfile(2)` where no TLS needs their bytes in memory.
            if tls == nil { try channel.pipeline.syncOperations.addHandler(FileRegionWriter()) }
            return value
        }
    }

    func handle(value: Inner.Value, logger: Logger) async {
        // The channel logs a connection closed before its first request ended as an error; here that is the
        // guard's doing (a timeout, a refused request), an ordinary event.
        var quieter = logger
        quieter.handler = DemotingLogHandler(base: logger.handler, ceiling: .debug)
        await inner.handle(value: value, logger: quieter)
    }
}

/// Passes a logger's lines on at most at `ceiling`.
private struct DemotingLogHandler: LogHandler {
    var base: any LogHandler
    let ceiling: Logger.Level

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.level = min(event.level, ceiling)
        guard event.level >= logLevel else { return }
        base.log(event: event)
    }
}

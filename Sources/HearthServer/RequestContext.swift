import HearthCore
import Hummingbird
import NIOCore

/// Per-request state: Hummingbird's core context plus the caller's identity.
public struct HearthRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Who is calling, set by `AuthMiddleware`.
    public var identity: Identity = .unauthenticated
    /// The session of a user's access token, set by `AuthMiddleware` (logout and `me` act on it).
    public var sessionID: String?
    /// True when the caller holds a function's identity token, set by `AuthMiddleware`: never a claim, so no
    /// user can come to hold it.
    public var isFunction = false
    /// The peer's address (client-address throttling).
    public var remoteAddress: SocketAddress?
    /// The connection, for an interim answer (`100 Continue`) written before the route's own.
    let channel: any Channel

    public init(source: Source) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }

    /// Bodies are limited to 10 MiB; larger ones are refused while streaming, never read whole.
    public var maxUploadSize: Int { Limits.maxRequestBody }
}

import HearthCore
import Hummingbird

/// Per-request state: Hummingbird's core context plus the caller's identity.
public struct HearthRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Who is calling, set by `AuthMiddleware`.
    public var identity: Identity = .unauthenticated

    public init(source: Source) {
        coreContext = .init(source: source)
    }

    /// Bodies are limited to 10 MiB; larger ones are refused while streaming, never read whole.
    public var maxUploadSize: Int { Limits.maxRequestBody }
}

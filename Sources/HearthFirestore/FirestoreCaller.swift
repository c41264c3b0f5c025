import HearthCore
import HearthEngine

/// Who a gRPC call speaks for, from its `authorization` metadata. The server decides (`buildApplication`):
/// Hearth's access tokens and the admin key as over HTTP, and the emulator's `Bearer owner` in development.
public struct FirestoreCaller: Sendable {
    /// The identity the rules see.
    public var identity: Identity
    /// The session of a user's access token, so that revoking it ends the user's listeners.
    public var session: ListenSession?
    /// When a user's access token stops working.
    public var expires: ContinuousClock.Instant?

    /// Makes a caller.
    public init(identity: Identity, session: ListenSession? = nil, expires: ContinuousClock.Instant? = nil) {
        self.identity = identity
        self.session = session
        self.expires = expires
    }
}

/// Turns the `authorization` metadata (nil when absent) into a caller, or throws `unauthenticated`.
public typealias FirestoreAuthenticate = @Sendable (_ authorization: String?) throws -> FirestoreCaller

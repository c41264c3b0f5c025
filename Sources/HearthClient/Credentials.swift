import Foundation
import HearthCore
import NIOHTTP1

/// The credentials the client sends, and for a signed-in user the session's tokens, refreshed before the
/// access token expires. Refreshes are serialized: a refresh token is spent by its first use, and a second
/// use of it would revoke the session (docs/api.md, Accounts).
actor Credentials {
    enum Mode: Sendable {
        /// No `Authorization` header (rules see an unauthenticated caller).
        case none
        /// A token used as given and never refreshed: the admin key, or an access token handed over.
        case bearer(String)
        /// A signed-in user's session.
        case session(Session)
    }

    struct Session: Sendable {
        var accessToken: String
        var refreshToken: String
        var expiresAt: Date
        var lifetime: TimeInterval
        var user: User
    }

    private(set) var mode: Mode
    private var refreshing: Task<Session, any Error>?
    private let transport: Transport

    init(mode: Mode, transport: Transport) {
        self.mode = mode
        self.transport = transport
    }

    func set(_ mode: Mode) {
        refreshing?.cancel()
        refreshing = nil
        self.mode = mode
    }

    /// The token to send now: for a session, one that stays valid a while longer, refreshed first if not.
    func token() async throws(HearthClientError) -> String? {
        switch mode {
        case .none: return nil
        case .bearer(let token): return token
        case .session(let session):
            if session.expiresAt.timeIntervalSinceNow > Self.margin(session.lifetime) { return session.accessToken }
            return try await refresh(replacing: session.accessToken).accessToken
        }
    }

    /// When the access token should be replaced: before its end by a quarter of its life, at most two minutes.
    static func margin(_ lifetime: TimeInterval) -> TimeInterval { min(120, lifetime / 4) }

    /// The moment the current session's token is due for a refresh, or nil when nothing expires.
    func refreshDue() -> Date? {
        guard case .session(let s) = mode else { return nil }
        return s.expiresAt.addingTimeInterval(-Self.margin(s.lifetime))
    }

    /// Exchanges the refresh token for a new pair, unless the token `replacing` names was replaced already
    /// (another caller refreshed meanwhile): then the newer session is the answer.
    func refresh(replacing token: String? = nil) async throws(HearthClientError) -> Session {
        guard case .session(let session) = mode else {
            throw HearthClientError(code: .unauthenticated, message: "no signed-in session to refresh")
        }
        if let token, token != session.accessToken { return session }
        let task: Task<Session, any Error>
        if let refreshing {
            task = refreshing
        } else {
            let transport = self.transport
            task = Task {
                let answer = try await transport.send(.POST, "/v1/auth/refresh", body: .object([("refreshToken", .string(session.refreshToken))]),
                                                      token: nil)
                return try Self.session(from: answer.body)
            }
            refreshing = task
        }
        do {
            let fresh = try await task.value
            if refreshing == task { refreshing = nil; mode = .session(fresh) }
            return fresh
        } catch {
            if refreshing == task { refreshing = nil }
            throw error as? HearthClientError ?? HearthClientError(code: .unavailable, message: "\(error)")
        }
    }

    /// A sign-in answer (`{user, token, refreshToken, expiresIn}`) as a session.
    static func session(from body: JSON?) throws(HearthClientError) -> Session {
        guard let body, let access = body["token"]?.stringValue, let refresh = body["refreshToken"]?.stringValue,
              case .int(let expiresIn)? = body["expiresIn"], let user = body["user"] else {
            throw .decoding("the sign-in answer lacks its tokens")
        }
        return Session(accessToken: access, refreshToken: refresh, expiresAt: Date().addingTimeInterval(TimeInterval(expiresIn)),
                       lifetime: TimeInterval(expiresIn), user: try User(json: user))
    }
}

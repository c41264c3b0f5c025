import Foundation
import HearthAuth
import HearthCore
import HearthEngine

/// The access tokens events carry for their endpoint's declared identity, issued by `AuthService` (the same
/// `hat_` tokens as a sign-in's, stored only hashed) when first needed and reused while at least half of
/// their lifetime is left: a busy endpoint costs one session row every few minutes, not one per event.
/// Held only in memory; never written to the event or a log.
final class IdentityTokens: @unchecked Sendable {
    let auth: AuthService
    let lifetime: Duration
    private let lock = NSLock()
    private var tokens: [String: (token: String, expires: Timestamp)] = [:]

    init(auth: AuthService, lifetime: Duration) {
        self.auth = auth
        self.lifetime = lifetime
    }

    /// A token for `identity` and the seconds it has left.
    func token(for identity: FunctionsFile.Identity) async throws(HearthError) -> (token: String, expiresIn: Int64) {
        let key = identity.uid + "\u{0}" + String(decoding: Value.encodeFields(identity.claims), as: UTF8.self)
        let now = auth.now()
        let half = lifetime.components.seconds * 500_000
        if let held = lock.withLock({ tokens[key] }), held.expires.microseconds - now.microseconds >= half {
            return (held.token, (held.expires.microseconds - now.microseconds) / 1_000_000)
        }
        let issued = try await auth.issueIdentityToken(uid: identity.uid, claims: identity.claims, lifetime: lifetime)
        lock.withLock { tokens[key] = issued }
        return (issued.token, (issued.expires.microseconds - now.microseconds) / 1_000_000)
    }

    /// `body` (an event's JSON object) with `"auth": {"token", "expiresIn"}` added last.
    static func adding(token: String, expiresIn: Int64, to body: [UInt8]) -> [UInt8] {
        var w = JSONWriter(capacity: body.count + 100)
        w.raw(Array(body.dropLast()))
        w.raw(",\"auth\":{\"token\":")
        w.string(token)
        w.raw(",\"expiresIn\":\(expiresIn)}}")
        return w.bytes
    }
}

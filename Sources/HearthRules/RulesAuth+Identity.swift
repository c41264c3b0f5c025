import HearthCore

extension RulesAuth {
    /// The auth context rules see for an identity: nil for unauthenticated callers (and for the admin key,
    /// which bypasses rules and is never evaluated).
    public init?(_ identity: Identity) {
        guard case .user(let uid, let token) = identity else { return nil }
        self.init(uid: uid, token: token)
    }

    /// Token claims over Firestore's defaults: `sub` and `user_id` are the uid and `firebase` names the
    /// sign-in provider (docs/api.md, Identity in rules; docs/rules.md, Rules tests); the given claims win
    /// over the defaults.
    public static func defaultClaims(uid: String, signInProvider: String = "custom",
                                     claims: [String: Value] = [:]) -> [String: Value] {
        var token: [String: Value] = [
            "sub": .string(uid),
            "user_id": .string(uid),
            "firebase": .map(["sign_in_provider": .string(signInProvider), "identities": .map([:])]),
        ]
        for (k, v) in claims { token[k] = v }
        return token
    }
}

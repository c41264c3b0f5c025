import HearthCore

/// The token an endpoint's `identity` gets in each event, for the reads and writes a handler makes itself
/// (`Authorization: Bearer <token>`).
public struct EventAuth: Sendable {
    /// The bearer token.
    public var token: String
    /// Seconds it stays valid from the event's sending, when sent.
    public var expiresIn: Int?

    init(json: JSON) throws(FunctionsError) {
        guard let token = json["token"]?.stringValue else { throw FunctionsError.event("the event's 'auth' has no 'token'") }
        self.token = token
        if case .int(let n)? = json["expiresIn"] { expiresIn = Int(n) } else { expiresIn = nil }
    }
}

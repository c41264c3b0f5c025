import Foundation
import HearthClient
import HearthCore

/// The token an endpoint's `identity` gets in each event, for the reads and writes a handler makes itself
/// (`Authorization: Bearer <token>`).
public struct EventAuth: Sendable {
    /// The bearer token.
    public var token: String
    /// Seconds it stays valid from the event's sending, when sent.
    public var expiresIn: Int?

    /// A client of the server at `url` calling with this token (docs/client.md): the rules apply to it as to the
    /// identity's own calls. `timeout` bounds each call.
    public func hearth(url: URL, timeout: Duration = .seconds(60)) -> Hearth {
        Hearth(url: url, token: token, timeout: timeout)
    }

    init(json: JSON) throws(FunctionsError) {
        guard let token = json["token"]?.stringValue else { throw FunctionsError.event("the event's 'auth' has no 'token'") }
        self.token = token
        if case .int(let n)? = json["expiresIn"] { expiresIn = Int(n) } else { expiresIn = nil }
    }
}

import Crypto
import Foundation
import HearthCore
import NIOConcurrencyHelpers
import _CryptoExtras

/// FCM's HTTP v1 API and Google's OAuth 2 token endpoint for tests (plain HTTP on loopback). `POST /token`
/// takes the JWT-bearer grant (RFC 7523): it checks the assertion's RS256 signature with the service
/// account's public key, its `iss`, `aud`, `scope` and times, and answers an access token. `POST
/// /v1/projects/{project}/messages:send` checks the bearer is such a token and the message, then answers 200
/// `{"name"}` or what a test queued for that registration token, each queued answer used once.
public final class FCMTestServer: Sendable {
    /// One message as FCM received it.
    public struct Received: Sendable {
        public var token: String
        public var message: JSON
        public var status: Int
    }

    /// An answer of the send endpoint: a status and FCM's error (`status`, `errorCode`, a field violation
    /// on `message.token`), with `Retry-After` when set.
    public struct Answer: Sendable {
        public var status: Int
        public var body: JSON
        public var retryAfter: String?

        public init(_ status: Int, status name: String, errorCode: String? = nil, tokenViolation: Bool = false,
                    message: String = "refused", retryAfter: String? = nil) {
            var details: [JSON] = []
            if let errorCode {
                details.append(.object([("@type", .string("type.googleapis.com/google.firebase.fcm.v1.FcmError")),
                                        ("errorCode", .string(errorCode))]))
            }
            if tokenViolation {
                details.append(.object([("@type", .string("type.googleapis.com/google.rpc.BadRequest")),
                                        ("fieldViolations", .array([.object([
                                            ("field", .string("message.token")),
                                            ("description", .string("Invalid registration token"))])]))]))
            }
            self.status = status
            body = .object([("error", .object([("code", .int(Int64(status))), ("message", .string(message)),
                                               ("status", .string(name)), ("details", .array(details))]))])
            self.retryAfter = retryAfter
        }
    }

    struct State {
        var queued: [String: [Answer]] = [:]
        var received: [Received] = []
        var accessTokens: Set<String> = []
        var grants = 0
        var refusedGrants: [String] = []
    }

    let endpoint: TestHTTPEndpoint
    let state: NIOLockedValueBox<State>
    public var port: Int { endpoint.port }
    public var url: String { "http://127.0.0.1:\(endpoint.port)" }
    public var tokenURI: String { url + "/token" }

    /// Starts a server that trusts grants signed by `key` (or by the key given later to `trust`).
    public static func start(trusting key: _RSA.Signing.PublicKey? = nil) async throws -> FCMTestServer {
        let state = NIOLockedValueBox(State())
        let trusted = NIOLockedValueBox<_RSA.Signing.PublicKey?>(key)
        let box = NIOLockedValueBox<String>("")
        let endpoint = try await TestHTTPEndpoint.start { request in
            Self.answer(request, key: trusted.withLockedValue { $0 }, tokenURI: box.withLockedValue { $0 }, state: state)
        }
        box.withLockedValue { $0 = "http://127.0.0.1:\(endpoint.port)/token" }
        return FCMTestServer(endpoint: endpoint, state: state, trustedKey: trusted)
    }

    let trustedKey: NIOLockedValueBox<_RSA.Signing.PublicKey?>

    init(endpoint: TestHTTPEndpoint, state: NIOLockedValueBox<State>, trustedKey: NIOLockedValueBox<_RSA.Signing.PublicKey?>) {
        self.endpoint = endpoint
        self.state = state
        self.trustedKey = trustedKey
    }

    /// Trusts the grants signed by the credentials' service account key (they are made after the server,
    /// for its `tokenURI`).
    public func trust(_ credentials: PushTestCredentials) {
        trustedKey.withLockedValue { $0 = credentials.fcmKey.publicKey }
    }

    /// Queues answers for a registration token, given in order to its next messages.
    public func answer(_ token: String, with answers: [Answer]) {
        state.withLockedValue { $0.queued[token, default: []] += answers }
    }

    /// Every message that reached the send endpoint with a valid bearer, in order.
    public var received: [Received] { state.withLockedValue { $0.received } }
    /// Access tokens granted.
    public var grants: Int { state.withLockedValue { $0.grants } }
    /// Why grants were refused.
    public var refusedGrants: [String] { state.withLockedValue { $0.refusedGrants } }

    public func stop() async { await endpoint.stop() }

    static func json(_ status: Int, _ body: JSON, _ headers: [String: String] = [:]) -> TestHTTPEndpoint.Answer {
        var all = headers
        all["content-type"] = "application/json"
        return .init(status: status, headers: all, body: body.serialized())
    }

    static func answer(_ request: TestHTTPEndpoint.Request, key: _RSA.Signing.PublicKey?, tokenURI: String,
                       state: NIOLockedValueBox<State>) -> TestHTTPEndpoint.Answer {
        if request.method == "POST", request.path == "/token" {
            switch grant(request, key: key, tokenURI: tokenURI) {
            case .success(let token):
                state.withLockedValue { $0.grants += 1; $0.accessTokens.insert(token) }
                return json(200, .object([("access_token", .string(token)), ("expires_in", .int(3599)),
                                          ("token_type", .string("Bearer"))]))
            case .failure(let refusal):
                state.withLockedValue { $0.refusedGrants.append(refusal.description) }
                return json(400, .object([("error", .string("invalid_grant")), ("error_description", .string(refusal.description))]))
            }
        }
        let prefix = "/v1/projects/\(PushTestCredentials.fcmProject)/messages:send"
        guard request.method == "POST", request.path == prefix else {
            return json(404, .object([("error", .object([("code", .int(404)), ("status", .string("NOT_FOUND")),
                                                         ("message", .string("no such method"))]))]))
        }
        let bearer = request.headers["authorization"].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard let bearer, state.withLockedValue({ $0.accessTokens.contains(bearer) }) else {
            return json(401, .object([("error", .object([("code", .int(401)), ("status", .string("UNAUTHENTICATED")),
                                                         ("message", .string("Request had invalid authentication credentials."))]))]))
        }
        guard let body = try? JSON.parse(request.body), let message = body["message"],
              case .string(let token)? = message["token"] else {
            return json(400, Answer(400, status: "INVALID_ARGUMENT", message: "message.token is required").body)
        }
        if case .object(let data)? = message["data"], data.contains(where: { if case .string = $0.1 { false } else { true } }) {
            return json(400, Answer(400, status: "INVALID_ARGUMENT", message: "data values must be strings").body)
        }
        let queued = state.withLockedValue { state -> Answer? in
            guard var answers = state.queued[token], !answers.isEmpty else { return nil }
            let first = answers.removeFirst()
            state.queued[token] = answers
            return first
        }
        let status = queued?.status ?? 200
        state.withLockedValue { $0.received.append(Received(token: token, message: message, status: status)) }
        guard let queued else {
            return json(200, .object([("name", .string("projects/\(PushTestCredentials.fcmProject)/messages/\(UInt32.random(in: 1...UInt32.max))"))]))
        }
        return json(queued.status, queued.body, queued.retryAfter.map { ["retry-after": $0] } ?? [:])
    }

    struct Refusal: Error, CustomStringConvertible { let description: String }

    static func grant(_ request: TestHTTPEndpoint.Request, key: _RSA.Signing.PublicKey?, tokenURI: String) -> Result<String, Refusal> {
        var form: [String: String] = [:]
        for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if parts.count == 2 { form[parts[0]] = parts[1] }
        }
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else { return .failure(.init(description: "grant_type")) }
        guard let assertion = form["assertion"], let jwt = PushTestCredentials.decodeJWT(assertion) else {
            return .failure(.init(description: "assertion is not a JWT"))
        }
        guard jwt.header["alg"] == .string("RS256") else { return .failure(.init(description: "alg")) }
        guard let key, key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: jwt.signature),
                                            for: Data(jwt.input.utf8), padding: .insecurePKCS1v1_5) else {
            return .failure(.init(description: "Invalid JWT Signature."))
        }
        guard jwt.claims["iss"] == .string(PushTestCredentials.fcmClientEmail) else { return .failure(.init(description: "iss")) }
        guard jwt.claims["aud"] == .string(tokenURI) else { return .failure(.init(description: "aud")) }
        guard case .string(let scope)? = jwt.claims["scope"],
              scope.split(separator: " ").contains("https://www.googleapis.com/auth/firebase.messaging") else {
            return .failure(.init(description: "scope"))
        }
        let now = Int64(Date().timeIntervalSince1970)
        guard case .int(let iat)? = jwt.claims["iat"], case .int(let exp)? = jwt.claims["exp"], iat <= now + 60, exp > now,
              exp - iat <= 3600 else { return .failure(.init(description: "iat/exp")) }
        return .success("ya29.test-" + UUID().uuidString)
    }
}

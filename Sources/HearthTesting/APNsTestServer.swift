import Crypto
import Foundation
import HearthCore
import NIOConcurrencyHelpers

/// An APNs provider API for tests, over HTTP/2 with TLS: `POST /3/device/{token}` checks the provider token
/// (a JWT signed ES256 with the key whose public half it holds, its `kid` and `iss`), the `apns-topic`,
/// `apns-push-type` and `apns-priority` headers and the JSON body as Apple documents them, then answers 200,
/// or what a test queued for that device token (`answer(_:with:)`), each queued answer used once.
public final class APNsTestServer: Sendable {
    /// One notification as APNs accepted or refused it.
    public struct Received: Sendable {
        public var token: String
        public var headers: [String: String]
        public var body: JSON
        public var version: String
        public var status: Int
    }

    /// An answer APNs gives: a status and a reason (`{"reason": …}`), with `Retry-After` when set.
    public struct Answer: Sendable {
        public var status: Int
        public var reason: String?
        public var retryAfter: String?

        public init(_ status: Int, _ reason: String? = nil, retryAfter: String? = nil) {
            self.status = status
            self.reason = reason
            self.retryAfter = retryAfter
        }
    }

    struct State {
        var queued: [String: [Answer]] = [:]
        var received: [Received] = []
    }

    let endpoint: TestHTTPEndpoint
    let state: NIOLockedValueBox<State>
    /// The certificate clients must trust.
    public let certificate: TestCertificate
    public var port: Int { endpoint.port }
    public var url: String { "https://127.0.0.1:\(endpoint.port)" }

    /// Starts a server that trusts provider tokens signed by the credentials' key with the test key id and team id.
    public static func start(trusting credentials: PushTestCredentials, topic: String = PushTestCredentials.apnsTopic) async throws -> APNsTestServer {
        let key = credentials.apnsKey.publicKey
        let certificate = try await TestCertificate.make(name: "apns")
        let state = NIOLockedValueBox(State())
        let endpoint = try await TestHTTPEndpoint.start(tls: certificate) { request in
            let (answer, token) = Self.answer(request, key: key, topic: topic, state: state)
            if let token {
                state.withLockedValue {
                    $0.received.append(Received(token: token, headers: request.headers,
                                                body: (try? JSON.parse(request.body)) ?? .null, version: request.version,
                                                status: answer.status))
                }
            }
            return answer
        }
        return APNsTestServer(endpoint: endpoint, state: state, certificate: certificate)
    }

    init(endpoint: TestHTTPEndpoint, state: NIOLockedValueBox<State>, certificate: TestCertificate) {
        self.endpoint = endpoint
        self.state = state
        self.certificate = certificate
    }

    /// Queues answers for a device token, given in order to its next requests.
    public func answer(_ token: String, with answers: [Answer]) {
        state.withLockedValue { $0.queued[token, default: []] += answers }
    }

    /// Every request that reached a device path, in order.
    public var received: [Received] { state.withLockedValue { $0.received } }

    public func stop() async { await endpoint.stop() }

    static func answer(_ request: TestHTTPEndpoint.Request, key: P256.Signing.PublicKey, topic: String,
                       state: NIOLockedValueBox<State>) -> (TestHTTPEndpoint.Answer, String?) {
        func refuse(_ status: Int, _ reason: String) -> TestHTTPEndpoint.Answer {
            .init(status: status, headers: ["content-type": "application/json"],
                  body: JSON.object([("reason", .string(reason))]).serialized())
        }
        guard request.path.hasPrefix("/3/device/") else { return (refuse(404, "BadPath"), nil) }
        let token = String(request.path.dropFirst("/3/device/".count))
        guard request.method == "POST" else { return (refuse(405, "MethodNotAllowed"), token) }
        guard let authorization = request.headers["authorization"], authorization.hasPrefix("bearer ") else {
            return (refuse(403, "MissingProviderToken"), token)
        }
        guard let jwt = PushTestCredentials.decodeJWT(String(authorization.dropFirst("bearer ".count))),
              jwt.header["alg"] == .string("ES256"), jwt.header["kid"] == .string(PushTestCredentials.apnsKeyID),
              jwt.claims["iss"] == .string(PushTestCredentials.apnsTeamID),
              case .int(let issued)? = jwt.claims["iat"], abs(Int64(Date().timeIntervalSince1970) - issued) < 3600,
              let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jwt.signature),
              key.isValidSignature(signature, for: Data(jwt.input.utf8)) else {
            return (refuse(403, "InvalidProviderToken"), token)
        }
        guard let pushTopic = request.headers["apns-topic"] else { return (refuse(400, "MissingTopic"), token) }
        guard pushTopic == topic else { return (refuse(400, "TopicDisallowed"), token) }
        guard let type = request.headers["apns-push-type"], ["alert", "background"].contains(type) else {
            return (refuse(400, "InvalidPushType"), token)
        }
        if let priority = request.headers["apns-priority"], !["5", "10"].contains(priority) || (type == "background" && priority != "5") {
            return (refuse(400, "BadPriority"), token)
        }
        guard let body = try? JSON.parse(request.body), case .object? = body["aps"] else {
            return (refuse(400, "PayloadEmpty"), token)
        }
        guard request.body.count <= 4096 else { return (refuse(413, "PayloadTooLarge"), token) }
        let queued = state.withLockedValue { state -> Answer? in
            guard var answers = state.queued[token], !answers.isEmpty else { return nil }
            let first = answers.removeFirst()
            state.queued[token] = answers
            return first
        }
        guard let queued else { return (.init(status: 200, headers: ["apns-id": UUID().uuidString]), token) }
        var answer = queued.reason.map { refuse(queued.status, $0) } ?? .init(status: queued.status)
        if let retryAfter = queued.retryAfter { answer.headers["retry-after"] = retryAfter }
        return (answer, token)
    }
}

import AsyncHTTPClient
import Crypto
import Foundation
import HearthCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOSSL

/// Sends notifications to APNs over HTTP/2 with token authentication: each request carries a provider token,
/// a JWT `{alg: ES256, kid}` `{iss: team id, iat}` signed with the .p8 key, made again before it is an hour old.
final class APNsClient: Sendable {
    let settings: APNsSettings
    let http: HTTPClient
    private let providerToken = NIOLockedValueBox<(jwt: String, issuedAt: ContinuousClock.Instant)?>(nil)

    init(settings: APNsSettings) {
        self.settings = settings
        var tls = TLSConfiguration.makeClientConfiguration()
        if !settings.trustRoots.isEmpty { tls.additionalTrustRoots = [.certificates(settings.trustRoots)] }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        configuration.redirectConfiguration = .disallow
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async { try? await http.shutdown() }

    /// The provider token, signed again once it is `tokenLifetime` old (or after APNs called it expired).
    func currentToken() throws -> String {
        try providerToken.withLockedValue { cached in
            let now = ContinuousClock.now
            if let cached, now - cached.issuedAt < settings.tokenLifetime { return cached.jwt }
            let jwt = try PushJWT.es256(
                header: .object([("alg", .string("ES256")), ("kid", .string(settings.keyID))]),
                claims: .object([("iss", .string(settings.teamID)), ("iat", .int(Int64(Date().timeIntervalSince1970)))]),
                key: settings.key)
            cached = (jwt, now)
            return jwt
        }
    }

    /// The notification's APNs body: `aps.alert` from `notification`, the data keys beside `aps`; without a
    /// notification, a background notification (`content-available`).
    static func body(_ content: JSON) -> (body: JSON, alert: Bool) {
        var aps: [(String, JSON)] = []
        var alert = false
        if case .object(let fields)? = content["notification"] {
            aps.append(("alert", .object(fields)))
            alert = true
        } else {
            aps.append(("content-available", .int(1)))
        }
        var top: [(String, JSON)] = [("aps", .object(aps))]
        if case .object(let data)? = content["data"] { top += data }
        return (.object(top), alert)
    }

    func send(token: String, content: JSON) async -> PushOutcome {
        let jwt: String
        do {
            jwt = try currentToken()
        } catch {
            return .failed("could not sign the APNs provider token: \(error)")
        }
        let (body, alert) = Self.body(content)
        var request = HTTPClientRequest(url: "\(settings.baseURL)/3/device/\(token)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(jwt)")
        request.headers.add(name: "apns-topic", value: settings.topic)
        request.headers.add(name: "apns-push-type", value: alert ? "alert" : "background")
        request.headers.add(name: "apns-priority", value: alert ? "10" : "5")
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body.serialized()))
        let response: HTTPClientResponse, answer: ByteBuffer
        switch await PushOutcome.exchange(request, on: http, service: "APNs", hiding: token, jwt) {
        case .answered(let r, let a): (response, answer) = (r, a)
        case .unreachable(let outcome): return outcome
        }
        if response.status == .ok { return .delivered }
        let reason: String = {
            guard let json = try? JSON.parse(Array(answer.readableBytesView)), case .string(let r)? = json["reason"] else {
                return "no reason given"
            }
            return r
        }()
        let said = "APNs answered \(response.status.code) \(PushOutcome.redacted(reason, token))"
        let retryAfter = PushOutcome.retryAfter(response.headers.first(name: "retry-after"))
        switch (response.status.code, reason) {
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
            return .unregistered(said)
        case (403, "ExpiredProviderToken"):
            providerToken.withLockedValue { $0 = nil }
            return .retry(said, after: nil)
        case (429, _), (500, _), (503, _):
            return .retry(said, after: retryAfter)
        default:
            return .failed(said)
        }
    }
}

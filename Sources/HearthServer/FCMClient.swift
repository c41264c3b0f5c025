import AsyncHTTPClient
import Foundation
import HearthCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Sends notifications through FCM's HTTP v1 API (`POST /v1/projects/{project}/messages:send`) with a
/// service account: an OAuth 2 JWT-bearer grant (RS256, RFC 7523) is exchanged at the account's `token_uri`
/// for an access token, kept until five minutes before it expires (or until FCM refuses it).
final class FCMClient: Sendable {
    let settings: FCMSettings
    let http: HTTPClient
    private let accessToken = NIOLockedValueBox(TokenState.none)

    /// The access token: none yet, being exchanged, or ready until a time.
    enum TokenState {
        case none
        case exchanging(Task<String, any Error>)
        case ready(String, expires: ContinuousClock.Instant)
    }

    init(settings: FCMSettings) {
        self.settings = settings
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        configuration.redirectConfiguration = .disallow
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async { try? await http.shutdown() }

    /// Why no access token could be had: `passing` when another try may work.
    struct TokenFailure: Error {
        let message: String
        let passing: Bool
    }

    /// A live access token, from the cache or exchanged now; sends that need one at the same moment wait for
    /// the same exchange.
    func currentToken() async throws(TokenFailure) -> String {
        let exchange: Task<String, any Error> = accessToken.withLockedValue { state in
            switch state {
            case .ready(let token, let expires) where ContinuousClock.now < expires:
                return Task { () throws -> String in token }
            case .exchanging(let task):
                return task
            default:
                let task = Task { try await self.exchange() }
                state = .exchanging(task)
                return task
            }
        }
        do {
            return try await exchange.value
        } catch let failure as TokenFailure {
            accessToken.withLockedValue { if case .exchanging = $0 { $0 = .none } }
            throw failure
        } catch {
            accessToken.withLockedValue { if case .exchanging = $0 { $0 = .none } }
            throw TokenFailure(message: "\(error)", passing: true)
        }
    }

    /// Exchanges the grant at the token URI and keeps the access token.
    private func exchange() async throws(TokenFailure) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        var header: [(String, JSON)] = [("alg", .string("RS256")), ("typ", .string("JWT"))]
        if let kid = settings.privateKeyID { header.append(("kid", .string(kid))) }
        let assertion: String
        do {
            assertion = try PushJWT.rs256(header: .object(header), claims: .object([
                ("iss", .string(settings.clientEmail)), ("scope", .string(FCMSettings.scope)),
                ("aud", .string(settings.tokenURI)), ("iat", .int(now)), ("exp", .int(now + 3600)),
            ]), key: settings.key)
        } catch {
            throw TokenFailure(message: "could not sign the service account's grant: \(error)", passing: false)
        }
        var request = HTTPClientRequest(url: settings.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"))
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await http.execute(request, timeout: .seconds(30))
            body = try await response.body.collect(upTo: 64 * 1024)
        } catch {
            throw TokenFailure(message: "the token endpoint is unreachable: \(error)", passing: true)
        }
        let json = try? JSON.parse(Array(body.readableBytesView))
        guard response.status == .ok else {
            var said = "the token endpoint answered \(response.status.code)"
            if case .string(let error)? = json?["error"] { said += " \(error)" }
            if case .string(let detail)? = json?["error_description"] { said += ": \(detail)" }
            throw TokenFailure(message: said, passing: response.status.code >= 500 || response.status.code == 429)
        }
        guard case .string(let token)? = json?["access_token"], !token.isEmpty else {
            throw TokenFailure(message: "the token endpoint's answer has no access_token", passing: true)
        }
        var lifetime: Int64 = 3600
        if case .int(let seconds)? = json?["expires_in"] { lifetime = seconds }
        // Kept until near its expiry, so a send never starts with a token about to lapse.
        let margin = min(300, lifetime / 2)
        accessToken.withLockedValue { $0 = .ready(token, expires: ContinuousClock.now + .seconds(lifetime - margin)) }
        return token
    }

    /// The v1 API's message for one token.
    static func message(token: String, content: JSON) -> JSON {
        var message: [(String, JSON)] = [("token", .string(token))]
        if let notification = content["notification"] { message.append(("notification", notification)) }
        if let data = content["data"] { message.append(("data", data)) }
        return .object([("message", .object(message))])
    }

    func send(token: String, content: JSON) async -> PushOutcome {
        let bearer: String
        do {
            bearer = try await currentToken()
        } catch {
            return error.passing ? .retry("FCM: \(error.message)", after: nil) : .failed("FCM: \(error.message)")
        }
        var request = HTTPClientRequest(url: "\(settings.baseURL)/v1/projects/\(settings.projectID)/messages:send")
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer \(bearer)")
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: Self.message(token: token, content: content).serialized()))
        let response: HTTPClientResponse, answer: ByteBuffer
        switch await PushOutcome.exchange(request, on: http, service: "FCM", hiding: token, bearer) {
        case .answered(let r, let a): (response, answer) = (r, a)
        case .unreachable(let outcome): return outcome
        }
        if response.status == .ok { return .delivered }
        let error = (try? JSON.parse(Array(answer.readableBytesView)))?["error"]
        var status = "", message = "", errorCode = "", tokenField = false
        if case .string(let s)? = error?["status"] { status = s }
        if case .string(let m)? = error?["message"] { message = m }
        if case .array(let details)? = error?["details"] {
            for detail in details {
                if case .string(let code)? = detail["errorCode"] { errorCode = code }
                if case .array(let violations)? = detail["fieldViolations"] {
                    tokenField = tokenField || violations.contains { $0["field"] == .string("message.token") }
                }
            }
        }
        let said = PushOutcome.redacted(
            "FCM answered \(response.status.code) \(status)\(errorCode.isEmpty || errorCode == status ? "" : " " + errorCode): \(message)",
            token, bearer)
        let retryAfter = PushOutcome.retryAfter(response.headers.first(name: "retry-after"))
        switch response.status.code {
        case 404 where errorCode == "UNREGISTERED" || status == "NOT_FOUND":
            return .unregistered(said)
        case 400 where errorCode == "UNREGISTERED" || tokenField:
            return .unregistered(said)
        case 401:
            // The access token was revoked or expired early: exchange the grant again.
            accessToken.withLockedValue { $0 = .none }
            return .retry(said, after: nil)
        case 429, 500, 503:
            return .retry(said, after: retryAfter)
        default:
            return .failed(said)
        }
    }
}

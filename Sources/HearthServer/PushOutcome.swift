import AsyncHTTPClient
import Foundation
import HearthCore
import NIOCore

/// What became of one attempt to hand a notification to APNs or FCM.
enum PushOutcome: Sendable, Equatable {
    /// The service accepted it.
    case delivered
    /// The service no longer knows the token (the app was removed, the token is malformed): the device is
    /// dropped with its queued notifications.
    case unregistered(String)
    /// A passing failure (overloaded, unreachable, an expired credential): tried again, not before `after`
    /// when the service said so (`Retry-After`).
    case retry(String, after: Duration?)
    /// A failure that another attempt would not change: the notification is dead with the reason.
    case failed(String)

    /// The `Retry-After` header: seconds, or an HTTP date.
    static func retryAfter(_ header: String?, now: Date = Date()) -> Duration? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if let seconds = Int(header) { return .seconds(max(0, seconds)) }
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "GMT")
        format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = format.date(from: header) else { return nil }
        return .seconds(max(0, Int(date.timeIntervalSince(now).rounded(.up))))
    }

    /// An error's text with a token taken out, so that no log or stored reason carries it.
    static func redacted(_ text: String, _ secrets: String...) -> String { redacted(text, hiding: secrets) }

    static func redacted(_ text: String, hiding secrets: [String]) -> String {
        secrets.filter { !$0.isEmpty }.reduce(text) { $0.replacingOccurrences(of: $1, with: "<redacted>") }
    }

    /// Sends one request to a push service and reads its answer (64 KiB at most); an unreachable service is a
    /// `.retry` naming `service`, with the secrets taken out of the error's text.
    static func exchange(_ request: HTTPClientRequest, on http: HTTPClient, service: String,
                         hiding secrets: String...) async -> PushExchange {
        do {
            let response = try await http.execute(request, timeout: .seconds(30))
            return .answered(response, try await response.body.collect(upTo: 64 * 1024))
        } catch {
            return .unreachable(.retry(redacted("\(service) unreachable: \(error)", hiding: secrets), after: nil))
        }
    }
}

/// A push service's answer to one request, or the outcome when it could not be reached.
enum PushExchange {
    case answered(HTTPClientResponse, ByteBuffer)
    case unreachable(PushOutcome)
}

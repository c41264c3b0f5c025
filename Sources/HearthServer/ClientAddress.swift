import Foundation
import HTTPTypes
import Hummingbird

/// Where a request comes from, for the throttles: the connection's peer address, or the last entry of
/// `X-Forwarded-For` when the server is configured to trust a reverse proxy that sets it.
struct ClientAddress: Sendable {
    let trustForwardedFor: Bool
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    func callAsFunction(_ request: Request, _ context: HearthRequestContext) -> String? {
        if trustForwardedFor, let header = request.headers[Self.forwardedFor] {
            // The proxy appends the address it saw; entries before it are whatever the client claimed.
            let last = header.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if !last.isEmpty { return String(last.prefix(64)) }
        }
        return context.remoteAddress?.ipAddress
    }
}

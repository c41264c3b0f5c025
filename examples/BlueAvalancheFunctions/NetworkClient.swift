import AsyncHTTPClient
import Foundation
import HearthCore
import NIOCore
import NIOHTTP1

/// Why a handler failed (a network's answer that is not 2xx, a missing token): Hearth delivers the event again later.
struct ServiceError: Error, CustomStringConvertible {
    let description: String
}

/// The social networks' API: one JSON `POST <networksURL>/<network>/posts` per network a post goes to, as
/// the author's connected account (its token as the bearer), keyed for idempotence.
struct NetworkClient: Sendable {
    let settings: BlueAvalancheSettings

    /// Posts to one network. `idempotencyKey` is the event's id: a redelivered event sends the same key, so
    /// a network that already took the post answers as before and does not post it twice.
    func publish(_ post: ScheduledPost, to outlet: Outlet, idempotencyKey: String) async throws {
        let url = settings.networksURL.appendingPathComponent(outlet.network).appendingPathComponent("posts")
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Authorization", value: "Bearer \(outlet.authToken)")
        request.headers.add(name: "Idempotency-Key", value: idempotencyKey)
        let body = JSON.object([
            ("post", .string("posts/\(post.id)")), ("handle", .string(outlet.handle)), ("content", .string(post.content)),
            ("media", .array(post.media.map(JSON.string))),
        ])
        request.body = .bytes(ByteBuffer(bytes: body.serialized()))
        try await send(request, what: outlet.network)
    }

    /// Sends a request and fails with the status and the start of the body unless the answer is 2xx.
    private func send(_ request: HTTPClientRequest, what: String) async throws {
        let response = try await settings.httpClient.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024)
        guard (200..<300).contains(response.status.code) else {
            throw ServiceError(description: "\(what) answered \(response.status.code): \(String(buffer: body).prefix(200))")
        }
    }
}

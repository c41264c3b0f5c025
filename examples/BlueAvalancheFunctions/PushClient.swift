import AsyncHTTPClient
import Foundation
import HearthCore
import NIOCore
import NIOHTTP1

/// Hearth's push API, called with an event's token: `POST /v1/push/send` to every device of a user.
struct PushClient: Sendable {
    let settings: BlueAvalancheSettings
    let token: String

    /// Queues the daily reminder for each of the user's devices (none registered: nothing is sent).
    func remind(_ uid: String) async throws {
        var request = HTTPClientRequest(url: settings.hearthURL.appendingPathComponent("v1/push/send").absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let body = JSON.object([
            ("to", .object([("uid", .string(uid))])),
            ("notification", .object([("title", .string("Time to post")),
                                      ("body", .string("Write today's post: Blue Avalanche publishes it at its time."))])),
            ("data", .object([("kind", .string("dailyReminder"))])),
        ])
        request.body = .bytes(ByteBuffer(bytes: body.serialized()))
        try await NetworkClient(settings: settings).send(request, what: "POST /v1/push/send")
    }
}

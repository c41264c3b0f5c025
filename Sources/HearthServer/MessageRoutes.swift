import HearthAuth
import HearthCore
import HTTPTypes
import Hummingbird

/// App email and the outbox: `POST /v1/messages/email` (the admin or a function) queues a message per address;
/// `GET /v1/admin/outbox` lists the pending messages and the dead ones (given up on) with their reasons,
/// and `POST /v1/admin/outbox/retry` `{"id"?}` makes one dead message (or all) pending again.
struct MessageRoutes {
    let auth: AuthService

    /// A sender's key for one send (`SendKey`): sent again with the same request, nothing more is queued.
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    func register(on router: Router<HearthRequestContext>) {
        router.post("/v1/messages/email") { request, context in
            try Self.requireAdminOrFunction(context, "sending email")
            let json = try await AuthRoutes.body(request, context)
            let body = try AppEmailRequest(json: json)
            let ids = try await auth.queueEmail(body.email, key: try SendKey(header: request.headers[MessageRoutes.idempotencyKey], request: json))
            return jsonResponse(JSON.object([("queued", .array(ids.map { .string($0) }))]).serialized(), status: .accepted)
        }
        DeliveryQueueRoutes(path: "/v1/admin/outbox", entry: "message",
                            pending: { try await auth.pendingOutbox(limit: $0).map(\.adminJSON) },
                            dead: { try await auth.deadOutbox(limit: $0).map(\.adminJSON) },
                            retry: { try await auth.retryDeadOutbox(id: $0) }).register(on: router)
    }

    static func requireAdmin(_ context: HearthRequestContext, _ what: String) throws(HearthError) {
        guard context.identity.isAdmin else { throw .permissionDenied("\(what) needs the admin key") }
    }

    /// Sending is the owner's, or a function's answering an event with its identity token; never a user's,
    /// whatever claims the account has.
    static func requireAdminOrFunction(_ context: HearthRequestContext, _ what: String) throws(HearthError) {
        if context.identity.isAdmin || context.isFunction { return }
        let message = "\(what) needs the admin key or a function's identity token"
        throw context.identity == .unauthenticated ? .unauthenticated(message) : .permissionDenied(message)
    }
}

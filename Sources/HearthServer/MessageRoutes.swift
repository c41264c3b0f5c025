import HearthAuth
import HearthCore
import Hummingbird

/// App email and the outbox: `POST /v1/messages/email` (the admin or a function) queues a message per address;
/// `GET /v1/admin/outbox` lists the pending messages and the dead ones (given up on) with their reasons,
/// and `POST /v1/admin/outbox/retry` `{"id"?}` makes one dead message (or all) pending again.
struct MessageRoutes {
    let auth: AuthService

    func register(on router: Router<HearthRequestContext>) {
        router.post("/v1/messages/email") { request, context in
            try Self.requireAdminOrFunction(context, "sending email")
            let body = try AppEmailRequest(json: try await AuthRoutes.body(request, context))
            let ids = try await auth.queueEmail(body.email)
            return jsonResponse(JSON.object([("queued", .array(ids.map { .string($0) }))]).serialized(), status: .accepted)
        }
        router.get("/v1/admin/outbox") { request, context in
            try Self.requireAdmin(context, "reading the outbox")
            _ = try QueryParameters(request, allowed: [])
            let pending = try await auth.pendingOutbox(limit: Self.listLimit)
            let dead = try await auth.deadOutbox(limit: Self.listLimit)
            return jsonResponse(JSON.object([
                ("pending", .array(pending.map(\.adminJSON))), ("dead", .array(dead.map(\.adminJSON))),
            ]).serialized())
        }
        router.post("/v1/admin/outbox/retry") { request, context in
            try Self.requireAdmin(context, "retrying messages")
            let json = try await AuthRoutes.body(request, context)
            guard case .object(let pairs) = json, pairs.allSatisfy({ $0.0 == "id" }) else {
                throw HearthError.invalidArgument("the body must be {} (every dead message) or {\"id\": \"...\"}")
            }
            var id: String?
            switch json["id"] {
            case nil: id = nil
            case .string(let s)?: id = s
            default: throw HearthError.invalidArgument("id: a string is required when given")
            }
            let retried = try await auth.retryDeadOutbox(id: id)
            if let id, retried.isEmpty { throw HearthError.notFound("no dead message has the id '\(id)'") }
            return jsonResponse(JSON.object([("retried", .array(retried.map { .string($0) }))]).serialized())
        }
    }

    /// Most messages of each state listed.
    static let listLimit = 1000

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

import HearthCore
import Hummingbird

/// The admin's view of a delivery queue (the outbox, the push queue): `GET path` lists the pending entries and
/// the dead ones (given up on) with their reasons; `POST path/retry` `{"id"?}` makes one dead entry (or all)
/// pending again, due at once.
struct DeliveryQueueRoutes: Sendable {
    /// Where the queue is served (`/v1/admin/outbox`).
    let path: String
    /// What an entry is called in errors (`message`, `push notification`).
    let entry: String
    let pending: @Sendable (_ limit: Int) async throws -> [JSON]
    let dead: @Sendable (_ limit: Int) async throws -> [JSON]
    let retry: @Sendable (_ id: String?) async throws -> [String]

    /// Most entries of each state listed.
    static let listLimit = 1000

    func register(on router: Router<HearthRequestContext>) {
        router.get(RouterPath(path)) { request, context in
            try MessageRoutes.requireAdmin(context, "reading the \(entry) queue")
            _ = try QueryParameters(request, allowed: [])
            return jsonResponse(JSON.object([
                ("pending", .array(try await pending(Self.listLimit))), ("dead", .array(try await dead(Self.listLimit))),
            ]).serialized())
        }
        router.post(RouterPath(path + "/retry")) { request, context in
            try MessageRoutes.requireAdmin(context, "retrying \(entry)s")
            let json = try await AuthRoutes.body(request, context)
            try PushRequests.onlyFields(json, ["id"])
            var id: String?
            switch json["id"] {
            case nil: id = nil
            case .string(let s)?: id = s
            default: throw HearthError.invalidArgument("id: a string is required when given")
            }
            let retried = try await retry(id)
            if let id, retried.isEmpty { throw HearthError.notFound("no dead \(entry) has the id '\(id)'") }
            return jsonResponse(JSON.object([("retried", .array(retried.map { .string($0) }))]).serialized())
        }
    }
}

import Foundation
import HearthAuth
import HearthCore
import Hummingbird

/// Push notifications. A signed-in user registers devices (`POST /v1/push/devices`, answered with the
/// device's id), lists them, deletes one by its id (so the token never appears in a URL) and subscribes them
/// to topics; the admin or a function sends (`POST /v1/push/send`), lists the queue (`GET /v1/admin/push`) and retries
/// dead notifications (`POST /v1/admin/push/retry`).
struct PushRoutes {
    let push: PushService

    func register(on router: Router<HearthRequestContext>) {
        router.post("/v1/push/devices") { request, context in
            let uid = try Self.requireUser(context)
            let registration = try PushRequests.Registration(json: try await AuthRoutes.body(request, context))
            let (device, created) = try await push.register(uid: uid, registration)
            return jsonResponse(device.json.serialized(), status: created ? .created : .ok)
        }
        router.get("/v1/push/devices") { request, context in
            let uid = try Self.requireUser(context)
            _ = try QueryParameters(request, allowed: [])
            let devices = try await push.devices(uid: uid)
            return jsonResponse(JSON.object([("devices", .array(devices.map(\.json)))]).serialized())
        }
        router.delete("/v1/push/devices/:id") { _, context in
            _ = try Self.requireUserOrAdmin(context)
            try await push.delete(try Self.parameter(context, "id"), caller: context.identity)
            return Response(status: .noContent)
        }
        router.post("/v1/push/topics/:topic") { request, context in
            try await Self.topic(request, context, push: push, subscribed: true)
        }
        router.delete("/v1/push/topics/:topic") { request, context in
            try await Self.topic(request, context, push: push, subscribed: false)
        }
        router.post("/v1/push/send") { request, context in
            try MessageRoutes.requireAdminOrFunction(context, "sending push notifications")
            let json = try await AuthRoutes.body(request, context)
            let send = try PushRequests.Send(json: json)
            let ids = try await push.send(send, key: try SendKey(header: request.headers[MessageRoutes.idempotencyKey], request: json))
            return jsonResponse(JSON.object([("queued", .array(ids.map { .string($0) }))]).serialized(),
                                status: ids.isEmpty ? .ok : .accepted)
        }
        DeliveryQueueRoutes(path: "/v1/admin/push", entry: "push notification",
                            pending: { try await push.pending(limit: $0).map(\.adminJSON) },
                            dead: { try await push.dead(limit: $0).map(\.adminJSON) },
                            retry: { try await push.retryDead(id: $0) }).register(on: router)
    }

    static func topic(_ request: Request, _ context: HearthRequestContext, push: PushService, subscribed: Bool) async throws -> Response {
        _ = try requireUserOrAdmin(context)
        let topic = try parameter(context, "topic")
        try PushRequests.checkTopic(topic, field: "topic")
        let id = try PushRequests.deviceField(try await AuthRoutes.body(request, context))
        let device = try await push.setTopic(topic, device: id, subscribed: subscribed, caller: context.identity)
        return jsonResponse(device.json.serialized())
    }

    /// The signed-in user's uid: devices belong to accounts, so the admin key registers none.
    static func requireUser(_ context: HearthRequestContext) throws(HearthError) -> String {
        guard let uid = context.identity.uid else {
            throw context.identity.isAdmin
                ? .permissionDenied("devices belong to a signed-in user; the admin key has none")
                : .unauthenticated("registering a device needs a signed-in user")
        }
        return uid
    }

    static func requireUserOrAdmin(_ context: HearthRequestContext) throws(HearthError) -> Identity {
        guard context.identity.isAdmin || context.identity.uid != nil else {
            throw .unauthenticated("this needs a signed-in user")
        }
        return context.identity
    }

    static func parameter(_ context: HearthRequestContext, _ name: String) throws(HearthError) -> String {
        guard let raw = context.parameters.get(name), let value = raw.removingPercentEncoding, !value.isEmpty else {
            throw .invalidArgument("\(name): missing from the path")
        }
        return value
    }
}

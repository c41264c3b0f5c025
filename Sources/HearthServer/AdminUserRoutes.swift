import Foundation
import HearthAuth
import HearthCore
import Hummingbird

/// Account administration with the admin key, as Firebase's Admin SDK offers it: list, create, read and
/// delete accounts, set custom claims, revoke sessions. Any other caller gets 403 `permission-denied`.
struct AdminUserRoutes {
    let auth: AuthService

    func register(on router: Router<HearthRequestContext>) {
        router.get("/v1/admin/users") { request, context in
            try Self.requireAdmin(context)
            let params = try QueryParameters(request, allowed: ["pageSize", "pageToken"])
            let size = try params.int("pageSize", range: 1...AuthLimits.maxUserPageSize, default: Limits.defaultPageSize)
            let page = try await auth.listUsers(pageSize: size, pageToken: params["pageToken"])
            return jsonResponse(page.json.serialized())
        }
        router.post("/v1/admin/users") { request, context in
            try Self.requireAdmin(context)
            let body = try AuthRequest.CreateUser(json: try await AuthRoutes.body(request, context))
            let user = try await auth.createUser(body.user)
            return jsonResponse(user.adminJSON.serialized(), status: .created)
        }
        router.get("/v1/admin/users/:uid") { _, context in
            try Self.requireAdmin(context)
            return jsonResponse(try await auth.user(uid: try Self.uid(context)).adminJSON.serialized())
        }
        router.delete("/v1/admin/users/:uid") { _, context in
            try Self.requireAdmin(context)
            try await auth.deleteUser(uid: try Self.uid(context))
            return Response(status: .noContent)
        }
        router.put("/v1/admin/users/:uid/claims") { request, context in
            try Self.requireAdmin(context)
            let body = try AuthRequest.SetClaims(json: try await AuthRoutes.body(request, context))
            let user = try await auth.setClaims(uid: try Self.uid(context), claims: body.claims)
            return jsonResponse(user.adminJSON.serialized())
        }
        router.post("/v1/admin/users/:uid/revoke") { request, context in
            try Self.requireAdmin(context)
            try await AuthRoutes.emptyBody(request, context)
            let count = try await auth.revokeSessions(uid: try Self.uid(context))
            return jsonResponse(JSON.object([("revokedSessions", .int(Int64(count)))]).serialized())
        }
    }

    static func requireAdmin(_ context: HearthRequestContext) throws(HearthError) {
        guard context.identity.isAdmin else {
            throw .permissionDenied("account administration needs the admin key")
        }
    }

    /// The `{uid}` path segment, percent-decoded and checked.
    static func uid(_ context: HearthRequestContext) throws(HearthError) -> String {
        guard let raw = context.parameters.get("uid"), let uid = raw.removingPercentEncoding else {
            throw .invalidArgument("the uid in the path is not valid percent-encoded UTF-8")
        }
        try AuthService.validateUID(uid)
        return uid
    }
}

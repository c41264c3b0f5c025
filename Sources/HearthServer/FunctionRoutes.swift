import Foundation
import HearthCore
import HearthEngine
import Hummingbird

/// The queue of function events, admin only: `GET /v1/functions/events?state=pending|dead` lists events in
/// queue order, a page at a time (`pageSize`, `pageToken`), each with its delivery state and the event as
/// sent; `POST /v1/functions/events/{id}/retry` makes a dead event pending again, due at once.
struct FunctionRoutes {
    let database: Database

    func register(on router: Router<HearthRequestContext>) {
        router.get("/v1/functions/events") { request, context in
            try Self.requireAdmin(context, "reading function events")
            let query = try QueryParameters(request, allowed: ["state", "pageSize", "pageToken"])
            let dead: Bool
            switch query["state"] {
            case "pending"?, nil: dead = false
            case "dead"?: dead = true
            case let other?: throw HearthError.invalidArgument("query parameter 'state' must be pending or dead, got '\(other.prefix(64))'")
            }
            let pageSize = try query.int("pageSize", range: 1...1000, default: 100)
            var after: Int64 = 0
            if let token = query["pageToken"] {
                guard let n = Int64(token), n >= 0 else {
                    throw HearthError.invalidArgument("pageToken '\(token.prefix(64))' is not a token this server issued")
                }
                after = n
            }
            guard case .functionEvents(let events) = try await database.perform(
                .functions(.events(dead: dead, after: after, limit: pageSize + 1)), as: context.identity) else {
                throw HearthError.internal()
            }
            let page = events.prefix(pageSize)
            var w = JSONWriter()
            w.raw("{\"events\":[")
            for (k, event) in page.enumerated() {
                if k > 0 { w.raw(",") }
                Self.write(event, to: &w)
            }
            w.raw("]")
            if events.count > pageSize, let last = page.last {
                w.raw(",\"nextPageToken\":")
                w.string("\(last.sequence)")
            }
            w.raw("}")
            return jsonResponse(w.bytes)
        }
        router.post("/v1/functions/events/:id/retry") { request, context in
            try Self.requireAdmin(context, "retrying function events")
            guard let raw = context.parameters.get("id"), let id = raw.removingPercentEncoding else {
                throw HearthError.invalidArgument("the path must name an event id")
            }
            _ = try await database.perform(.functions(.retry(id: id)), as: context.identity)
            return jsonResponse(JSON.object([("id", .string(id)), ("state", .string("pending"))]).serialized())
        }
    }

    /// An event as the admin endpoint lists it.
    static func write(_ event: FunctionEventRecord, to w: inout JSONWriter) {
        w.raw("{\"id\":")
        w.string(event.id)
        w.raw(",\"endpoint\":")
        w.string(event.endpoint)
        w.raw(",\"state\":")
        w.string(event.deadAt == nil ? "pending" : "dead")
        w.raw(",\"attempts\":\(event.attempts),\"createdAt\":")
        w.string(event.createdAt.rfc3339)
        if event.deadAt == nil {
            w.raw(",\"nextAttemptAt\":")
            w.string(event.nextAttemptAt.rfc3339)
        }
        if let deadAt = event.deadAt {
            w.raw(",\"deadAt\":")
            w.string(deadAt.rfc3339)
        }
        if let error = event.lastError {
            w.raw(",\"lastError\":")
            w.string(error)
        }
        w.raw(",\"event\":")
        w.raw(event.body)
        w.raw("}")
    }

    static func requireAdmin(_ context: HearthRequestContext, _ what: String) throws(HearthError) {
        guard context.identity.isAdmin else { throw .permissionDenied("\(what) needs the admin key") }
    }
}

import Foundation
import HearthCore
import HearthFunctions
import HearthTesting
import Hummingbird
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Deliveries answered without a socket: which handler an event goes to, what the event holds, and the
/// answers (writes in the `/v1/commit` format, as the server's own parser reads them).
@Suite struct FunctionsResponderTests {
    static let secret = "whsec_" + Base64.encode([UInt8](repeating: 42, count: 32))

    /// Records which handler ran with which event.
    final class Calls: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [(String, FunctionEvent)] = []
        func add(_ name: String, _ event: FunctionEvent) { lock.withLock { list.append((name, event)) } }
        var all: [(String, FunctionEvent)] { lock.withLock { list } }
    }

    /// Answers `body` signed now, as Hearth sends it.
    static func deliver(_ body: String, to responder: FunctionsResponder, id: String = "evt_1",
                        signature: String? = nil) async throws -> FunctionsResponder.Answer {
        let timestamp = Int64(Date().timeIntervalSince1970)
        let signed = try WebhookVerifier(secret: secret).sign(id: id, timestamp: timestamp, body: Array(body.utf8))
        let headers = ["webhook-id": id, "webhook-timestamp": "\(timestamp)", "webhook-signature": signature ?? signed]
        return await responder.answer(header: { headers[$0] }, body: Array(body.utf8))
    }

    static func documentEvent(type: String, name: String, path: String, before: String = "null", after: String = "null",
                              params: String = "{}", extra: String = "") -> String {
        """
        {"id": "evt_1", "type": "\(type)", "name": "\(name)", "time": "2026-11-26T23:00:13.912345Z", "params": \(params),
         "document": {"path": "\(path)", "before": \(before), "after": \(after)}\(extra)}
        """
    }

    static func functions(_ calls: Calls) -> Functions {
        var functions = Functions()
        functions.onDocumentWritten("threads/{t}/rounds/{r}") { event in calls.add("roundWritten", event) }
        functions.onDocumentCreated("posts/{postId}") { event in calls.add("postCreated", event) }
        functions.onDocumentCreated("posts/special") { event in calls.add("specialCreated", event) }
        functions.onDocumentWritten("posts/{postId}", name: "postAudit") { event in calls.add("postAudit", event) }
        functions.onUserCreated { event in calls.add("welcome", event) }
        functions.onFileFinalized("media/{uid}/{file}") { event in calls.add("thumbnail", event) }
        functions.onSchedule("dailyReminder") { event in calls.add("dailyReminder", event) }
        functions.onTimer("roundCloses") { event in calls.add("roundCloses", event) }
        return functions
    }

    @Test func eachEventGoesToItsHandler() async throws {
        // (the body, the handler expected, or nil: none takes it)
        let cases: [(String, String?)] = [
            (Self.documentEvent(type: "document.written", name: "roundWritten", path: "threads/a/rounds/b"), "roundWritten"),
            // The name in the file need not be the handler's: type and path decide.
            (Self.documentEvent(type: "document.written", name: "anyName", path: "threads/a/rounds/b"), "roundWritten"),
            (Self.documentEvent(type: "document.created", name: "postCreated", path: "posts/p1"), "postCreated"),
            // The first handler whose path matches, in the order registered.
            (Self.documentEvent(type: "document.created", name: "x", path: "posts/special"), "postCreated"),
            // A handler registered with the event's name takes it first.
            (Self.documentEvent(type: "document.written", name: "postAudit", path: "posts/p1"), "postAudit"),
            (Self.documentEvent(type: "document.updated", name: "x", path: "threads/a/rounds/b"), nil),
            (Self.documentEvent(type: "document.written", name: "x", path: "threads/a/rounds/b/votes/c"), nil),
            (Self.documentEvent(type: "document.written", name: "x", path: "posts/p1"), nil),
            (#"{"id": "evt_1", "type": "user.created", "name": "welcome", "user": {"uid": "alice", "email": "a@example.com"}}"#, "welcome"),
            (#"{"id": "evt_1", "type": "file.finalized", "name": "thumb", "file": {"path": "media/u1/cat.jpg", "size": 3}}"#, "thumbnail"),
            (#"{"id": "evt_1", "type": "file.finalized", "name": "thumb", "file": {"path": "other/cat.jpg"}}"#, nil),
            (#"{"id": "evt_1", "type": "schedule", "name": "dailyReminder", "schedule": {"cron": "0 9 * * *"}}"#, "dailyReminder"),
            (Self.documentEvent(type: "timer", name: "roundCloses", path: "threads/a/rounds/b"), "roundCloses"),
            (#"{"id": "evt_1", "type": "schedule", "name": "weekly"}"#, nil),
        ]
        for (body, expected) in cases {
            let calls = Calls()
            let responder = try FunctionsResponder(secret: Self.secret, functions: Self.functions(calls))
            let answer = try await Self.deliver(body, to: responder)
            #expect(calls.all.map(\.0) == (expected.map { [$0] } ?? []), "\(body)")
            #expect(answer.status == (expected == nil ? 404 : 204), "\(body)")
            if expected == nil {
                #expect(String(decoding: answer.body, as: UTF8.self).contains("no handler for the"), "\(body)")
            }
        }
    }

    @Test func theEventCarriesParamsDocumentsAndTheToken() async throws {
        struct Round: Codable, Equatable {
            var title: String
            var closesAt: Date
            var votes: Int
            var tags: [String]
            var owner: String
            var place: Place
            var note: String?
        }
        struct Place: Codable, Equatable {
            var latitude: Double
            var longitude: Double
        }
        let after = #"""
            {"path": "threads/t1/rounds/r9", "id": "r9", "createTime": "2026-11-26T23:00:13.912345Z",
             "updateTime": "2026-11-26T23:00:14.000001Z",
             "data": {"title": "Round 9", "closesAt": {"$timestamp": "2026-11-27T09:00:00.250000Z"}, "votes": 3,
                      "tags": ["a", "b"], "owner": {"$ref": "users/alice"}, "place": {"$geo": {"latitude": 48.5, "longitude": 2.25}}}}
            """#
        let body = Self.documentEvent(type: "document.written", name: "roundWritten", path: "threads/t1/rounds/r9",
                                      after: after, params: #"{"threadId": "t1", "roundId": "r9"}"#,
                                      extra: #", "auth": {"token": "tok_abc", "expiresIn": 300}"#)
        let calls = Calls()
        let responder = try FunctionsResponder(secret: Self.secret, functions: Self.functions(calls))
        #expect(try await Self.deliver(body, to: responder).status == 204)
        let event = try #require(calls.all.first?.1)
        #expect(event.id == "evt_1" && event.type == "document.written" && event.name == "roundWritten")
        #expect(event.time == Timestamp(rfc3339: "2026-11-26T23:00:13.912345Z"))
        // The file's wildcard names and the handler's own, bound to the same ids.
        #expect(event.params == ["threadId": "t1", "roundId": "r9", "t": "t1", "r": "r9"])
        #expect(event.document?.path == "threads/t1/rounds/r9" && event.document?.before == nil)
        let document = try #require(event.document?.after)
        #expect(document.updateTime == Timestamp(rfc3339: "2026-11-26T23:00:14.000001Z"))
        #expect(document.fields["votes"] == .int(3))
        let round = try document.data(as: Round.self)
        #expect(round == Round(title: "Round 9", closesAt: Date(timeIntervalSince1970: 1_795_770_000.25), votes: 3,
                               tags: ["a", "b"], owner: "users/alice", place: Place(latitude: 48.5, longitude: 2.25), note: nil))
        // The client's document coding: a `@DocumentID` gets the document's id.
        struct Named: Decodable, Equatable {
            @DocumentID var id: String?
            var title: String
        }
        #expect(try document.data(as: Named.self) == Named(id: "r9", title: "Round 9"))
        #expect(event.auth?.token == "tok_abc" && event.auth?.expiresIn == 300)
        // The token gives a client of the server that calls with it.
        let hearth = try #require(event.auth).hearth(url: URL(string: "http://127.0.0.1:8080")!)
        #expect(hearth.url.absoluteString == "http://127.0.0.1:8080" && hearth.document("threads/t1").path == "threads/t1")

        let user = #"{"id": "evt_2", "type": "user.created", "name": "welcome", "user": {"uid": "alice", "email": "a@example.com"}}"#
        #expect(try await Self.deliver(user, to: responder).status == 204)
        struct Account: Decodable { var uid: String; var email: String }
        let account = try #require(calls.all.last?.1.user).decode(Account.self)
        #expect(account.uid == "alice" && account.email == "a@example.com")
        #expect(calls.all.last?.1.auth == nil)
    }

    @Test func aBadSignatureIsRefusedAndNoHandlerRuns() async throws {
        let calls = Calls()
        let responder = try FunctionsResponder(secret: Self.secret, functions: Self.functions(calls))
        let body = Self.documentEvent(type: "document.written", name: "roundWritten", path: "threads/a/rounds/b")
        let other = try WebhookVerifier(secret: "whsec_" + Base64.encode([UInt8](repeating: 1, count: 32)))
        let timestamp = Int64(Date().timeIntervalSince1970)
        for signature in ["v1,AAAA", other.sign(id: "evt_1", timestamp: timestamp, body: Array(body.utf8)), ""] {
            let answer = try await Self.deliver(body, to: responder, signature: signature)
            #expect(answer.status == 401)
        }
        // Stale: signed with the right secret six minutes ago.
        let stale = timestamp - 360
        let headers = ["webhook-id": "evt_1", "webhook-timestamp": "\(stale)",
                       "webhook-signature": try WebhookVerifier(secret: Self.secret).sign(id: "evt_1", timestamp: stale, body: Array(body.utf8))]
        let answer = await responder.answer(header: { headers[$0] }, body: Array(body.utf8))
        #expect(answer.status == 401 && String(decoding: answer.body, as: UTF8.self).contains("too old"))
        #expect(calls.all.isEmpty)
        // A signed body that is not an event.
        #expect(try await Self.deliver("[1]", to: responder).status == 400)
        #expect(try await Self.deliver(#"{"id": "e"}"#, to: responder).status == 400)
    }

    @Test func writesAreAnsweredInTheCommitFormatAndAThrowIsA500() async throws {
        struct Summary: Encodable {
            var title: String
            var closedAt: Date
            var blob: Data
            var count: Int
        }
        var functions = Functions()
        functions.onDocumentWritten("threads/{t}") { event in
            [.set("threads/\(event.params["t"]!)/log/a", ["n": 1, "nested": ["at": .serverTimestamp, "list": [1, "x", nil]]]),
             .set("threads/t/log/b", ["n": .increment(2), "gone": .delete], merge: true),
             .create("threads/t/log/c", ["$price": 3, "when": .timestamp(Date(timeIntervalSince1970: 1.5))]),
             .update("threads/t", ["rounds": .increment(1), "a.b": .arrayUnion([.string("x")]), "hi": .maximum(.int(3))]),
             .delete("threads/t/log/d").precondition(.exists(true)),
             .verify("threads/t", .updateTime(Timestamp(microseconds: 1))),
             try .set("threads/t/log/e", encoding: Summary(title: "T", closedAt: Date(timeIntervalSince1970: 2), blob: Data([1, 2]), count: 4)),
             try .set("threads/t/log/f", encoding: ["k": "v"], merge: true)]
        }
        functions.onDocumentDeleted("threads/{t}") { _ in
            struct Busy: Error {}
            throw Busy()
        }
        let responder = try FunctionsResponder(secret: Self.secret, functions: functions)
        let answer = try await Self.deliver(Self.documentEvent(type: "document.written", name: "x", path: "threads/t"), to: responder)
        #expect(answer.status == 200)
        // The client's FieldValue: Firestore's spelling of a sentinel is the same value.
        #expect(FieldValue.serverTimestamp() == .serverTimestamp && FieldValue.delete() == .delete)
        // The server's parser reads the answer: the same writes the typed API describes.
        let request = try CommitRequest(json: JSON.parse(answer.body))
        let writes = request.writes
        #expect(writes.map(\.verb) == ["set", "set with merge", "create", "update", "delete", "verify", "set", "set with merge"])
        #expect(writes[0].fields["nested"] == .map(["list": .array([.int(1), .string("x"), .null])]))
        #expect(writes[0].transforms.map(\.field.description) == ["nested.at"])
        if case .set(merge: let mask?) = writes[1].kind {
            // The mask names the deleted field; the increment is a transform of its own.
            #expect(mask.map(\.description) == ["gone"] && writes[1].transforms.map(\.field.description) == ["n"])
        } else {
            Issue.record("the second write is not a merge: \(writes[1].kind)")
        }
        #expect(writes[2].fields == ["$price": .int(3), "when": .timestamp(Timestamp(microseconds: 1_500_000))])
        #expect(writes[3].transforms.count == 3)
        #expect(writes[4].precondition == .exists(true))
        #expect(writes[5].precondition == .updateTime(Timestamp(microseconds: 1)))
        #expect(writes[6].fields == ["title": .string("T"), "closedAt": .timestamp(Timestamp(microseconds: 2_000_000)),
                                     "blob": .bytes([1, 2]), "count": .int(4)])
        #expect(writes[7].fields == ["k": .string("v")])

        let failed = try await Self.deliver(Self.documentEvent(type: "document.deleted", name: "x", path: "threads/t"), to: responder)
        #expect(failed.status == 500 && String(decoding: failed.body, as: UTF8.self).contains("Busy"))
    }

    @Test func theRouteServesInsideAnAppsRouterGroup() async throws {
        let calls = Calls()
        let router = Router()
        router.get("/health") { _, _ in "ok" }
        try FunctionsServer(secret: Self.secret, path: "hooks", functions: Self.functions(calls))
            .addRoutes(to: router.group("api"))
        let app = Application(router: router)
        let body = Self.documentEvent(type: "document.written", name: "roundWritten", path: "threads/a/rounds/b")
        let timestamp = Int64(Date().timeIntervalSince1970)
        let signature = try WebhookVerifier(secret: Self.secret).sign(id: "evt_1", timestamp: timestamp, body: Array(body.utf8))
        try await app.test(.router) { client in
            let signed: HTTPFields = [.init("webhook-id")!: "evt_1", .init("webhook-timestamp")!: "\(timestamp)",
                                      .init("webhook-signature")!: signature]
            try await client.execute(uri: "/api/hooks", method: .post, headers: signed, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/api/hooks", method: .post, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .unauthorized)
                #expect(String(buffer: response.body).contains("missing webhook-id"))
            }
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
        #expect(calls.all.count == 1)
    }
}

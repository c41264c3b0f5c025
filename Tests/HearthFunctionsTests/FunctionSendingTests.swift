import Foundation
import HearthClient
import HearthCore
import HearthFunctions
import HearthMail
import HearthServer
import HearthTesting
import Testing

/// Who may send app email and push: the admin key and a function's identity token (the one its event carries),
/// never a user's session, whatever claims the account holds. End to end: Hearth delivers events to handlers on
/// loopback, which hand their tokens to the test.
@Suite(.serialized) struct FunctionSendingTests {
    /// Three endpoints, one identity each, so each has tokens of its own: one the test lets expire, one
    /// whose uid's sessions it revokes, one that stays live.
    static func functionsFile(_ host: FunctionsHost) throws -> String {
        let endpoint = { (uid: String) in
            #"{"url": "\#(host.url)", "secret": "\#(host.secret)", "identity": {"uid": "\#(uid)", "claims": {"role": "worker"}}}"#
        }
        let path = TestFolders.make() + "/functions.json"
        try """
            {"endpoints": {"expiring": \(endpoint("fn-expiring")), "revocable": \(endpoint("fn-revocable")), "live": \(endpoint("functions"))},
             "triggers": [{"name": "expiring", "on": "document.created", "path": "expiring/{id}", "endpoint": "expiring"},
                          {"name": "revocable", "on": "document.created", "path": "revocable/{id}", "endpoint": "revocable"},
                          {"name": "live", "on": "document.created", "path": "live/{id}", "endpoint": "live"}]}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    struct Row: Sendable, CustomStringConvertible {
        var who: String
        var caller: Caller
        /// `POST /v1/messages/email`'s status and `POST /v1/push/send`'s (to a uid with no device: `200`).
        var email: Int
        var push: Int
        var description: String { who }
    }

    @Test func onlyTheAdminAndFunctionTokensMaySend() async throws {
        let host = try FunctionsHost()
        let (stream, tokens) = AsyncStream.makeStream(of: (String, String).self)
        var functions = Functions()
        for name in ["expiring", "revocable", "live"] {
            functions.onDocumentCreated("\(name)/{id}") { event in
                if let token = event.auth?.token { tokens.yield((event.name, token)) }
                return []
            }
        }
        let received = AsyncCollector(stream)
        func token(_ name: String) async throws -> String {
            try await received.wait("a token for \(name)") { $0.contains { $0.0 == name } }.last { $0.0 == name }!.1
        }
        let clock = ManualClock()
        let file = try Self.functionsFile(host)
        try await host.serve(functions) {
            try await TestServer.with(configure: {
                $0.useFunctions(file: file)
                $0.useTestAccounts(clock: clock)
            }) { server, admin in
                #expect(try await admin.put("/v1/docs/expiring/e1", "{}").status == 200)
                let expired = try await token("expiring")
                clock.advance(seconds: 301)
                #expect(try await admin.put("/v1/docs/revocable/r1", "{}").status == 200)
                #expect(try await admin.put("/v1/docs/live/l1", "{}").status == 200)
                let revoked = try await token("revocable")
                let live = try await token("live")
                // The revocable identity's uid has an account too: revoking its sessions ends the token.
                #expect(try await admin.post("/v1/admin/users", #"{"uid": "fn-revocable"}"#).status == 201)
                #expect(try await admin.post("/v1/admin/users/fn-revocable/revoke", "{}").status == 200)
                let user = try await admin.signedUp("ann@example.com", "correct horse battery")
                // The same claims as the function's identity, and more, set by the admin on an account.
                let worker = try await admin.signedUp("worker@example.com", "correct horse battery")
                #expect(try await admin.put("/v1/admin/users/\(worker.uid)/claims",
                                            #"{"claims": {"role": "worker", "function": true, "admin": true}}"#).status == 200)
                let rows: [Row] = [
                    Row(who: "the admin key", caller: .admin, email: 202, push: 200),
                    Row(who: "a function's token", caller: .token(live), email: 202, push: 200),
                    Row(who: "a user's token", caller: .token(user.token), email: 403, push: 403),
                    Row(who: "a user with the function's claims", caller: .token(worker.token), email: 403, push: 403),
                    Row(who: "no token", caller: .nobody, email: 401, push: 401),
                    Row(who: "an expired function token", caller: .token(expired), email: 401, push: 401),
                    Row(who: "a revoked function token", caller: .token(revoked), email: 401, push: 401),
                ]
                let email = #"{"to": ["bob@example.com"], "subject": "Hello", "text": "Hi!"}"#
                let push = #"{"to": {"uid": "bob"}, "notification": {"title": "Hello"}}"#
                var queued: Set<String> = []
                for row in rows {
                    let sentEmail = try await admin.post("/v1/messages/email", email, as: row.caller)
                    #expect(sentEmail.status == row.email, "\(row): \(sentEmail.text)")
                    if case .array(let ids)? = sentEmail.json?["queued"] { queued.formUnion(ids.compactMap(\.stringValue)) }
                    let sentPush = try await admin.post("/v1/push/send", push, as: row.caller)
                    #expect(sentPush.status == row.push, "\(row): \(sentPush.text)")
                    if row.email == 403 {
                        #expect(sentEmail.errorMessage == "sending email needs the admin key or a function's identity token")
                        #expect(sentPush.errorMessage == "sending push notifications needs the admin key or a function's identity token")
                    }
                }
                // Two messages queued, the admin's and the function's, and no other: each is pending or
                // delivered (to the development mailbox), or for a moment both.
                #expect(queued.count == 2)
                let outbox = try await admin.get("/v1/admin/outbox").json
                guard case .array(let pending)? = outbox?["pending"] else { throw ExpectationFailure("no outbox: \(String(describing: outbox))") }
                let delivered = server.outboxMessages().filter { $0["purpose"]?.stringValue == "email" }
                #expect(Set((pending + delivered).compactMap { $0["id"]?.stringValue }) == queued, "\(pending) \(delivered)")
            }
        }
        tokens.finish()
    }

    /// The client's typed calls, with the token a handler holds: a function sends email and push to a user's
    /// device; a signed-in user calling the same is refused.
    @Test func theClientSendsWithTheEventsToken() async throws {
        let host = try FunctionsHost()
        let (stream, tokens) = AsyncStream.makeStream(of: (String, String).self)
        var functions = Functions()
        functions.onDocumentCreated("live/{id}") { event in
            if let token = event.auth?.token { tokens.yield((event.name, token)) }
            return []
        }
        let received = AsyncCollector(stream)
        let file = try Self.functionsFile(host)
        try await host.serve(functions) {
            try await TestServer.with(configure: {
                $0.useFunctions(file: file)
                $0.useTestAccounts()
            }) { server, admin in
                let ann = try await admin.signedUp("ann@example.com", "correct horse battery")
                let device = try await admin.post("/v1/push/devices", #"{"token": "\#(String(repeating: "ab", count: 32))", "platform": "apns"}"#,
                                                  as: .token(ann.token))
                #expect(device.status == 201, "\(device.text)")
                #expect(try await admin.put("/v1/docs/live/l1", "{}").status == 200)
                let token = try await received.wait("a token") { !$0.isEmpty }[0].1
                let url = URL(string: "http://127.0.0.1:\(server.port)")!
                let function = Hearth(url: url, token: token)
                let emails = try await function.sendEmail(to: ["bob@example.com", "bob@example.com", "eve@example.com"],
                                                          subject: "Hello", text: "Hi!", html: "<p>Hi!</p>")
                #expect(emails.count == 2)
                let pushes = try await function.sendPush(to: .user(ann.uid), notification: PushNotification(title: "Hello", body: "A reply"),
                                                         data: ["letter": "l1"])
                #expect(pushes.count == 1)
                #expect(try await function.sendPush(to: .user("nobody"), data: ["a": "b"]).isEmpty)
                let asUser = Hearth(url: url, token: ann.token)
                await #expect(throws: HearthClientError(code: .permissionDenied,
                                                        message: "sending email needs the admin key or a function's identity token", status: 403)) {
                    try await asUser.sendEmail(to: ["bob@example.com"], subject: "Hello", text: "Hi!")
                }
                do {
                    _ = try await asUser.sendPush(to: .user(ann.uid), notification: PushNotification(title: "Hi"))
                    Issue.record("a user sent a push notification")
                } catch let error as HearthClientError {
                    #expect(error.code == .permissionDenied && error.status == 403)
                }
            }
        }
        tokens.finish()
    }
}

import Foundation
import HearthCore
import HearthServer
import HearthTesting
import HTTPTypes
import Testing
import Logging
import HearthStore
import HearthEngine

/// Plain single-document writes (`POST /v1/docs/{collection}`, `PUT` and `PATCH /v1/docs/{document}`, no
/// query string, no precondition header) are handed from the connection's event loop to the writer thread and
/// answered from there (`InlineAnswerHandler`). These tests hold that path to the router's answers and to
/// HTTP's ordering rules.
@Suite struct InlineWriteTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /posts/{postId} {
              allow read;
              allow create: if request.auth != null && request.resource.data.owner == request.auth.uid;
              allow update: if request.auth != null && resource.data.owner == request.auth.uid
                && request.resource.data.owner == resource.data.owner;
            }
          }
        }
        """

    struct Case {
        var caller: Caller = .admin
        var method: HTTPRequest.Method
        var uri: String
        var body: [UInt8]
        var headers: [String: String] = [:]
        /// Whether the inline server answers it itself (the others go to its router).
        var inline: Bool

        init(_ method: HTTPRequest.Method, _ uri: String, _ body: String, headers: [String: String] = [:], inline: Bool) {
            self.init(.admin, method, uri, body, headers: headers, inline: inline)
        }

        init(_ caller: Caller, _ method: HTTPRequest.Method, _ uri: String, _ body: String,
             headers: [String: String] = [:], inline: Bool) {
            self.caller = caller
            self.method = method
            self.uri = uri
            self.body = Array(body.utf8)
            self.headers = headers
            self.inline = inline
        }

        init(_ method: HTTPRequest.Method, _ uri: String, bytes: [UInt8], inline: Bool) {
            self.method = method
            self.uri = uri
            body = bytes
            self.inline = inline
        }
    }

    /// Writes every server answers, in order; `uid` is the signed-up user's id.
    static func cases(user: String, uid: String, revoked: String) -> [Case] {
        let deep = String(repeating: #"{"a": "#, count: 21) + "1" + String(repeating: "}", count: 21)
        return [
            Case(.post, "/v1/docs/posts", #"{"title": "first", "n": 1, "owner": "admin"}"#, inline: true),
            Case(.post, "/v1/docs/posts", "", inline: true),
            Case(.put, "/v1/docs/posts/p1", #"{"title": "one", "n": 1, "owner": "\#(uid)", "at": {"$serverTimestamp": true}}"#, inline: true),
            Case(.patch, "/v1/docs/posts/p1", #"{"n": {"$increment": 2}, "tags": {"$arrayUnion": ["a", 3.0]}}"#, inline: true),
            Case(.patch, "/v1/docs/posts/missing", #"{"n": 1}"#, inline: true),
            Case(.put, "/v1/docs/posts/p2", #"{"n": 1.0, "neg": -0.0, "big": 9223372036854775807, "b": {"$bytes": "AAE="}}"#, inline: true),
            Case(.put, "/v1/docs/things/a%20b/sub/%C3%A9t%C3%A9", #"{"ok": true}"#, inline: true),
            Case(.post, "/v1/docs/things/a%20b/sub", #"{"nested": {"m": {"$map": {"$x": 1}}}}"#, inline: true),
            // Bad input answered inline, with the router's errors:
            Case(.put, "/v1/docs/posts/bad", #"{"title": "#, inline: true),
            Case(.put, "/v1/docs/posts/bad", bytes: Array(#"{"t": ""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8), inline: true),
            Case(.put, "/v1/docs/posts/bad", "[1, 2]", inline: true),
            Case(.put, "/v1/docs/posts/bad", #"{"t": {"$nope": 1}}"#, inline: true),
            Case(.put, "/v1/docs/posts/bad", #"{"t": [{"$serverTimestamp": true}]}"#, inline: true),
            Case(.put, "/v1/docs/posts/bad", deep, inline: true),
            Case(.patch, "/v1/docs/posts/p1", #"{"a..b": 1}"#, inline: true),
            // Callers: rules decide.
            Case(.nobody, .post, "/v1/docs/posts", #"{"owner": "x"}"#, inline: true),
            Case(.token(user), .post, "/v1/docs/posts", #"{"owner": "\#(uid)", "title": "mine"}"#, inline: true),
            Case(.token(user), .post, "/v1/docs/posts", #"{"owner": "someone else"}"#, inline: true),
            Case(.token(user), .patch, "/v1/docs/posts/p1", #"{"title": "edited"}"#, inline: true),
            Case(.token(user), .patch, "/v1/docs/posts/p1", #"{"owner": "thief"}"#, inline: true),
            Case(.token(revoked), .put, "/v1/docs/posts/p9", #"{"owner": "x"}"#, inline: true),
            Case(.token("hat_not_a_real_token"), .put, "/v1/docs/posts/p9", #"{"owner": "x"}"#, inline: true),
            Case(.authorization("Basic YWxhZGRpbjpvcGVuc2VzYW1l"), .put, "/v1/docs/posts/p9", "{}", inline: true),
            Case(.delete, "/v1/docs/posts/p2", "", inline: true),
            Case(.delete, "/v1/docs/posts/never-was", #"{"ignored": true}"#, inline: true),
            Case(.token(user), .delete, "/v1/docs/posts/p1", "", inline: true),
            Case(.nobody, .delete, "/v1/docs/posts/p1", "", inline: true),
            // Routed on both servers:
            Case(.post, "/v1/docs/posts/p1", "{}", inline: false),
            Case(.put, "/v1/docs/posts", "{}", inline: false),
            Case(.patch, "/v1/docs/posts", "{}", inline: false),
            Case(.put, "/v1/docs/posts/__x__", "{}", inline: false),
            Case(.put, "/v1/docs/posts//p1", "{}", inline: false),
            Case(.post, "/v1/docs/posts?id=chosen", #"{"n": 1}"#, inline: false),
            Case(.put, "/v1/docs/posts/p1?merge=true", #"{"merged": true}"#, inline: false),
            Case(.put, "/v1/docs/posts/p1", #"{"n": 5, "owner": "\#(uid)"}"#, headers: ["If-Match": "\"2000-01-01T00:00:00.000000Z\""], inline: false),
            Case(.put, "/v1/docs/posts/p3", #"{"n": 5}"#, headers: ["If-None-Match": "*"], inline: false),
            Case(.put, "/v1/docs/posts/p3", #"{"n": 5}"#, headers: ["Content-Type": "text/plain"], inline: false),
            Case(.put, "/v1/docs/posts/big", #"{"text": "\#(String(repeating: "x", count: 70_000))"}"#, inline: false),
            Case(.put, "/v1/docs/posts/huge", #"{"text": "\#(String(repeating: "x", count: 1_048_577))"}"#, inline: false),
            Case(.delete, "/v1/docs/posts", "", inline: false),
            Case(.delete, "/v1/docs/things/a%20b/sub/%C3%A9t%C3%A9?recursive=true", "", inline: false),
            Case(.delete, "/v1/docs/posts/p3", "", headers: ["If-Match": "\"2000-01-01T00:00:00.000000Z\""], inline: false),
            // Reads show what the writes left.
            Case(.get, "/v1/docs/posts/p1", "", inline: false),
            Case(.get, "/v1/docs/posts/p2", "", inline: false),
            Case(.get, "/v1/docs/posts/p1", "", inline: false),
            Case(.get, "/v1/docs/posts/chosen", "", inline: false),
            Case(.get, "/v1/docs/posts/p3", "", inline: false),
            Case(.get, "/v1/docs/things/a%20b/sub/%C3%A9t%C3%A9", "", inline: false),
        ]
    }

    static func inlineCount() -> Int { cases(user: "", uid: "", revoked: "").filter(\.inline).count }

    static func transcript(_ server: TestServer) async throws -> [String] {
        let admin = server.client()
        let user = try await admin.signedUp("user@example.com", "correct horse battery")
        let leaver = try await admin.signedUp("leaver@example.com", "correct horse battery")
        #expect(try await admin.post("/v1/auth/logout", as: .token(leaver.token)).status == 204)
        let tokens = [user.token, leaver.token]
        var lines: [String] = []
        var statuses: [Int] = []
        for c in cases(user: user.token, uid: user.uid, revoked: leaver.token) {
            let result = try await admin.request(c.method, c.uri, body: c.method == .get ? nil : c.body, headers: c.headers, as: c.caller)
            var line = InlineReadTests.normalized(result, "\(c.method) \(c.uri.prefix(80))", caller: c.caller, tokens: tokens)
            line = line.replacingOccurrences(of: user.uid, with: "<uid>")
            line = line.replacingOccurrences(of: #"/[A-Za-z0-9]{20}\b"#, with: "/<auto-id>", options: .regularExpression)
            line = line.replacingOccurrences(of: #""id":"[A-Za-z0-9]{20}""#, with: #""id":"<auto-id>""#, options: .regularExpression)
            lines.append(line)
            statuses.append(result.status)
        }
        #expect(statuses == Self.statuses)
        await admin.close()
        return lines
    }

    /// The status of each case's answer, in order.
    static let statuses = [201, 201, 200, 200, 404, 200, 200, 201,
                           400, 400, 400, 400, 400, 400, 400,
                           403, 201, 403, 200, 403, 401, 401, 401,
                           204, 204, 403, 403,
                           400, 400, 400, 400, 400, 201, 200, 412, 200, 415, 200, 413, 400, 204, 412,
                           200, 404, 200, 200, 200, 404]

    /// One server answering writes inline, one routing everything, each given the same writes in the same
    /// order: every answer must match (times and auto ids aside), and so must the request counts on
    /// `/metrics` and what each server stored.
    @Test func inlineAndRoutedWritesAnswerTheSame() async throws {
        let (inline, routed) = try await InlineReadTests.inlineAndRouted(rules: Self.rules, Self.transcript)
        #expect(try await InlineReadTests.metric("hearth_inline_writes_total", inline) == Double(Self.inlineCount()))
        #expect(try await InlineReadTests.metric("hearth_inline_writes_total", routed) == 0)
        #expect(try await InlineReadTests.requestCounts(inline, route: "/v1/docs/**")
                    == InlineReadTests.requestCounts(routed, route: "/v1/docs/**"))
        await inline.stop()
        await routed.stop()
    }

    /// Requests sent in one write are answered in order: what follows a write answered here waits for its
    /// commit (and sees it), whether it is answered here too or by the router.
    @Test func pipelinedRequestsBehindAnInlineWriteAreAnsweredInOrder() async throws {
        try await TestServer.with { server, client in
            let auth = "Authorization: Bearer \(server.adminKey)\r\n"
            func write(_ method: String, _ uri: String, _ body: String) -> String {
                "\(method) \(uri) HTTP/1.1\r\nHost: t\r\n\(auth)Content-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            }
            let get = "GET /v1/docs/c/x HTTP/1.1\r\nHost: t\r\n\(auth)\r\n"
            let list = "GET /v1/docs/c?pageSize=5 HTTP/1.1\r\nHost: t\r\n\(auth)\r\n"
            let raw = try RawHTTPConnection(port: server.port)
            try await raw.send(write("PUT", "/v1/docs/c/x", #"{"v": 1}"#) + get
                               + write("PATCH", "/v1/docs/c/x", #"{"v": {"$increment": 1}}"#) + list + get
                               + write("PATCH", "/v1/docs/c/x", #"{"v": {"$increment": 1}}"#) + write("PATCH", "/v1/docs/c/x", #"{"v": {"$increment": 1}}"#)
                               + get)
            var seen: [JSON?] = []
            for _ in 0..<8 {
                let response = try await raw.readResponse()
                #expect(response.status == 200, "\(response.text)")
                if case .array(let docs)? = response.json?["documents"] {
                    seen.append(docs.first?["data"]?["v"])
                } else {
                    seen.append(response.json?["data"]?["v"])
                }
            }
            #expect(seen == [.int(1), .int(1), .int(2), .int(2), .int(2), .int(3), .int(4), .int(4)])
            // The first write, the read and the write behind it are answered here; once the listing (which has a
            // query string) went to the router, what follows it may too, until its answer is out.
            #expect(try await InlineReadTests.metric("hearth_inline_writes_total", server) ?? 0 >= 2)
            #expect(try await InlineReadTests.metric("hearth_inline_reads_total", server) ?? 0 >= 1)
            _ = client
        }
    }

    /// A write whose body arrives in pieces is answered inline; one whose connection closes before the
    /// answer still stands (it was handed to the writer), and the server carries on.
    @Test func piecewiseBodiesAndClosedConnections() async throws {
        try await TestServer.with { server, client in
            let body = #"{"v": "in pieces"}"#
            let head = "PUT /v1/docs/c/piece HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            let raw = try RawHTTPConnection(port: server.port)
            try await raw.send(head + String(body.prefix(5)))
            try await Task.sleep(for: .milliseconds(50))
            try await raw.send(String(body.dropFirst(5)))
            let response = try await raw.readResponse()
            #expect(response.status == 200)
            #expect(response.json?["data"]?["v"] == .string("in pieces"))
            #expect(try await InlineReadTests.metric("hearth_inline_writes_total", server) == 1)

            for i in 0..<20 {
                let gone = try RawHTTPConnection(port: server.port)
                let doc = #"{"i": \#(i)}"#
                try await gone.send("PUT /v1/docs/gone/d\(i) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                                    + "Content-Type: application/json\r\nContent-Length: \(doc.utf8.count)\r\n\r\n\(doc)")
            }
            // Each write was handed to the writer before its connection closed, or never read: whichever, the
            // server keeps answering, and every write it took is whole.
            try await Task.sleep(for: .milliseconds(200))
            let listed = try await client.get("/v1/docs/gone?pageSize=100")
            #expect(listed.status == 200)
            guard case .array(let docs)? = listed.json?["documents"] else {
                Issue.record("no documents: \(listed.text)")
                return
            }
            for doc in docs {
                guard case .string(let id)? = doc["id"], let i = Int(id.dropFirst()) else {
                    Issue.record("unexpected \(doc)")
                    continue
                }
                #expect(doc["data"]?["i"] == .int(Int64(i)))
            }
            #expect(try await client.get("/v1/docs/c/piece").status == 200)
        }
    }

    /// `Connection: close` on a write: the answer, then the server closes the connection.
    @Test func connectionCloseAfterAWrite() async throws {
        try await TestServer.with { server, client in
            let body = #"{"v": 1}"#
            let raw = try RawHTTPConnection(port: server.port, timeout: 5)
            try await raw.send("POST /v1/docs/c HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                               + "Content-Type: application/json\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            let response = try await raw.readResponse()
            #expect(response.status == 201)
            #expect(response.header("ETag") != nil)
            #expect(try await raw.readToEnd().isEmpty)
            _ = client
        }
    }

    /// Graceful shutdown while a write answered here is in flight: the write is committed and answered before
    /// the connection closes (the router's server would otherwise close a connection it sees as idle).
    @Test func gracefulShutdownAnswersAWriteInFlight() async throws {
        let server = try await TestServer.start()
        // Holds the writer thread, so that the write below waits in its queue.
        let blocker = Task { try await server.services.database.storage.write { _ in Thread.sleep(forTimeInterval: 0.5) } }
        try await Task.sleep(for: .milliseconds(50))
        let body = #"{"v": "last"}"#
        let raw = try RawHTTPConnection(port: server.port, timeout: 10)
        try await raw.send("PUT /v1/docs/c/last HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                           + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        try await Task.sleep(for: .milliseconds(50))
        let stopping = Task { await server.stop() }
        let response = try await raw.readResponse()
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json?["data"]?["v"] == .string("last"))
        #expect(try await raw.readToEnd().isEmpty)
        try await blocker.value
        await stopping.value
    }

    /// A write answered inline is logged at the request log level with a request id and its method.
    @Test func inlineWritesAreLoggedWithARequestID() async throws {
        let logs = LogCapture()
        let configure: (inout ServerConfiguration) -> Void = { $0.requestLogLevel = .warning; $0.logHandlerFactory = logs.factory }
        try await TestServer.with(configure: configure) { (_: TestServer, client: HearthClient) async throws in
            #expect(try await client.patch("/v1/docs/c/missing", #"{"v": 1}"#).status == 404)
            let line = logs.text.split(separator: "\n").first { $0.contains("Request") && $0.contains("/v1/docs/c/missing") }
            #expect(line?.contains("hb.request.id=") == true, "\(logs.text)")
            #expect(line?.contains("hb.request.method=PATCH") == true, "\(logs.text)")
        }
    }
}

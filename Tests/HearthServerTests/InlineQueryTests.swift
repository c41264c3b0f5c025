import Foundation
import HearthCore
import HearthServer
import HearthTesting
import HTTPTypes
import Testing
import Logging

/// Queries that read few index rows are answered on the connection's event loop (`InlineAnswerHandler`);
/// every other `POST /v1/query` (transactions, long queries, errors) is handed to the router. These tests
/// hold both ways to the router's answers and to HTTP's ordering rules.
@Suite struct InlineQueryTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /posts/{postId} {
              allow get;
              allow list: if resource.data.public == true;
            }
            match /{path=**}/replies/{replyId} {
              allow list: if request.auth != null;
            }
            match /mine/{id} {
              allow list: if request.auth != null && resource.data.owner == request.auth.uid;
            }
          }
        }
        """

    /// A query request: who sends it, the URI, the body and its content type, and whether the inline
    /// server answers it itself.
    struct Case {
        var caller: Caller
        var uri = "/v1/query"
        var body: String
        var contentType: String? = "application/json"
        var inline: Bool
    }

    static func cases(user: String, userID: String, revoked: String, revokedID: String) -> [Case] {
        let publicPosts = #"{"from": "posts", "where": [["public", "==", true]], "orderBy": [{"field": "n", "direction": "desc"}], "limit": 5}"#
        return [
            Case(caller: .admin, body: publicPosts, inline: true),
            Case(caller: .nobody, body: publicPosts, inline: true),
            Case(caller: .admin, body: #"{"from": "posts", "orderBy": [{"field": "n"}], "limit": 3, "offset": 2}"#, inline: true),
            Case(caller: .admin, body: #"{"from": "posts", "orderBy": [{"field": "n"}], "limitToLast": 2, "select": ["n"]}"#, inline: true),
            Case(caller: .admin, body: #"{"from": "posts", "orderBy": [{"field": "n"}], "startAfter": [100], "limit": 2}"#, inline: true),
            Case(caller: .admin, body: #"{"from": "posts", "where": [["n", "in", [3, 4, 599, 1000]]]}"#, inline: true),
            Case(caller: .token(user), body: #"{"from": {"collectionGroup": "replies"}, "orderBy": [{"field": "at"}], "limit": 10}"#, inline: true),
            Case(caller: .token(user), body: #"{"from": "mine", "where": [["owner", "==", "\#(userID)"]]}"#, inline: true),
            Case(caller: .admin, body: publicPosts, contentType: "application/json; charset=utf-8", inline: true),
            Case(caller: .admin, body: publicPosts, contentType: nil, inline: true),
            // More work than the event loop takes: every post (600), or nearly.
            Case(caller: .admin, body: #"{"from": "posts"}"#, inline: false),
            Case(caller: .admin, body: #"{"from": "posts", "where": [["n", ">=", 3]], "orderBy": [{"field": "n"}]}"#, inline: false),
            // Errors, transactions and what the router alone takes.
            Case(caller: .nobody, body: #"{"from": "posts", "limit": 5}"#, inline: false),
            Case(caller: .token(revoked), body: #"{"from": "mine", "where": [["owner", "==", "\#(revokedID)"]]}"#, inline: false),
            Case(caller: .authorization("Bearer hat_not_a_real_token"), body: publicPosts, inline: false),
            Case(caller: .admin, body: #"{"from": "posts", "where": [["n", ">", 1]], "orderBy": [{"field": "title"}]}"#, inline: false),
            Case(caller: .admin, body: #"{"from": "posts", "nope": 1}"#, inline: false),
            Case(caller: .admin, body: #"{"from": "#, inline: false),
            Case(caller: .admin, body: "", inline: false),
            Case(caller: .admin, body: "[1, 2]", inline: false),
            Case(caller: .admin, body: publicPosts, contentType: "text/plain", inline: false),
            Case(caller: .admin, body: #"{"from": "posts", "limit": 1, "transaction": "nope"}"#, inline: false),
            Case(caller: .admin, uri: "/v1/query?transaction=nope", body: publicPosts, inline: false),
            Case(caller: .admin, uri: "/v1/query?", body: publicPosts, inline: false),
            // A body over the handler's 16 KiB: routed while it arrives.
            Case(caller: .admin, body: #"{"from": "posts", "where": [["title", "==", "\#(String(repeating: "x", count: 20_000))"]]}"#,
                 inline: false),
        ]
    }

    /// A query right after writes finds them, answered inline: a write's index rows are in its commit.
    @Test func aQueryRightAfterWritesFindsThemInline() async throws {
        try await TestServer.with { server, client in
            let query = #"{"from": "cards", "where": [["n", ">=", 2]], "orderBy": [{"field": "n"}]}"#
            func ids() async throws -> [String] {
                let r = try await client.query(query)
                #expect(r.status == 200)
                guard case .array(let docs)? = r.json?["documents"] else { return [] }
                return docs.compactMap { $0["path"]?.stringValue }
            }
            for n in 0..<5 { #expect(try await client.put("/v1/docs/cards/c\(n)", #"{"n": \#(n)}"#).status == 200) }
            let before = try await InlineReadTests.metric("hearth_inline_queries_total", server) ?? 0
            #expect(try await ids() == ["cards/c2", "cards/c3", "cards/c4"])
            #expect(try await InlineReadTests.metric("hearth_inline_queries_total", server) == before + 1)
            #expect(try await client.patch("/v1/docs/cards/c3", #"{"n": 1}"#).status == 200)
            #expect((200..<300).contains(try await client.delete("/v1/docs/cards/c4").status))
            #expect(try await ids() == ["cards/c2"])
            #expect(try await InlineReadTests.metric("hearth_inline_queries_total", server) == before + 2)
        }
    }

    /// One server answering cheap queries inline, one routing everything, each given the same writes,
    /// sign-ups and queries in the same order: every answer must match (times aside), and so must the
    /// request counts on `/metrics`.
    @Test func inlineAndRoutedQueriesAnswerTheSame() async throws {
        let (inline, routed) = try await InlineReadTests.inlineAndRouted(rules: Self.rules, Self.transcript)
        // Each case is sent twice, before and after the leaver's session is revoked: the leaver's query is
        // answered inline the first time.
        let inlineCount = Self.cases(user: "", userID: "", revoked: "", revokedID: "").filter(\.inline).count * 2 + 1
        let answeredInline = try await InlineReadTests.metric("hearth_inline_queries_total", inline)
        #expect(answeredInline == Double(inlineCount))
        #expect(try await InlineReadTests.metric("hearth_inline_queries_total", routed) == 0)
        #expect(try await InlineReadTests.requestCounts(inline, route: "/v1/query") == InlineReadTests.requestCounts(routed, route: "/v1/query"))
        await inline.stop()
        await routed.stop()
    }

    static func transcript(_ server: TestServer) async throws -> [String] {
        let admin = server.client()
        for batch in 0..<2 {
            var writes: [String] = []
            for i in batch * 300..<(batch + 1) * 300 {
                writes.append(#"{"set": "posts/p\#(i)", "data": {"n": \#(i), "public": \#(i % 3 == 0), "title": "post \#(i)"}}"#)
            }
            #expect(try await admin.post("/v1/commit", #"{"writes": [\#(writes.joined(separator: ","))]}"#).status == 200)
        }
        let user = try await admin.signedUp("user@example.com", "correct horse battery")
        let leaver = try await admin.signedUp("leaver@example.com", "correct horse battery")
        for (path, body) in [("posts/p1/replies/r1", #"{"at": 2}"#), ("posts/p2/replies/r2", #"{"at": 1}"#),
                             ("mine/m1", #"{"owner": "\#(user.uid)"}"#), ("mine/m2", #"{"owner": "\#(leaver.uid)"}"#)] {
            #expect(try await admin.put("/v1/docs/" + path, body).status == 200)
        }
        var lines: [String] = []
        for round in 0..<2 {
            if round == 1 {
                #expect(try await admin.post("/v1/auth/logout", as: .token(leaver.token)).status == 204)
            }
            for c in cases(user: user.token, userID: user.uid, revoked: leaver.token, revokedID: leaver.uid) {
                let body = c.body
                let result = try await admin.request(.post, c.uri, body: Array(body.utf8), contentType: c.contentType, as: c.caller)
                let line = "\(body.prefix(200)) " + InlineReadTests.normalized(result, c.uri, caller: c.caller, tokens: [user.token, leaver.token])
                lines.append(line.replacingOccurrences(of: user.uid, with: "<uid>").replacingOccurrences(of: leaver.uid, with: "<leaver>"))
            }
        }
        await admin.close()
        return lines
    }

    /// A query whose `Content-Length` is over the body limit is refused at once, from its head, as the
    /// router does: the handler does not wait for a body it would not hold.
    @Test func anAnnouncedOversizedBodyIsRefusedBeforeItArrives() async throws {
        try await TestServer.with { server, _ in
            let raw = try RawHTTPConnection(port: server.port, timeout: 5)
            try await raw.send("POST /v1/query HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                               + "Content-Type: application/json\r\nContent-Length: \(11 * 1024 * 1024)\r\n\r\n{\"from\": ")
            let response = try await raw.readResponse()
            #expect(response.status == 413, "\(response.text)")
            #expect(response.json?["error"]?["code"] == .string("payload-too-large"))
        }
    }

    /// A query answered inline is logged at the request log level with a request id, as routed ones are.
    @Test func inlineQueriesAreLoggedWithARequestID() async throws {
        let logs = LogCapture()
        let configure: (inout ServerConfiguration) -> Void = { $0.requestLogLevel = .warning; $0.logHandlerFactory = logs.factory }
        try await TestServer.with(configure: configure) { (server: TestServer, client: HearthClient) async throws in
            #expect(try await client.post("/v1/query", #"{"from": "c", "limit": 1}"#).status == 200)
            #expect(try await InlineReadTests.metric("hearth_inline_queries_total", server) == 1)
            let line = logs.text.split(separator: "\n").first { $0.contains("Request") && $0.contains("/v1/query") }
            #expect(line?.contains("hb.request.id=") == true, "\(logs.text)")
            #expect(line?.contains("hb.request.method=POST") == true, "\(logs.text)")
        }
    }

    /// The first document's `v` in a query's answer.
    static func firstV(_ response: HTTPResult) -> JSON? {
        guard case .array(let documents)? = response.json?["documents"] else { return nil }
        return documents.first?["data"]?["v"]
    }

    /// Requests sent in one write are answered in order: queries behind a routed write (its query string
    /// routes it) wait for it and see it; a query whose body arrives in pieces is still answered inline.
    @Test func pipelinedAndPiecewiseQueriesAreAnsweredInOrder() async throws {
        try await TestServer.with { server, client in
            #expect(try await client.put("/v1/docs/c/x", #"{"v": 1}"#).status == 200)
            let auth = "Authorization: Bearer \(server.adminKey)\r\n"
            let put = #"{"v": 2}"#
            let query = #"{"from": "c", "limit": 1}"#
            func post(_ body: String) -> String {
                "POST /v1/query HTTP/1.1\r\nHost: t\r\n\(auth)Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            }
            let raw = try RawHTTPConnection(port: server.port)
            try await raw.send("PUT /v1/docs/c/x?merge=false HTTP/1.1\r\nHost: t\r\n\(auth)Content-Type: application/json\r\n"
                         + "Content-Length: \(put.utf8.count)\r\n\r\n\(put)" + post(query) + post(query))
            #expect(try await raw.readResponse().status == 200)
            for i in 0..<2 {
                let response = try await raw.readResponse()
                #expect(Self.firstV(response) == .int(2), "answer \(i): \(response.text)")
            }
            // Both queries came while the write was unanswered, so the router answered them too.
            let before = try await InlineReadTests.metric("hearth_inline_queries_total", server) ?? 0
            #expect(before == 0)
            // Head, then the body in two writes.
            let whole = post(query)
            let cut = whole.utf8.count - 10
            try await raw.send(String(whole.utf8.prefix(cut))!)
            try await Task.sleep(for: .milliseconds(50))
            try await raw.send(String(whole.utf8.dropFirst(cut))!)
            #expect(Self.firstV(try await raw.readResponse()) == .int(2))
            #expect(try await InlineReadTests.metric("hearth_inline_queries_total", server) == before + 1)
        }
    }
}

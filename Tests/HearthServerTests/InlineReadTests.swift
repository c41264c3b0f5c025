import Foundation
import HearthCore
import HearthServer
import HearthTesting
import HTTPTypes
import Testing
import Logging

/// Plain document reads are answered on the connection's event loop (`InlineAnswerHandler`), ahead of the
/// router. These tests hold that path to the router's answers, byte for byte, and to HTTP's ordering rules.
@Suite struct InlineReadTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /posts/{postId} {
              allow get: if resource.data.public == true;
              match /comments/{commentId} {
                allow read;
              }
            }
            match /users/{uid} {
              allow get: if request.auth.uid == uid;
            }
            match /notes/{id} {
              allow get: if get(/databases/$(database)/documents/users/$(request.auth.uid)).data.staff == true;
            }
          }
        }
        """

    /// One server answering reads inline, one routing everything, each given the same writes, sign-ups and
    /// reads in the same order; every answer must match (times aside), and so must the request counts on
    /// `/metrics`.
    @Test(arguments: [false, true])
    func inlineAndRoutedReadsAnswerTheSame(dev: Bool) async throws {
        let (inline, routed) = try await Self.inlineAndRouted(rules: Self.rules, dev: dev, Self.transcript)
        // Reads that carry a query string, name a collection or an invalid path went to the router: the
        // inline server answered the others itself, and the routed one none.
        #expect(try await Self.metric("hearth_inline_reads_total", inline) == Double(Self.inlineReadCount))
        #expect(try await Self.metric("hearth_inline_reads_total", routed) == 0)
        #expect(try await Self.requestCounts(inline, route: "/v1/docs/**") == Self.requestCounts(routed, route: "/v1/docs/**"))
        await inline.stop()
        await routed.stop()
    }

    /// Starts a server answering inline and one routing everything, with the same rules, gives each the same
    /// `transcript` and expects the two line by line equal. Answers both servers, still running.
    static func inlineAndRouted(rules: String, dev: Bool = false, _ transcript: (TestServer) async throws -> [String])
        async throws -> (inline: TestServer, routed: TestServer) {
        let file = try RulesHTTPTests.writeRules(rules)
        let inline = try await TestServer.start { $0.rulesFile = file; $0.dev = dev }
        let routed = try await TestServer.start { $0.rulesFile = file; $0.dev = dev; $0.inlineAnswers = false }
        let a = try await transcript(inline), b = try await transcript(routed)
        #expect(a.count == b.count)
        for (x, y) in zip(a, b) {
            #expect(x == y)
        }
        return (inline, routed)
    }

    /// Reads (caller, path) every server answers; all but the marked ones are plain document reads.
    static func reads(user: String, staff: String, revoked: String) -> [(Caller, String)] {
        [
            (.admin, "/v1/docs/posts/open"), (.admin, "/v1/docs/posts/missing"), (.admin, "/v1/docs/posts/open/comments/c1"),
            (.admin, "/v1/docs/things/a%20b"), (.admin, "/v1/docs/things/%C3%A9t%C3%A9"),
            (.nobody, "/v1/docs/posts/open"), (.nobody, "/v1/docs/posts/closed"), (.nobody, "/v1/docs/posts/missing"),
            (.nobody, "/v1/docs/posts/open/comments/c1"), (.nobody, "/v1/docs/secret/s1"),
            (.token(user), "/v1/docs/posts/open"), (.token(user), "/v1/docs/posts/closed"),
            (.token(user), "/v1/docs/notes/n1"), (.token(staff), "/v1/docs/notes/n1"),
            (.token(revoked), "/v1/docs/posts/open"),
            (.token("hat_not_a_real_token"), "/v1/docs/posts/open"), (.token("nope"), "/v1/docs/posts/open"),
            (.authorization("Basic YWxhZGRpbjpvcGVuc2VzYW1l"), "/v1/docs/posts/open"),
            (.authorization("Bearer"), "/v1/docs/posts/open"),
            // Routed on both servers:
            (.admin, "/v1/docs/posts/open?"), (.nobody, "/v1/docs/posts/open?transaction=nope"), (.admin, "/v1/docs/posts"),
            (.admin, "/v1/docs/posts/__x__"), (.admin, "/v1/docs/posts/open/"), (.admin, "/v1/docs/posts//open"),
            (.admin, "/v1/docs/posts/.."), (.admin, "/v1/docs/"),
        ]
    }
    static let inlineReadCount = 19 * 2  // each read is sent twice, before and after the user's token is revoked

    /// Sets a server up the same way and answers its replies as normalized lines.
    static func transcript(_ server: TestServer) async throws -> [String] {
        let admin = server.client()
        for (path, body) in [("posts/open", #"{"public": true, "title": "hi"}"#), ("posts/closed", #"{"public": false}"#),
                             ("posts/open/comments/c1", #"{"text": "first"}"#), ("things/a b", #"{"n": 1}"#),
                             ("things/été", #"{"n": 2.5, "at": {"$timestamp": "2026-01-02T03:04:05.123456Z"}}"#),
                             ("secret/s1", "{}"), ("notes/n1", #"{"text": "staff only"}"#)] {
            let encoded = path.split(separator: "/").map { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
            #expect(try await admin.put("/v1/docs/" + encoded.joined(separator: "/"), body).status == 200)
        }
        let user = try await admin.signedUp("user@example.com", "correct horse battery")
        let staff = try await admin.signedUp("staff@example.com", "correct horse battery")
        #expect(try await admin.put("/v1/docs/users/\(staff.uid)", #"{"staff": true}"#).status == 200)
        let leaver = try await admin.signedUp("leaver@example.com", "correct horse battery")
        var lines: [String] = []
        for round in 0..<2 {
            if round == 1 {
                #expect(try await admin.post("/v1/auth/logout", as: .token(leaver.token)).status == 204)
            }
            for (caller, uri) in reads(user: user.token, staff: staff.token, revoked: leaver.token) {
                let result = try await admin.get(uri, as: caller)
                lines.append(normalized(result, uri, caller: caller, tokens: [user.token, staff.token, leaver.token]))
                #expect(result.header("Date").map(isIMFFixdate) == true, "\(uri): \(result.header("Date") ?? "no Date")")
            }
        }
        await admin.close()
        return lines
    }

    /// Status, headers (without `Date`) and body, with times, uids and tokens replaced by placeholders.
    static func normalized(_ result: HTTPResult, _ uri: String, caller: Caller, tokens: [String]) -> String {
        var headers = result.headers.filter { $0.name != .date }.map { "\($0.name.canonicalName): \($0.value)" }
        headers.sort()
        let who: String
        switch caller {
        case .admin: who = "admin"
        case .nobody: who = "nobody"
        case .token(let token): who = tokens.firstIndex(of: token).map { "user \($0)" } ?? "token \(token)"
        case .authorization(let header): who = header
        }
        var text = "\(uri) as \(who) -> \(result.status) \(headers) \(result.text)"
        for pattern in [#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"#] {
            text = text.replacingOccurrences(of: pattern, with: "<time>", options: .regularExpression)
        }
        return text
    }

    static func isIMFFixdate(_ text: String) -> Bool {
        text.range(of: #"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$"#,
                   options: .regularExpression) != nil
    }

    static func metricsText(_ server: TestServer) async throws -> String {
        let client = server.client()
        defer { Task { await client.close() } }
        return try await client.get("/metrics").text
    }

    static func metric(_ name: String, _ server: TestServer) async throws -> Double? {
        try await metricsText(server).split(separator: "\n").first { $0.hasPrefix(name + " ") }
            .flatMap { Double($0.split(separator: " ").last!) }
    }

    /// `hearth_http_requests_total` lines of one route, and the latency histogram's counts.
    static func requestCounts(_ server: TestServer, route: String) async throws -> [String] {
        try await metricsText(server).split(separator: "\n").map(String.init).filter {
            ($0.hasPrefix("hearth_http_requests_total{") || $0.hasPrefix("hearth_http_request_duration_seconds_count{"))
                && $0.contains("route=\"\(route)\"")
        }.sorted()
    }

    /// Requests sent in one write are answered in order: a read behind a routed write (its query string
    /// routes it) waits for it, so it sees the write and its answer comes second.
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await TestServer.with { server, client in
            #expect(try await client.put("/v1/docs/c/x", #"{"v": 1}"#).status == 200)
            let auth = "Authorization: Bearer \(server.adminKey)\r\n"
            let body = #"{"v": 2}"#
            let raw = try RawHTTPConnection(port: server.port)
            try await raw.send("PUT /v1/docs/c/x?merge=false HTTP/1.1\r\nHost: t\r\n\(auth)Content-Type: application/json\r\n"
                         + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
                         + "GET /v1/docs/c/x HTTP/1.1\r\nHost: t\r\n\(auth)\r\n"
                         + "GET /v1/docs/c/x HTTP/1.1\r\nHost: t\r\n\(auth)\r\n")
            for i in 0..<3 {
                let response = try await raw.readResponse()
                #expect(response.status == 200)
                #expect(response.json?["data"]?["v"] == .int(2), "answer \(i): \(response.text)")
            }
            // Once the routed answer is out, the connection's reads are answered inline again.
            let before = try await Self.metric("hearth_inline_reads_total", server) ?? 0
            try await raw.send("GET /v1/docs/c/x HTTP/1.1\r\nHost: t\r\n\(auth)\r\n")
            #expect(try await raw.readResponse().json?["data"]?["v"] == .int(2))
            #expect(try await Self.metric("hearth_inline_reads_total", server) == before + 1)
        }
    }

    /// `Connection: close` gets its answer, then the server closes the connection.
    @Test func connectionCloseEndsTheConnectionAfterTheAnswer() async throws {
        try await TestServer.with { server, client in
            #expect(try await client.put("/v1/docs/c/x", #"{"v": 1}"#).status == 200)
            let raw = try RawHTTPConnection(port: server.port, timeout: 5)
            try await raw.send("GET /v1/docs/c/x HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                         + "Connection: close\r\n\r\n")
            let response = try await raw.readResponse()
            #expect(response.status == 200)
            #expect(response.header("ETag") != nil)
            #expect(try await raw.readToEnd().isEmpty)
            #expect(try await Self.metric("hearth_inline_reads_total", server) == 1)
        }
    }

    /// A read answered inline is logged at the request log level with a request id, as routed ones are.
    @Test func inlineReadsAreLoggedWithARequestID() async throws {
        let logs = LogCapture()
        let configure: (inout ServerConfiguration) -> Void = { $0.requestLogLevel = .warning; $0.logHandlerFactory = logs.factory }
        try await TestServer.with(configure: configure) { (_: TestServer, client: HearthClient) async throws in
            #expect(try await client.get("/v1/docs/c/missing").status == 404)
            let line = logs.text.split(separator: "\n").first { $0.contains("Request") && $0.contains("/v1/docs/c/missing") }
            #expect(line?.contains("hb.request.id=") == true, "\(logs.text)")
            #expect(line?.contains("hb.request.method=GET") == true, "\(logs.text)")
        }
    }
}

extension InlineReadTests {
    /// A client that pipelines reads and never collects the answers stops being read once the answers back
    /// up: the server holds at most what the sockets buffer (a few megabytes), not all 1,500 answers (24 MB).
    @Test func aClientThatDoesNotReadItsAnswersIsNotReadEither() async throws {
        try await TestServer.with { server, client in
            let big = String(repeating: "x", count: 16_000)
            #expect(try await client.put("/v1/docs/c/big", #"{"text": "\#(big)"}"#).status == 200)
            let total = 1_500
            let raw = try RawHTTPConnection(port: server.port, timeout: 30, receiveBuffer: 65_536)
            let request = "GET /v1/docs/c/big HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n\r\n"
            let sender = Task { try await raw.send(String(repeating: request, count: total)) }
            try await Task.sleep(for: .seconds(2))
            let answered = try await Self.metric("hearth_inline_reads_total", server) ?? 0
            #expect(answered > 0 && answered < Double(total / 2), "\(answered) answers made for a client reading none")
            // Once the client reads, every request is answered, in order.
            for _ in 0..<total {
                let response = try await raw.readResponse()
                guard response.status == 200 else {
                    Issue.record("status \(response.status): \(response.text.prefix(200))")
                    break
                }
            }
            try await sender.value
            #expect(try await Self.metric("hearth_inline_reads_total", server) == Double(total))
        }
    }
}

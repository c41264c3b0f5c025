import Foundation
import HearthCore
import HearthServer
import HearthTesting
import Testing

/// What the connection itself refuses, over real HTTP on both request paths (answered inline, and routed
/// with `inlineAnswers` off): malformed requests and heads over the limits get `400` or `431` in the one
/// error shape and the connection is closed; idle connections, slow heads and stalled bodies are closed
/// after their timeouts (`408` for a request under way); HTTP/1.0 gets HTTP/1.0 answers; a chunked body over
/// 10 MiB gets `413`. Each request in these tables is written as the bytes on the wire.
@Suite struct ConnectionLimitsTests {
    /// A request's bytes, given the `Authorization` line of the admin key.
    typealias Wire = @Sendable (_ auth: String) -> String

    static func request(_ method: String, _ target: String, version: String = "HTTP/1.1", headers: [String] = [],
                        body: String? = nil) -> Wire {
        { auth in
            var text = "\(method) \(target) \(version)\r\nHost: t\r\n\(auth)"
            for header in headers { text += header + "\r\n" }
            if let body { text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
            return text + "\r\n" + (body ?? "")
        }
    }

    static func raw(_ text: String) -> Wire { { _ in text } }

    // MARK: Malformed requests

    /// (what, bytes, status of a good request sent before it on the same connection, status, message part).
    static let malformed: [(String, Wire, Int?, Int, String)] = [
        ("a request line that is not one", raw("GARBAGE\r\n\r\n"), nil, 400, "not a request line"),
        ("Content-Length twice", raw("PUT /v1/docs/refused/a HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                                     + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}"), nil, 400, "Content-Length given twice"),
        ("Content-Length with Transfer-Encoding: chunked",
         raw("PUT /v1/docs/refused/b HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
             + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"), nil, 400, "Transfer-Encoding with Content-Length"),
        ("Transfer-Encoding: chunked, then Content-Length",
         raw("PUT /v1/docs/refused/b HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
             + "Content-Length: 2\r\n\r\n2\r\n{}\r\n0\r\n\r\n"), nil, 400, "comes with Transfer-Encoding"),
        ("a Content-Length that is not a number", raw("PUT /v1/docs/refused/b HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                                                      + "Content-Length: abc\r\n\r\n{}"), nil, 400, "Content-Length is not a length"),
        ("a chunk size that is not a number",
         raw("PUT /v1/docs/refused/c HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
             + "zz\r\n{}\r\n0\r\n\r\n"), nil, 400, "chunk"),
        ("a 200 KB header", raw("GET /v1/docs/c/x HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\n\r\n"),
         nil, 431, "request head too large"),
        ("20,000 headers", raw("GET /v1/docs/c/x HTTP/1.1\r\nHost: t\r\n"
                               + (0..<20_000).map { "X-H\($0): v\r\n" }.joined() + "\r\n"), nil, 431, "at most 100 header fields"),
        ("one header field too many", raw("GET /v1/docs/c/x HTTP/1.1\r\n"
                                         + (0..<Limits.maxRequestHeaderFields).map { "X-H\($0): v\r\n" }.joined() + "Host: t\r\n\r\n"),
         nil, 431, "request head too large"),
        ("a bad request behind a read answered inline",
         { auth in request("GET", "/v1/docs/c/missing")(auth) + "GARBAGE\r\n\r\n" }, 404, 400, "malformed HTTP request"),
        ("a bad request behind a routed read",
         { auth in request("GET", "/v1/docs/c/missing?")(auth) + "GARBAGE\r\n\r\n" }, 404, 400, "malformed HTTP request"),
        ("a bad request behind a write",
         { auth in request("PUT", "/v1/docs/c/w", body: #"{"n": 1}"#)(auth) + "GARBAGE\r\n\r\n" }, 200, 400, "malformed HTTP request"),
    ]

    @Test(arguments: [true, false])
    func malformedRequestsGetAnErrorAndTheConnectionCloses(inline: Bool) async throws {
        try await TestServer.with(configure: { $0.inlineAnswers = inline }) { server, client in
            let auth = "Authorization: Bearer \(server.adminKey)\r\n"
            for (what, wire, before, status, message) in Self.malformed {
                let raw = try RawHTTPConnection(port: server.port, timeout: 10)
                try await raw.send(wire(auth))
                if let before {
                    #expect(try await raw.readResponse().status == before, "\(what)")
                }
                let response = try await raw.readResponse()
                #expect(response.status == status, "\(what): \(response.text)")
                #expect(response.errorCode == "invalid-argument", "\(what): \(response.text)")
                #expect(response.errorMessage?.contains(message) == true, "\(what): \(response.text)")
                #expect(response.header("Connection") == "close", "\(what)")
                #expect(response.header("Content-Type") == "application/json", "\(what)")
                #expect(try await raw.readToEnd().isEmpty, "\(what): the connection stays open")
            }
            // Nothing refused was written.
            #expect(try await client.get("/v1/docs/refused").json?["documents"]?.arrayCount == 0)
        }
    }

    /// A client that ends its input in the middle of a body gets `400`, and the part it sent is not taken
    /// for the whole body, even when it parses (`{}` of a promised 16,000 bytes).
    @Test(arguments: [true, false])
    func aBodyCutShortByTheClientIsNotTakenWhole(inline: Bool) async throws {
        try await TestServer.with(configure: { $0.inlineAnswers = inline }) { server, client in
            for target in ["/v1/docs/cut/a", "/v1/docs/cut", "/v1/commit"] {
                let raw = try RawHTTPConnection(port: server.port, timeout: 10)
                let body = target == "/v1/commit" ? #"{"writes": [{"set": "cut/b", "data": {}}]}"# : "{}"
                try await raw.send(Self.request(target.hasSuffix("/a") ? "PUT" : "POST", target, headers: [
                    "Content-Type: application/json", "Content-Length: 16000",
                ])("Authorization: Bearer \(server.adminKey)\r\n") + body)
                raw.finishSending()
                let response = try await raw.readResponse()
                #expect(response.status == 400 && response.errorMessage?.contains("the request ended early") == true,
                        "\(target): \(response.text)")
                #expect(try await raw.readToEnd().isEmpty)
            }
            #expect(try await client.get("/v1/docs/cut").json?["documents"]?.arrayCount == 0)
        }
    }

    // MARK: Timeouts

    static func shortTimeouts(inline: Bool) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.inlineAnswers = inline
            // Short, yet long enough that a busy machine (the whole suite runs at once) does not trip them.
            configuration.connections.idleTimeout = .milliseconds(1_500)
            configuration.connections.requestHeadTimeout = .milliseconds(1_500)
            configuration.connections.requestBodyTimeout = .milliseconds(1_500)
        }
    }

    enum Ending: Sendable {
        /// Closed without a word.
        case closed
        /// Answered with this status, then closed without a word once idle.
        case answeredThenClosed(Int)
        /// Answered `408` with this HTTP version (the head's, once known), then closed.
        case timedOut(String, head: Bool)
    }

    /// (what, bytes sent then nothing more, how the server ends the connection).
    static let slow: [(String, Wire?, Ending)] = [
        ("nothing sent", nil, .closed),
        ("half a head", raw("GET /v1/docs/c/x HTTP/1.1\r\nHost: t\r\nAuthoriz"), .timedOut("HTTP/1.1", head: true)),
        ("a request line only", raw("GET /v1/docs/c/x HTTP/1.1\r\n"), .timedOut("HTTP/1.1", head: true)),
        ("a PUT with 1 byte of 16,000", { auth in request("PUT", "/v1/docs/slow/a", headers: ["Content-Type: application/json",
                                                                                            "Content-Length: 16000"])(auth) + "{" },
         .timedOut("HTTP/1.1", head: false)),
        ("a PUT whose first 2 bytes of 16,000 are a whole JSON object",
         { auth in request("PUT", "/v1/docs/slow/b", headers: ["Content-Type: application/json", "Content-Length: 16000"])(auth) + "{}" },
         .timedOut("HTTP/1.1", head: false)),
        ("a chunked PUT that stops", { auth in request("PUT", "/v1/docs/slow/c", headers: ["Content-Type: application/json",
                                                                                          "Transfer-Encoding: chunked"])(auth) + "2\r\n{}\r\n" },
         .timedOut("HTTP/1.1", head: false)),
        ("a query with half its body", { auth in request("POST", "/v1/query", headers: ["Content-Type: application/json",
                                                                                       "Content-Length: 100"])(auth) + #"{"from""# },
         .timedOut("HTTP/1.1", head: false)),
        ("a commit with half its body", { auth in request("POST", "/v1/commit", headers: ["Content-Type: application/json",
                                                                                         "Content-Length: 16000"])(auth) + "{" },
         .timedOut("HTTP/1.1", head: false)),
        ("an HTTP/1.0 POST with half its body", { auth in request("POST", "/v1/docs/slow", version: "HTTP/1.0",
                                                                  headers: ["Content-Type: application/json", "Content-Length: 50"])(auth) + "{" },
         .timedOut("HTTP/1.0", head: false)),
        ("a read answered, then nothing", request("GET", "/v1/docs/c/missing"), .answeredThenClosed(404)),
        ("a routed read answered, then nothing", request("GET", "/v1/docs/c/missing?"), .answeredThenClosed(404)),
    ]

    @Test(arguments: [true, false])
    func slowAndIdleConnectionsAreClosedAfterTheirTimeouts(inline: Bool) async throws {
        let server = try await TestServer.start(configure: Self.shortTimeouts(inline: inline))
        let auth = "Authorization: Bearer \(server.adminKey)\r\n"
        // All at once: each waits out its own timeout.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (what, wire, ending) in Self.slow {
                group.addTask {
                    let raw = try RawHTTPConnection(port: server.port, timeout: 10)
                    if let wire { try await raw.send(wire(auth)) }
                    switch ending {
                    case .closed:
                        break
                    case .answeredThenClosed(let status):
                        #expect(try await raw.readResponse().status == status, "\(what)")
                    case .timedOut(let version, let head):
                        let response = try await raw.readResponse()
                        #expect(response.status == 408, "\(what): \(response.text)")
                        #expect(response.version == version, "\(what)")
                        #expect(response.errorCode == "deadline-exceeded", "\(what): \(response.text)")
                        #expect(response.errorMessage?.contains(head ? "request head" : "request body") == true, "\(what): \(response.text)")
                        #expect(response.header("Connection") == "close", "\(what)")
                    }
                    #expect(try await raw.readToEnd().isEmpty, "\(what): the connection stays open")
                }
            }
            try await group.waitForAll()
        }
        // No half-sent body was taken for a whole one.
        let client = server.client()
        #expect(try await client.get("/v1/docs/slow").json?["documents"]?.arrayCount == 0)
        await client.close()
        await server.stop()
    }

    /// A body that keeps coming, a piece every 150 ms, is not cut by a 1.5 s timeout, however long it takes.
    @Test(arguments: [true, false])
    func aSlowBodyThatKeepsComingIsAnswered(inline: Bool) async throws {
        let server = try await TestServer.start(configure: Self.shortTimeouts(inline: inline))
        let raw = try RawHTTPConnection(port: server.port, timeout: 10)
        let body = #"{"text": "one piece after another"}"#
        try await raw.send(Self.request("PUT", "/v1/docs/c/trickle", headers: [
            "Content-Type: application/json", "Content-Length: \(body.utf8.count)",
        ])("Authorization: Bearer \(server.adminKey)\r\n"))
        try await raw.trickle(Array(body.utf8), piece: 5, every: .milliseconds(150))
        let response = try await raw.readResponse()
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json?["data"]?["text"] == .string("one piece after another"))
        await server.stop()
    }

    /// Past its upgrade a WebSocket is not HTTP's: it outlives the idle timeout many times over.
    @Test(arguments: [true, false])
    func aListenConnectionOutlivesTheHTTPTimeouts(inline: Bool) async throws {
        let server = try await TestServer.start(configure: Self.shortTimeouts(inline: inline))
        let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
        try await ws.listen("d", doc: "rooms/r1")
        try await ws.expect("snapshot", id: "d")
        try await Task.sleep(for: .seconds(4))
        let client = server.client()
        #expect(try await client.put("/v1/docs/rooms/r1", #"{"n": 1}"#).status == 200)
        let changed = try await ws.expect("snapshot", id: "d")
        #expect(changed["initial"] == .bool(false))
        await client.close()
        await ws.close()
        await server.stop()
    }

    // MARK: HTTP/1.0

    /// Requests of every kind, inline and routed, as HTTP/1.0.
    static let http10: [(String, @Sendable (String, [String]) -> Wire, Int)] = [
        ("a read", { v, h in request("GET", "/v1/docs/c/x", version: v, headers: h) }, 200),
        ("a routed read", { v, h in request("GET", "/v1/docs/c/x?", version: v, headers: h) }, 200),
        ("a query", { v, h in request("POST", "/v1/query", version: v, headers: h, body: #"{"from": "c"}"#) }, 200),
        ("a write", { v, h in request("PUT", "/v1/docs/c/y", version: v, headers: h, body: #"{"n": 2}"#) }, 200),
        ("a commit", { v, h in request("POST", "/v1/commit", version: v, headers: h,
                                       body: #"{"writes": [{"set": "c/z", "data": {"n": 3}}]}"#) }, 200),
        ("a health check", { v, h in request("GET", "/healthz", version: v, headers: h) }, 200),
        ("an error", { v, h in request("GET", "/v1/docs/c/missing", version: v, headers: h) }, 404),
    ]

    @Test(arguments: [true, false])
    func http10GetsHTTP10AndTheConnectionClosesUnlessKeptAlive(inline: Bool) async throws {
        try await TestServer.with(configure: { $0.inlineAnswers = inline }) { server, client in
            #expect(try await client.put("/v1/docs/c/x", #"{"n": 1}"#).status == 200)
            let auth = "Authorization: Bearer \(server.adminKey)\r\n"
            for (what, wire, status) in Self.http10 {
                // Plain HTTP/1.0: one answer, then the server closes.
                let once = try RawHTTPConnection(port: server.port, timeout: 10)
                try await once.send(wire("HTTP/1.0", [])(auth))
                let answer = try await once.readResponse()
                #expect(answer.version == "HTTP/1.0" && answer.status == status, "\(what): \(answer.version ?? "") \(answer.text)")
                #expect(answer.header("Connection") == "close", "\(what)")
                #expect(try await once.readToEnd().isEmpty, "\(what): the connection stays open")

                // `Connection: keep-alive`: the connection stays open for the next request, until one without it.
                let kept = try RawHTTPConnection(port: server.port, timeout: 10)
                try await kept.send(wire("HTTP/1.0", ["Connection: keep-alive"])(auth) + wire("HTTP/1.0", [])(auth))
                for closes in [false, true] {
                    let answer = try await kept.readResponse()
                    #expect(answer.version == "HTTP/1.0" && answer.status == status, "\(what): \(answer.text)")
                    #expect(answer.header("Connection") == (closes ? "close" : "keep-alive"), "\(what)")
                }
                #expect(try await kept.readToEnd().isEmpty, "\(what): the connection stays open")

                // HTTP/1.1 is unchanged: kept open, no `Connection` header.
                let plain = try RawHTTPConnection(port: server.port, timeout: 10)
                try await plain.send(wire("HTTP/1.1", [])(auth) + wire("HTTP/1.1", ["Connection: close"])(auth))
                let first = try await plain.readResponse(), last = try await plain.readResponse()
                #expect(first.version == "HTTP/1.1" && first.header("Connection") == nil, "\(what)")
                #expect(last.version == "HTTP/1.1" && last.header("Connection") == "close", "\(what)")
                #expect(try await plain.readToEnd().isEmpty, "\(what)")
            }
        }
    }

    // MARK: Chunked bodies

    /// A chunked body over 10 MiB gets the same `413 payload-too-large` as a `Content-Length` one.
    @Test(arguments: [true, false])
    func aChunkedBodyOverTheLimitIsPayloadTooLarge(inline: Bool) async throws {
        try await TestServer.with(configure: { $0.inlineAnswers = inline }) { server, client in
            // 11 chunks of 1 MiB: refused for its size before anything reads it as JSON.
            let chunk = String(repeating: "x", count: 1 << 20)
            let body = String(repeating: "\(String(1 << 20, radix: 16))\r\n\(chunk)\r\n", count: 11) + "0\r\n\r\n"
            for (method, target) in [("PUT", "/v1/docs/big/a"), ("POST", "/v1/docs/big"), ("POST", "/v1/commit")] {
                let raw = try RawHTTPConnection(port: server.port, timeout: 30)
                let head = "\(method) \(target) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                    + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                try await raw.send(head + body)
                let response = try await raw.readResponse()
                #expect(response.status == 413, "\(method) \(target): \(response.text)")
                #expect(response.errorCode == "payload-too-large", "\(method) \(target): \(response.text)")
                #expect(response.errorMessage?.contains("10 MiB") == true, "\(response.text)")
            }
            #expect(try await client.get("/v1/docs/big").json?["documents"]?.arrayCount == 0)
        }
    }
}

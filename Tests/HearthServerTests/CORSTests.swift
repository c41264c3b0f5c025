import Foundation
import HearthCore
import HearthTesting
import HTTPTypes
import Testing
@testable import HearthServer

/// CORS (`--cors-origin`): which origins a policy takes, and, end to end over loopback, the headers of every
/// kind of answer (answered on the event loop or routed, documents and files, errors, preflights) for an
/// allowed origin, a refused one and none, with and without the setting.
@Suite struct CORSTests {
    static let app = "https://app.example.com"
    static let sub = "https://photos.example.org"
    static let evil = "https://evil.example.com"

    static func policy() throws -> CORSPolicy {
        try #require(try CORSPolicy(origins: [app, "https://*.example.org", "http://localhost:3000"]))
    }

    // MARK: The policy, without sockets

    /// Origins as an operator writes them: taken, or refused with the value and why.
    @Test(arguments: [
        ("https://app.example.com", nil),
        ("HTTPS://App.Example.com", nil),
        ("http://localhost:3000", nil),
        ("http://[::1]:8080", nil),
        ("capacitor://localhost", nil),
        ("https://*.example.com", nil),
        ("https://*.example.com:8443", nil),
        ("*", nil),
        ("app.example.com", "no scheme"),
        ("https://app.example.com/", "no path"),
        ("https://app.example.com/app", "no path"),
        ("https://app.example.com:0", "port"),
        ("https://app.example.com:http", "port"),
        ("https://", "host"),
        ("https://user@app.example.com", "user name"),
        ("https://app.*.com", "* stands only"),
        ("https://*.", "domain after *."),
        ("1https://app.example.com", "scheme"),
    ] as [(String, String?)])
    func originsAsWritten(_ origin: String, _ refusal: String?) throws {
        do {
            _ = try CORSPolicy(origins: [origin])
            #expect(refusal == nil, "\(origin) was taken")
        } catch {
            let refusal = try #require(refusal, "\(origin): \(error.message)")
            #expect(error.message.contains(refusal) && error.message.contains(origin), "\(error.message)")
        }
    }

    /// Which `Origin` headers a policy allows: exact origins in any case, subdomains of a `*.` pattern (not the
    /// domain itself, nor another port), never `null`.
    @Test(arguments: [
        (app, true), ("https://APP.example.com", true), ("http://app.example.com", false),
        ("https://app.example.com:8443", false), ("https://app.example.com.evil.net", false),
        (sub, true), ("https://a.b.example.org", true), ("https://example.org", false),
        ("https://evilexample.org", false), ("https://.example.org", false), ("https://a.example.org:444", false),
        ("http://localhost:3000", true), ("http://localhost:3001", false), ("null", false), ("", false),
    ])
    func allowedOrigins(_ origin: String, _ allowed: Bool) throws {
        #expect(try Self.policy().allows(origin) == allowed, "\(origin)")
    }

    @Test func anyOriginButNull() throws {
        let any = try #require(try CORSPolicy(origins: ["*"]))
        #expect(any.allows("https://anything.example"))
        #expect(any.allows("http://localhost:1234"))
        #expect(!any.allows("null"))
        #expect(try CORSPolicy(origins: []) == nil)
        #expect(try CORSPolicy(origins: [" ", ""]) == nil)
    }

    // MARK: End to end

    /// One request of the table: what is sent, and whether the event loop or the router answers it.
    struct Call: Sendable, CustomStringConvertible {
        let method: HTTPRequest.Method
        let path: String
        var body: String?
        var contentType: String? = "application/json"
        var headers: [String: String] = [:]
        let status: Int
        var description: String { "\(method) \(path)" }
    }

    /// Every kind of answer: plain reads and writes (answered on the event loop unless it is off), routed
    /// calls, files, errors of both paths, a path no route has; `run` keeps each run's documents and files apart.
    static func calls(_ run: String) -> [Call] {
        let docs = "/v1/docs/notes-\(run)", file = "/v1/files/pics/\(run).txt"
        return [
            Call(method: .put, path: docs + "/a", body: #"{"n": 1}"#, status: 200),
            Call(method: .get, path: docs + "/a", status: 200),
            Call(method: .get, path: docs + "/missing", status: 404),
            Call(method: .get, path: docs, status: 200),
            Call(method: .put, path: docs + "/b", body: #"{"n": 2}"#, headers: ["If-None-Match": "*"], status: 200),
            Call(method: .post, path: "/v1/query", body: #"{"from": "notes-\#(run)"}"#, status: 200),
            Call(method: .put, path: file, body: "hello", contentType: "text/plain", headers: ["X-Hearth-Meta-Owner": "ann"],
                 status: 201),
            Call(method: .get, path: file, status: 200),
            Call(method: .get, path: file, headers: ["Range": "bytes=0-1"], status: 206),
            Call(method: .get, path: "/v1/files/pics/missing.txt", status: 404),
            Call(method: .get, path: "/v1/nothing-here", status: 404),
            Call(method: .get, path: "/healthz", status: 200),
        ]
    }

    /// Sends each call with `origin` (nil: none) and checks its CORS headers: with an allowed origin, the
    /// origin echoed, `Vary: Origin` and the headers exposed; with a refused one or none, only `Vary`; with no
    /// policy, none at all.
    static func checkEveryCall(_ server: TestServer, _ client: HearthClient, origin: String?, allowed: Bool,
                               policy: Bool) async throws {
        for call in calls(makeAutoID()) {
            var headers = call.headers
            if let origin { headers["Origin"] = origin }
            let answer = try await client.request(call.method, call.path, body: call.body.map { Array($0.utf8) },
                                                  contentType: call.contentType, headers: headers)
            let label = "\(call) from \(origin ?? "no origin")"
            #expect(answer.status == call.status, "\(label): \(answer.text)")
            if allowed {
                #expect(answer.header("Access-Control-Allow-Origin") == origin, "\(label)")
                #expect(answer.header("Vary")?.contains("Origin") == true, "\(label)")
                let exposed = answer.header("Access-Control-Expose-Headers") ?? ""
                for name in ["ETag", "Location", "Content-Range", "Content-Disposition", "Upload-Offset", "Upload-Length",
                             "Tus-Version", "Tus-Resumable", "Tus-Max-Size", "Tus-Extension", "Upload-Expires", "Upload-Metadata"] {
                    #expect(exposed.contains(name), "\(label): \(name) not exposed in \(exposed)")
                }
                if answer.header("X-Hearth-Meta-Owner") != nil {
                    #expect(exposed.contains("X-Hearth-Meta-Owner") || exposed.contains("x-hearth-meta-owner"), "\(label): \(exposed)")
                }
            } else {
                #expect(answer.header("Access-Control-Allow-Origin") == nil, "\(label)")
                #expect(answer.header("Access-Control-Expose-Headers") == nil, "\(label)")
                #expect((answer.header("Vary")?.contains("Origin") == true) == policy, "\(label)")
            }
        }
    }

    @Test(arguments: [true, false])
    func everyAnswerCarriesTheHeadersOfItsOrigin(inline: Bool) async throws {
        let policy = try Self.policy()
        try await TestServer.with(configure: { $0.cors = policy; $0.inlineAnswers = inline }) { server, client in
            try await Self.checkEveryCall(server, client, origin: Self.app, allowed: true, policy: true)
            try await Self.checkEveryCall(server, client, origin: Self.sub, allowed: true, policy: true)
            try await Self.checkEveryCall(server, client, origin: Self.evil, allowed: false, policy: true)
            try await Self.checkEveryCall(server, client, origin: nil, allowed: false, policy: true)
        }
    }

    /// Without `--cors-origin`, answers are as they always were: no CORS header, not even `Vary`.
    @Test func noSettingNoHeaders() async throws {
        try await TestServer.with { server, client in
            try await Self.checkEveryCall(server, client, origin: Self.app, allowed: false, policy: false)
            let preflight = try await client.request(.options, "/v1/docs/notes/a", contentType: nil,
                                                     headers: ["Origin": Self.app, "Access-Control-Request-Method": "PUT"])
            #expect(preflight.status != 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == nil)
            #expect(preflight.header("Access-Control-Allow-Methods") == nil)
        }
    }

    /// Preflights on any path (documents, files, uploads, one no route has): `204` with what is allowed for
    /// an allowed origin, `403` without any CORS header for another.
    @Test(arguments: [
        ("/v1/docs/notes/a", app, "PUT", 204),
        ("/v1/files/pics/a.png", app, "PUT", 204),
        ("/v1/uploads", sub, "POST", 204),
        ("/v1/uploads/abc", "http://localhost:3000", "PATCH", 204),
        ("/v1/query", app, "POST", 204),
        ("/v1/docs/notes/a", evil, "PUT", 403),
        ("/v1/files/pics/a.png", "null", "GET", 403),
        ("/v1/uploads", "https://example.org", "POST", 403),
    ])
    func preflights(_ path: String, _ origin: String, _ method: String, _ status: Int) async throws {
        let policy = try Self.policy()
        try await TestServer.with(configure: { $0.cors = policy }) { _, client in
            let answer = try await client.request(.options, path, contentType: nil, headers: [
                "Origin": origin, "Access-Control-Request-Method": method,
                "Access-Control-Request-Headers": "authorization, content-type, x-hearth-meta-owner, upload-offset, tus-resumable",
            ], as: Caller.nobody)
            #expect(answer.status == status, "\(answer.text)")
            #expect(answer.header("Vary")?.contains("Origin") == true)
            guard status == 204 else {
                #expect(answer.header("Access-Control-Allow-Origin") == nil)
                #expect(answer.header("Access-Control-Allow-Methods") == nil)
                #expect(answer.errorCode == "permission-denied")
                #expect(answer.errorMessage?.contains(origin) == true)
                return
            }
            #expect(answer.header("Access-Control-Allow-Origin") == origin)
            #expect(answer.body.isEmpty)
            let methods = answer.header("Access-Control-Allow-Methods") ?? ""
            for name in ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] { #expect(methods.contains(name), "\(methods)") }
            let allowed = answer.header("Access-Control-Allow-Headers") ?? ""
            for name in ["Authorization", "Content-Type", "X-Hearth-SHA256", "x-hearth-meta-owner", "Tus-Resumable", "Upload-Length",
                         "Upload-Offset", "Upload-Metadata", "Upload-Checksum", "Upload-Defer-Length", "Upload-Concat",
                         "X-HTTP-Method-Override", "If-Match", "If-None-Match", "Range"] {
                #expect(allowed.contains(name), "\(name) not in \(allowed)")
            }
            #expect(answer.header("Access-Control-Max-Age") == "7200")
        }
    }

    /// Pipelined requests from two origins on one connection, one routed and one answered on the event loop:
    /// each answer carries its own request's origin.
    @Test func pipelinedAnswersKeepTheirOrigins() async throws {
        let policy = try Self.policy()
        try await TestServer.with(configure: { $0.cors = policy }) { server, client in
            #expect(try await client.put("/v1/docs/notes/a", #"{"n": 1}"#).status == 200)
            let connection = try RawHTTPConnection(port: server.port)
            defer { connection.disconnect() }
            let auth = "Authorization: Bearer \(server.adminKey)\r\n"
            try await connection.send(
                "GET /v1/docs/notes HTTP/1.1\r\nHost: x\r\n\(auth)Origin: \(Self.app)\r\n\r\n"
                + "GET /v1/docs/notes/a HTTP/1.1\r\nHost: x\r\n\(auth)Origin: \(Self.sub)\r\n\r\n"
                + "GET /v1/docs/notes/a HTTP/1.1\r\nHost: x\r\n\(auth)Origin: \(Self.evil)\r\n\r\n"
                + "GET /v1/docs/notes/a HTTP/1.1\r\nHost: x\r\n\(auth)Origin: \(Self.app)\r\n\r\n")
            for expected in [Self.app, Self.sub, nil, Self.app] {
                let answer = try await connection.readResponse()
                #expect(answer.status == 200)
                #expect(answer.header("Access-Control-Allow-Origin") == expected)
            }
        }
    }

    /// A request the connection refuses once its head is known (a body too slow: `408`) is answered with the
    /// CORS headers of its origin, as any other answer.
    @Test(arguments: [true, false])
    func aRefusalCarriesTheHeadersOfItsOrigin(inline: Bool) async throws {
        let policy = try Self.policy()
        try await TestServer.with(configure: { configuration in
            configuration.cors = policy
            configuration.inlineAnswers = inline
            configuration.connections.requestBodyTimeout = .milliseconds(1_500)
        }) { server, _ in
            let connection = try RawHTTPConnection(port: server.port)
            defer { connection.disconnect() }
            try await connection.send("PUT /v1/docs/slow/a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                                      + "Origin: \(Self.app)\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
            let answer = try await connection.readResponse()
            #expect(answer.status == 408)
            #expect(answer.header("Access-Control-Allow-Origin") == Self.app)
            #expect(answer.header("Vary")?.contains("Origin") == true)
        }
    }

    // MARK: The setting

    /// Whether a running server allows `origin`: its preflight's answer.
    static func allows(_ server: ServerProcess, _ origin: String) async throws -> Bool {
        let client = HearthClient(port: server.port, adminKey: server.adminKey)
        let answer = try await client.request(.options, "/v1/docs/notes/a", contentType: nil,
                                              headers: ["Origin": origin, "Access-Control-Request-Method": "GET"])
        await client.close()
        return answer.status == 204 && answer.header("Access-Control-Allow-Origin") == origin
    }

    /// The origins come from the repeated flag, else the variable (commas), else the config file (a list or
    /// a string); a malformed one stops the start, naming it.
    @Test func theSettingFromFlagsVariableOrFile() async throws {
        let folder = TestFolders.make()
        let config = folder + "/hearth.json"
        try #"{"corsOrigin": ["https://file.example.com", "https://*.file.example.org"]}"#
            .write(toFile: config, atomically: true, encoding: .utf8)

        let fromFile = try await ServerProcess.start(dataDirectory: folder + "/a", arguments: ["--config", config])
        #expect(try await Self.allows(fromFile, "https://file.example.com"))
        #expect(try await Self.allows(fromFile, "https://x.file.example.org"))
        #expect(try await !Self.allows(fromFile, "https://other.example.com"))
        fromFile.signal(SIGKILL)

        let fromVariable = try await ServerProcess.launch(["serve", "--port", "0", "--data", folder + "/b", "--config", config],
                                                          adminKey: "test-admin-key-" + UUID().uuidString,
                                                          environment: ["HEARTH_CORS_ORIGIN": "https://one.example.com, https://two.example.com"])
        #expect(try await Self.allows(fromVariable, "https://one.example.com"))
        #expect(try await Self.allows(fromVariable, "https://two.example.com"))
        #expect(try await !Self.allows(fromVariable, "https://file.example.com"))
        fromVariable.signal(SIGKILL)

        let fromFlags = try await ServerProcess.start(dataDirectory: folder + "/c", arguments: [
            "--config", config, "--cors-origin", "https://flag.example.com", "--cors-origin", "http://localhost:5173",
        ])
        #expect(try await Self.allows(fromFlags, "https://flag.example.com"))
        #expect(try await Self.allows(fromFlags, "http://localhost:5173"))
        #expect(try await !Self.allows(fromFlags, "https://file.example.com"))
        fromFlags.signal(SIGKILL)

        let refused = try await CommandResult.run(["serve", "--port", "0", "--data", folder + "/d",
                                                   "--cors-origin", "https://ok.example.com", "--cors-origin", "https://bad.example.com/app"])
        #expect(refused.status != 0)
        #expect(refused.errorOutput.contains("'https://bad.example.com/app'") && refused.errorOutput.contains("no path"),
                "\(refused.errorOutput)")
    }
}

import Foundation
import HearthCore
import HearthServer
import HearthTesting
import HTTPTypes
import Logging
import Testing

/// `/v1/files` end to end over loopback: every call, ranges, conditional requests, download tokens, rules on
/// a user's token, and bad input, each with its documented status and no change.
@Suite struct FileAPITests {
    /// 100 bytes, each its own offset: a range's bytes say where they came from.
    static let hundred = (0..<100).map { UInt8($0) }

    /// The names of a listing's files.
    static func paths(_ json: JSON?) -> [String] {
        guard case .array(let files)? = json?["files"] else { return [] }
        return files.compactMap { $0["path"]?.stringValue }
    }

    static func put(_ client: HearthClient, _ path: String, _ bytes: [UInt8], type: String? = nil,
                    headers: [String: String] = [:], as caller: Caller? = nil) async throws -> HTTPResult {
        try await client.request(.put, "/v1/files/" + path, body: bytes, contentType: type, headers: headers, as: caller)
    }

    @Test func putGetHeadPatchDeleteRoundTrip() async throws {
        try await TestServer.with { _, client in
            let created = try await Self.put(client, "avatars/alice/me.jpg", Self.hundred, type: "image/jpeg",
                                             headers: ["X-Hearth-Meta-Owner": "alice", "X-Hearth-Meta-size-class": "small"])
            #expect(created.status == 201, "\(created.text)")
            let json = try #require(created.json)
            #expect(json["path"] == .string("avatars/alice/me.jpg"))
            #expect(json["size"] == .int(100))
            #expect(json["contentType"] == .string("image/jpeg"))
            #expect(json["metadata"] == .object([("owner", .string("alice")), ("size-class", .string("small"))]))
            #expect(json["downloadToken"]?.stringValue?.isEmpty == false)
            #expect(json["sha256"]?.stringValue?.count == 64)
            let etag = try #require(json["etag"]?.stringValue)
            #expect(created.header("ETag") == "\"\(etag)\"")

            let got = try await client.get("/v1/files/avatars/alice/me.jpg")
            #expect(got.status == 200)
            #expect(got.body == Self.hundred)
            #expect(got.header("Content-Type") == "image/jpeg")
            #expect(got.header("Content-Length") == "100")
            #expect(got.header("Accept-Ranges") == "bytes")
            #expect(got.header("ETag") == "\"\(etag)\"")
            #expect(got.header("Last-Modified")?.hasSuffix(" GMT") == true)
            #expect(got.header("X-Content-Type-Options") == "nosniff")

            let head = try await client.request(.head, "/v1/files/avatars/alice/me.jpg")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            for name in ["Content-Type", "Content-Length", "Accept-Ranges", "ETag", "Last-Modified"] {
                #expect(head.header(name) == got.header(name), "\(name)")
            }

            // A HEAD that fails has no body either: the connection's next answer is read whole.
            let missing = try await client.request(.head, "/v1/files/avatars/alice/missing.jpg")
            #expect(missing.status == 404)
            #expect(missing.body.isEmpty)
            #expect(try await client.request(.head, "/v1/files/avatars/alice/me.jpg", headers: ["If-Match": "\"x\""]).status == 412)
            #expect(try await client.request(.head, "/v1/files/avatars/alice/me.jpg", headers: ["Range": "bytes=500-"]).status == 416)
            let meta = try await client.get("/v1/files/avatars/alice/me.jpg?alt=json")
            #expect(meta.status == 200)
            #expect(meta.json?["etag"] == .string(etag))
            #expect(meta.json?["downloadToken"] == nil, "only the answer that issues a token carries it")

            let replaced = try await Self.put(client, "avatars/alice/me.jpg", [1, 2, 3])
            #expect(replaced.status == 200)
            #expect(replaced.json?["contentType"] == .string("application/octet-stream"))
            #expect(replaced.json?["metadata"] == .object([]))
            #expect(try await client.get("/v1/files/avatars/alice/me.jpg").body == [1, 2, 3])

            let patched = try await client.patch("/v1/files/avatars/alice/me.jpg", #"{"contentType": "text/plain", "metadata": {"Mixed": "Case"}}"#)
            #expect(patched.status == 200, "\(patched.text)")
            #expect(patched.json?["metadata"] == .object([("Mixed", .string("Case"))]))
            #expect(patched.json?["metageneration"] == .int(2))
            #expect(patched.json?["downloadToken"] == nil)
            let after = try await client.get("/v1/files/avatars/alice/me.jpg")
            #expect(after.header("Content-Type") == "text/plain")
            #expect(after.body == [1, 2, 3])

            #expect(try await client.delete("/v1/files/avatars/alice/me.jpg").status == 204)
            let gone = try await client.get("/v1/files/avatars/alice/me.jpg")
            #expect(gone.status == 404)
            #expect(gone.errorCode == "not-found")
            #expect(try await client.delete("/v1/files/avatars/alice/me.jpg").status == 204)
            #expect(try await client.patch("/v1/files/avatars/alice/me.jpg", "{}").status == 404)
        }
    }

    @Test func listingByPrefixWithADelimiterAndPages() async throws {
        try await TestServer.with { _, client in
            for path in ["a/1", "a/2", "a/b/3", "a/b/4", "c"] {
                #expect(try await Self.put(client, path, [1]).status == 201)
            }
            let page = try await client.get("/v1/files?prefix=a/&delimiter=/")
            #expect(page.status == 200, "\(page.text)")
            #expect(Self.paths(page.json) == ["a/1", "a/2"])
            #expect(page.json?["prefixes"] == .array([.string("a/b/")]))
            #expect(page.json?["nextPageToken"] == nil)
            #expect(page.json?["files"]?[0]?["downloadToken"] == nil)

            var names: [String] = []
            var token: String?
            repeat {
                let uri = "/v1/files?pageSize=2" + (token.map { "&pageToken=" + $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! } ?? "")
                let r = try await client.get(uri)
                #expect(r.status == 200, "\(r.text)")
                names += Self.paths(r.json)
                token = r.json?["nextPageToken"]?.stringValue
            } while token != nil && names.count < 10
            #expect(names == ["a/1", "a/2", "a/b/3", "a/b/4", "c"])
            #expect(try await client.get("/v1/files?pageSize=0").status == 400)
        }
    }

    struct RangeCase: Sendable, CustomTestStringConvertible {
        let header: String
        let status: Int
        /// The bytes served (offsets of `hundred`), for 200 and 206.
        let bytes: Range<Int>?
        var testDescription: String { "\(header) → \(status)" }
    }

    static let ranges: [RangeCase] = [
        RangeCase(header: "bytes=0-9", status: 206, bytes: 0..<10),
        RangeCase(header: "bytes=90-", status: 206, bytes: 90..<100),
        RangeCase(header: "bytes=-10", status: 206, bytes: 90..<100),
        RangeCase(header: "bytes=95-200", status: 206, bytes: 95..<100),
        RangeCase(header: "bytes=-200", status: 206, bytes: 0..<100),
        RangeCase(header: "bytes=99-99", status: 206, bytes: 99..<100),
        RangeCase(header: "bytes=0-", status: 206, bytes: 0..<100),
        RangeCase(header: "bytes=100-", status: 416, bytes: nil),
        RangeCase(header: "bytes=100-200", status: 416, bytes: nil),
        RangeCase(header: "bytes=-0", status: 416, bytes: nil),
        // Ranges not served are ignored, as RFC 9110 allows: the whole object.
        RangeCase(header: "bytes=5-1", status: 200, bytes: 0..<100),
        RangeCase(header: "bytes=0-1,5-6", status: 200, bytes: 0..<100),
        RangeCase(header: "items=0-5", status: 200, bytes: 0..<100),
        RangeCase(header: "bytes=abc", status: 200, bytes: 0..<100),
    ]

    @Test func rangesAreServedAsRFC9110Says() async throws {
        try await TestServer.with { _, client in
            #expect(try await Self.put(client, "r/hundred", Self.hundred).status == 201)
            for c in Self.ranges {
                let r = try await client.get("/v1/files/r/hundred", headers: ["Range": c.header])
                #expect(r.status == c.status, "\(c.header): \(r.text)")
                if let bytes = c.bytes {
                    #expect(r.body == Array(Self.hundred[bytes]), "\(c.header)")
                    #expect(r.header("Content-Length") == String(bytes.count), "\(c.header)")
                    if c.status == 206 {
                        #expect(r.header("Content-Range") == "bytes \(bytes.lowerBound)-\(bytes.upperBound - 1)/100", "\(c.header)")
                    }
                } else {
                    #expect(r.header("Content-Range") == "bytes */100", "\(c.header)")
                    #expect(r.errorMessage?.contains("past the end") == true, "\(c.header): \(r.text)")
                }
            }
            // An empty object has no byte to serve.
            #expect(try await Self.put(client, "r/empty", []).status == 201)
            #expect(try await client.get("/v1/files/r/empty", headers: ["Range": "bytes=0-"]).status == 416)
            #expect(try await client.get("/v1/files/r/empty").status == 200)
        }
    }

    @Test func conditionalRequests() async throws {
        try await TestServer.with { _, client in
            let put = try await Self.put(client, "c/x", Self.hundred)
            let etag = try #require(put.json?["etag"]?.stringValue)
            let uri = "/v1/files/c/x"
            let lastModified = try #require(try await client.get(uri).header("Last-Modified"))
            let reads: [([String: String], Int)] = [
                (["If-None-Match": "\"\(etag)\""], 304),
                (["If-None-Match": "W/\"\(etag)\""], 304),
                (["If-None-Match": "\"other\", \"\(etag)\""], 304),
                (["If-None-Match": "*"], 304),
                (["If-None-Match": "\"other\""], 200),
                (["If-Modified-Since": lastModified], 304),
                (["If-Match": "\"\(etag)\""], 200),
                (["If-Match": "\"other\""], 412),
                (["Range": "bytes=0-0", "If-Range": "\"\(etag)\""], 206),
                (["Range": "bytes=0-0", "If-Range": "\"old\""], 200),
            ]
            for (headers, status) in reads {
                let r = try await client.get(uri, headers: headers)
                #expect(r.status == status, "\(headers): \(r.text)")
                if status == 304 {
                    #expect(r.body.isEmpty)
                    #expect(r.header("ETag") == "\"\(etag)\"")
                }
            }
            // Writes: the preconditions fail with 412 and change nothing.
            #expect(try await Self.put(client, "c/x", [9], headers: ["If-None-Match": "*"]).status == 412)
            #expect(try await Self.put(client, "c/x", [9], headers: ["If-Match": "\"1-1\""]).status == 412)
            #expect(try await client.patch(uri, #"{"contentType": "a/b"}"#, headers: ["If-Match": "\"1-1\""]).status == 412)
            #expect(try await client.delete(uri, headers: ["If-Match": "\"1-1\""]).status == 412)
            #expect(try await client.get(uri).body == Self.hundred)
            #expect(try await Self.put(client, "c/new", [9], headers: ["If-Match": "\"\(etag)\""]).status == 412)
            #expect(try await client.get("/v1/files/c/new").status == 404)
            let replaced = try await Self.put(client, "c/x", [9], headers: ["If-Match": "\"\(etag)\""])
            #expect(replaced.status == 200)
            let next = try #require(replaced.json?["etag"]?.stringValue)
            #expect(try await client.delete(uri, headers: ["If-Match": "\"\(next)\""]).status == 204)
            #expect(try await Self.put(client, "c/x", [7], headers: ["If-None-Match": "*"]).status == 201)
        }
    }

    static let closedRules = """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /users/{uid}/{path=**} {
              allow read: if request.auth != null;
              allow write: if request.auth.uid == uid
                           && request.resource.size < 1024
                           && request.resource.contentType.matches('image/.*');
              allow delete: if request.auth.uid == uid;
            }
          }
        }
        """

    @Test func downloadTokensWorkWithoutAuthorizationUntilRotated() async throws {
        let logs = LogCapture()
        let rules = try RulesHTTPTests.writeRules(Self.closedRules)
        try await TestServer.with(configure: {
            $0.rulesFile = rules
            $0.requestLogLevel = .warning
            $0.logHandlerFactory = logs.factory
        }) { _, client in
            let put = try await Self.put(client, "shared/photo.png", Self.hundred, type: "image/png")
            let token = try #require(put.json?["downloadToken"]?.stringValue)
            let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(try await client.get("/v1/files/shared/photo.png", as: .nobody).status == 403)
            let link = "/v1/files/shared/photo.png?token=\(encoded)"
            let byLink = try await client.get(link, as: .nobody)
            #expect(byLink.status == 200, "\(byLink.text)")
            #expect(byLink.body == Self.hundred)
            #expect(try await client.request(.head, link, as: .nobody).status == 200)
            #expect(try await client.get(link, headers: ["Range": "bytes=0-1"], as: .nobody).body == [0, 1])
            let attachment = try await client.get(link + "&download=1", as: .nobody)
            #expect(attachment.header("Content-Disposition") == "attachment; filename=\"photo.png\"; filename*=UTF-8''photo.png")
            #expect(try await client.get("/v1/files/shared/photo.png?token=hdt_wrong", as: .nobody).status == 403)

            let rotated = try await client.patch("/v1/files/shared/photo.png", #"{"downloadToken": "rotate"}"#)
            #expect(rotated.status == 200)
            let fresh = try #require(rotated.json?["downloadToken"]?.stringValue)
            #expect(fresh != token)
            #expect(try await client.get(link, as: .nobody).status == 403, "the old link stops working")
            let freshLink = "/v1/files/shared/photo.png?token=\(fresh.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
            #expect(try await client.get(freshLink, as: .nobody).status == 200)
            #expect(try await client.delete("/v1/files/shared/photo.png").status == 204)
            #expect(try await client.get(freshLink, as: .nobody).status == 403, "no object: the rules decide, and deny")

            // The request log names the requests, never the tokens.
            #expect(logs.text.contains("token=<redacted>"), "\(logs.text.suffix(2000))")
            #expect(!logs.text.contains(token) && !logs.text.contains(encoded))
            #expect(!logs.text.contains(fresh))
        }
    }

    @Test func storageRulesDecideAUsersCalls() async throws {
        let rules = try RulesHTTPTests.writeRules(Self.closedRules)
        try await TestServer.with(configure: { $0.rulesFile = rules; $0.useTestAccounts() }) { server, admin in
            let ann = try await admin.signedUp("ann@example.com", "correct horse battery")
            let bob = try await admin.signedUp("bob@example.com", "correct horse battery")
            let mine = "users/\(ann.uid)/a.png"
            let cases: [(String, String, [UInt8], String?, Caller, Int)] = [
                ("PUT", mine, [1, 2, 3], "image/png", .token(ann.token), 201),
                ("PUT", mine, [1, 2, 3, 4], "image/png", .token(ann.token), 200),
                ("PUT", "users/\(ann.uid)/b.txt", [1], "text/plain", .token(ann.token), 403),
                ("PUT", "users/\(ann.uid)/big.png", Array(repeating: 0, count: 2_000), "image/png", .token(ann.token), 403),
                ("PUT", mine, [1], "image/png", .token(bob.token), 403),
                ("PUT", mine, [1], "image/png", .nobody, 403),
                ("GET", mine, [], nil, .token(bob.token), 200),
                ("GET", mine, [], nil, .nobody, 403),
                ("GET", "users/\(ann.uid)/missing.png", [], nil, .token(bob.token), 404),
                ("LIST", "users/\(ann.uid)/", [], nil, .token(bob.token), 200),
                ("LIST", "users/\(ann.uid)/", [], nil, .nobody, 403),
                ("LIST", "", [], nil, .token(ann.token), 403),
                ("PATCH", mine, [], nil, .token(bob.token), 403),
                ("PATCH", mine, [], nil, .token(ann.token), 200),
                ("DELETE", mine, [], nil, .token(bob.token), 403),
                ("DELETE", mine, [], nil, .token(ann.token), 204),
            ]
            let client = server.client(as: .nobody)
            defer { Task { await client.close() } }
            for (method, path, bytes, type, caller, status) in cases {
                let r: HTTPResult
                switch method {
                case "PUT": r = try await Self.put(client, path, bytes, type: type, as: caller)
                case "LIST": r = try await client.get("/v1/files?prefix=\(path)&delimiter=/", as: caller)
                case "PATCH": r = try await client.patch("/v1/files/\(path)", #"{"contentType": "image/jpeg"}"#, as: caller)
                default: r = try await client.request(.init(method)!, "/v1/files/\(path)", as: caller)
                }
                #expect(r.status == status, "\(method) \(path): \(r.text)")
                if status == 403 { #expect(r.errorCode == "permission-denied") }
            }
            #expect(try await client.get("/v1/files/users/\(ann.uid)/b.txt", as: .admin).status == 404, "a denied put stores nothing")
        }
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        let method: String
        let uri: String
        var headers: [String: String] = [:]
        var body: String? = nil
        let status: Int
        /// Words the error message must hold.
        let mentions: String
        var testDescription: String { "\(method) \(uri) \(headers) → \(status)" }
    }

    static let badInput: [BadCase] = [
        BadCase(method: "PUT", uri: "/v1/files/a//b", status: 400, mentions: "empty segment (segment 2"),
        BadCase(method: "PUT", uri: "/v1/files/", status: 400, mentions: "file path is empty"),
        BadCase(method: "DELETE", uri: "/v1/files", status: 400, mentions: "file path is empty"),
        BadCase(method: "PUT", uri: "/v1/files/a/%2E%2E/b", status: 400, mentions: "'..' segment (segment 2"),
        BadCase(method: "GET", uri: "/v1/files/a/./b", status: 400, mentions: "'.' segment (segment 2"),
        BadCase(method: "PUT", uri: "/v1/files/a/b%01", status: 400, mentions: "control character"),
        BadCase(method: "PUT", uri: "/v1/files/a/%zz", status: 400, mentions: "percent-encoded"),
        BadCase(method: "PUT", uri: "/v1/files/a/" + String(repeating: "x", count: 1_100), status: 400, mentions: "1024"),
        BadCase(method: "PUT", uri: "/v1/files/a/b", headers: ["X-Hearth-SHA256": "xyz"], status: 400, mentions: "X-Hearth-SHA256"),
        BadCase(method: "PUT", uri: "/v1/files/a/b", headers: ["X-Hearth-SHA256": String(repeating: "0", count: 64)], status: 400,
                mentions: "SHA-256"),
        BadCase(method: "PUT", uri: "/v1/files/a/b", headers: ["If-Match": "*"], status: 400, mentions: "If-Match"),
        BadCase(method: "PUT", uri: "/v1/files/a/b", headers: ["If-None-Match": "\"x\""], status: 400, mentions: "If-None-Match"),
        BadCase(method: "PUT", uri: "/v1/files/a/b", headers: ["Content-Type": "text/" + String(repeating: "x", count: 300)], status: 400,
                mentions: "contentType must be 1 to 256"),
        BadCase(method: "PUT", uri: "/v1/files/a/b?x=1", status: 400, mentions: "unknown query parameter 'x'"),
        BadCase(method: "GET", uri: "/v1/files/a/b?alt=xml", status: 400, mentions: "alt"),
        BadCase(method: "GET", uri: "/v1/files/a/b?download=yes", status: 400, mentions: "download"),
        BadCase(method: "PATCH", uri: "/v1/files/a/b", body: #"{"size": 3}"#, status: 400, mentions: "unknown field 'size'"),
        BadCase(method: "PATCH", uri: "/v1/files/a/b", body: #"{"metadata": {"k": 1}}"#, status: 400, mentions: "metadata.k"),
        BadCase(method: "PATCH", uri: "/v1/files/a/b", body: #"{"downloadToken": "keep"}"#, status: 400, mentions: "rotate"),
        BadCase(method: "DELETE", uri: "/v1/files/a/b", headers: ["If-None-Match": "*"], status: 400, mentions: "If-None-Match"),
        BadCase(method: "GET", uri: "/v1/files?pageSize=1001", status: 400, mentions: "pageSize"),
        BadCase(method: "GET", uri: "/v1/files?pageToken=%21%21", status: 400, mentions: "pageToken"),
    ]

    @Test func badInputIsRefusedAndChangesNothing() async throws {
        try await TestServer.with { server, client in
            #expect(try await Self.put(client, "a/b", [1, 2]).status == 201)
            for c in Self.badInput {
                let raw = try RawHTTPConnection(port: server.port, timeout: 30)
                let body = Array((c.body ?? (c.method == "PUT" ? "new" : "")).utf8)
                var head = "\(c.method) \(c.uri) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                if c.body != nil { head += "Content-Type: application/json\r\n" }
                for (name, value) in c.headers { head += "\(name): \(value)\r\n" }
                head += "Content-Length: \(body.count)\r\n\r\n"
                try await raw.send(bytes: Array(head.utf8) + body)
                let r = try await raw.readResponse()
                #expect(r.status == c.status, "\(c.testDescription): \(r.text)")
                #expect(r.errorMessage?.contains(c.mentions) == true, "\(c.testDescription): \(r.text)")
            }
            // A new connection: the first may have been idle past its timeout on a busy machine.
            let after = server.client()
            defer { Task { await after.close() } }
            let file = try await after.get("/v1/files/a/b")
            #expect(file.body == [1, 2])
            #expect(file.header("Content-Type") == "application/octet-stream")
            #expect(Self.paths(try await after.get("/v1/files?prefix=a").json) == ["a/b"])
        }
    }
}

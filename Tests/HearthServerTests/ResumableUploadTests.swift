import Foundation
import HearthCore
import HearthEngine
import HearthServer
import HearthTesting
import HTTPTypes
import Testing

/// Resumable uploads (`/v1/uploads`, tus 1.0.0) end to end: tuspy, the tus project's Python client, uploads
/// in chunks, is interrupted and goes on (also across a `kill -9` of the server), and is refused by the
/// rules before any byte is sent; raw HTTP drives each bad input to its documented status, changing nothing.
@Suite struct ResumableUploadTests {
    /// `count` bytes that are not all alike, in a file of the test's own.
    static func sourceFile(_ count: Int, seed: UInt8 = 7) throws -> (path: String, bytes: [UInt8]) {
        var state = UInt32(seed) | 0x9E37_0000
        let bytes = (0..<count).map { _ -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        let path = TestFolders.make() + "/source.bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    /// Files left under the data folder's `files/uploads/`.
    static func uploadFiles(_ dataDirectory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dataDirectory + "/files/uploads")) ?? []).sorted()
    }

    /// The path of an upload URL (tuspy gives it absolute).
    static func uploadPath(_ url: String) -> String {
        URLComponents(string: url)?.path ?? url
    }

    static let tus = ["Tus-Resumable": "1.0.0"]

    @Test func tuspyUploadsInChunksWithChecksums() async throws {
        try await TestServer.with { server, client in
            let (file, bytes) = try Self.sourceFile(300 * 1024 + 17)
            let tus = TusPeerClient(port: server.port, token: server.adminKey)
            let done = try await tus.upload(file: file, path: "media/clips/one.bin", contentType: "video/mp4",
                                            metadata: ["owner": "ann"], chunkSize: 64 * 1024, checksum: true)
            #expect(done.error == nil, "\(done.error ?? "")")
            #expect(done.offset == Int64(bytes.count))
            let got = try await client.get("/v1/files/media/clips/one.bin")
            #expect(got.status == 200)
            #expect(got.body == bytes)
            #expect(got.header("Content-Type") == "video/mp4")
            let meta = try #require(try await client.get("/v1/files/media/clips/one.bin?alt=json").json)
            #expect(meta["sha256"]?.stringValue == done.sha256)
            #expect(meta["size"] == .int(Int64(bytes.count)))
            #expect(meta["metadata"] == .object([("owner", .string("ann"))]))
            // The finished upload is gone: its URL answers 404, and no bytes of it are left.
            let url = try #require(done.url)
            #expect(try await client.request(.head, Self.uploadPath(url), headers: Self.tus).status == 404)
            #expect(Self.uploadFiles(server.dataDirectory) == [])
        }
    }

    @Test func tuspyGoesOnWithAnInterruptedUpload() async throws {
        try await TestServer.with { server, client in
            let (file, bytes) = try Self.sourceFile(200 * 1024, seed: 3)
            let tus = TusPeerClient(port: server.port, token: server.adminKey)
            let first = try await tus.upload(file: file, path: "media/two.bin", chunkSize: 32 * 1024, stopAt: 96 * 1024)
            #expect(first.offset == Int64(96 * 1024), "\(first.error ?? "")")
            let url = try #require(first.url)
            let head = try await client.request(.head, Self.uploadPath(url), headers: Self.tus)
            #expect(head.status == 200)
            #expect(head.header("Upload-Offset") == "\(96 * 1024)")
            #expect(head.header("Upload-Length") == "\(200 * 1024)")
            #expect(head.header("Tus-Resumable") == "1.0.0")
            #expect(head.header("Cache-Control") == "no-store")
            #expect(try await client.get("/v1/files/media/two.bin").status == 404, "nothing is visible before the last byte")

            let rest = try await tus.upload(file: file, chunkSize: 32 * 1024, url: url)
            #expect(rest.offset == Int64(bytes.count), "\(rest.error ?? "")")
            #expect(try await client.get("/v1/files/media/two.bin").body == bytes)
        }
    }

    @Test func tuspyGoesOnAfterTheServerIsKilledMidRequest() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (file, bytes) = try Self.sourceFile(3 << 20, seed: 11)
        let adminKey = "test-admin-key-" + UUID().uuidString
        let first = try await ServerProcess.start(dataDirectory: folder, adminKey: adminKey)
        defer { first.signal(SIGKILL) }
        let before = try await TusPeerClient(port: first.port, token: adminKey)
            .upload(file: file, path: "media/three.bin", chunkSize: 64 * 1024, stopAt: 128 * 1024, checksum: true)
        #expect(before.offset == Int64(128 * 1024), "\(before.error ?? "")")
        let url = try #require(before.url)
        let path = Self.uploadPath(url)
        let part = "\(folder)/files/uploads/\(path.dropFirst("/v1/uploads/".count)).part"

        // A PATCH of 2 MiB in flight: once some of its bytes reach the part file (written, never counted),
        // the server is killed.
        let raw = try RawHTTPConnection(port: first.port)
        try await raw.send("PATCH \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(adminKey)\r\n"
            + "Tus-Resumable: 1.0.0\r\nUpload-Offset: \(128 * 1024)\r\nContent-Type: application/offset+octet-stream\r\n"
            + "Content-Length: \(2 << 20)\r\n\r\n")
        try await raw.send(bytes: Array(bytes[(128 * 1024)..<(128 * 1024 + (3 << 19))]))
        var written = false
        for _ in 0..<3_000 where !written {
            let size = (try? FileManager.default.attributesOfItem(atPath: part)[.size] as? Int) ?? 0
            written = size > 128 * 1024
            if !written { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(written, "the in-flight bytes reached the part file")
        first.signal(SIGKILL)
        _ = try await first.waitForExit()
        raw.disconnect()

        let second = try await ServerProcess.start(dataDirectory: folder, adminKey: adminKey)
        defer { second.signal(SIGKILL) }
        let client = second.client()
        let head = try await client.request(.head, path, headers: Self.tus)
        #expect(head.header("Upload-Offset") == "\(128 * 1024)", "only counted, synced bytes survive kill -9")
        // The new server's port differs: the upload is named by its path.
        let after = try await TusPeerClient(port: second.port, token: adminKey)
            .upload(file: file, chunkSize: 512 * 1024, url: "http://127.0.0.1:\(second.port)" + path, checksum: true)
        #expect(after.offset == Int64(bytes.count), "\(after.error ?? "")")
        let got = try await client.get("/v1/files/media/three.bin")
        #expect(got.body == bytes)
        #expect(try await client.get("/v1/files/media/three.bin?alt=json").json?["sha256"]?.stringValue == after.sha256)
        await client.close()
        second.signal(SIGTERM)
        _ = try await second.waitForExit()
    }

    @Test func aLargeUploadGoesThroughInBoundedMemory() async throws {
        // Megabytes made and sent: on threads of their own, not the ones the other tests' tasks need.
        try await HeavyWork.run {
            let dir = TestFolders.make()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let server = try await ServerProcess.start(dataDirectory: dir)
            defer { server.signal(SIGKILL) }
            let size = FileMemoryTests.size, chunkSize = FileMemoryTests.chunkSize
            let client = server.client()
            // Warm up: an upload's calls run once before the baseline.
            let warm = try await client.request(.post, "/v1/uploads", body: FileMemoryTests.chunk(0), contentType: Self.offsetType,
                                                headers: Self.tus.merging(["Upload-Length": "\(chunkSize)",
                                                                           "Upload-Metadata": "path \(Base64.encode(Array("warm".utf8)))"]) { $1 })
            #expect(warm.status == 201, "\(warm.text)")
            let created = try await client.request(.post, "/v1/uploads", headers: Self.tus.merging(
                ["Upload-Length": "\(size)", "Upload-Metadata": "path \(Base64.encode(Array("big".utf8)))"]) { $1 })
            let path = try #require(created.header("Location"))
            let baseline = try server.residentBytes()

            // Two PATCHes of half the object each, sent as a client streams them.
            var peak = baseline
            for half in 0..<2 {
                let raw = try RawHTTPConnection(port: server.port, timeout: 120)
                try await raw.send("PATCH \(path) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                                   + "Tus-Resumable: 1.0.0\r\nUpload-Offset: \(half * size / 2)\r\n"
                                   + "Content-Type: \(Self.offsetType)\r\nContent-Length: \(size / 2)\r\n\r\n")
                for index in (half * size / 2 / chunkSize)..<((half + 1) * size / 2 / chunkSize) {
                    try await raw.send(bytes: FileMemoryTests.chunk(index))
                    if index % 8 == 0 { peak = max(peak, try server.residentBytes()) }
                }
                let r = try await raw.readResponse()
                #expect(r.status == 204, "\(r.text)")
                #expect(r.header("Upload-Offset") == "\((half + 1) * size / 2)")
                peak = max(peak, try server.residentBytes())
            }
            let meta = try await client.get("/v1/files/big?alt=json")
            #expect(meta.json?["size"] == .int(Int64(size)), "\(meta.text)")
            await client.close()
            let growth = peak - baseline
            #expect(growth < 16 << 20, "RSS grew by \(growth >> 20) MiB (from \(baseline >> 20) MiB) for a \(size >> 20) MiB upload")
            server.signal(SIGTERM)
            _ = try await server.waitForExit()
        }
    }

    static let rules = """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /users/{uid}/{path=**} {
              allow read: if request.auth != null;
              allow write: if request.auth.uid == uid
                           && request.resource.size < 100 * 1024
                           && request.resource.contentType.matches('image/.*');
            }
          }
        }
        """

    @Test func rulesRefuseAnUploadBeforeAnyByteIsSent() async throws {
        let rules = try RulesHTTPTests.writeRules(Self.rules)
        try await TestServer.with(configure: { $0.rulesFile = rules; $0.useTestAccounts() }) { server, admin in
            let ann = try await admin.signedUp("ann@example.com", "correct horse battery")
            let (small, smallBytes) = try Self.sourceFile(20 * 1024)
            let (large, _) = try Self.sourceFile(150 * 1024)
            let tus = TusPeerClient(port: server.port, token: ann.token)
            let cases: [(String, String, String, String?, Int?)] = [
                (small, "users/\(ann.uid)/a.png", "image/png", ann.token, nil),
                (small, "users/\(ann.uid)/b.txt", "text/plain", ann.token, 403),
                (large, "users/\(ann.uid)/c.png", "image/png", ann.token, 403),
                (small, "users/someone-else/d.png", "image/png", ann.token, 403),
                (small, "users/\(ann.uid)/e.png", "image/png", nil, 403),
            ]
            for (file, path, type, token, status) in cases {
                var peer = tus
                peer.token = token
                let result = try await peer.upload(file: file, path: path, contentType: type, chunkSize: 8 * 1024)
                #expect(result.status == status, "\(path): \(result.error ?? "done")")
                let stored = try await admin.get("/v1/files/\(path)")
                #expect(stored.status == (status == nil ? 200 : 404), "\(path)")
                if status == nil { #expect(stored.body == smallBytes) }
            }
            #expect(Self.uploadFiles(server.dataDirectory) == [], "a refused creation leaves nothing")
        }
    }

    // MARK: Bad input

    struct BadCase: Sendable, CustomTestStringConvertible {
        let name: String
        let method: String
        /// `{upload}` is replaced by the URL of an upload of 10 bytes with 4 in.
        let uri: String
        var headers: [String: String]
        var body: [UInt8]? = nil
        var caller: Caller = .admin
        let status: Int
        var testDescription: String { name }
    }

    static let offsetType = "application/offset+octet-stream"
    static let patch = ["Tus-Resumable": "1.0.0", "Content-Type": offsetType]

    static let badCases: [BadCase] = [
        BadCase(name: "wrong offset", method: "PATCH", uri: "{upload}", headers: patch.merging(["Upload-Offset": "2"]) { $1 },
                body: [9, 9], status: 409),
        BadCase(name: "offset not a number", method: "PATCH", uri: "{upload}", headers: patch.merging(["Upload-Offset": "-4"]) { $1 },
                body: [9, 9], status: 400),
        BadCase(name: "bad checksum", method: "PATCH", uri: "{upload}",
                headers: patch.merging(["Upload-Offset": "4", "Upload-Checksum": "sha1 \(Base64.encode([UInt8](repeating: 1, count: 20)))"]) { $1 },
                body: [9, 9], status: 460),
        BadCase(name: "checksum algorithm not served", method: "PATCH", uri: "{upload}",
                headers: patch.merging(["Upload-Offset": "4", "Upload-Checksum": "md5 AAAAAAAAAAAAAAAAAAAAAA=="]) { $1 },
                body: [9, 9], status: 400),
        BadCase(name: "missing Tus-Resumable", method: "PATCH", uri: "{upload}",
                headers: ["Content-Type": offsetType, "Upload-Offset": "4"], body: [9, 9], status: 412),
        BadCase(name: "other Tus-Resumable", method: "PATCH", uri: "{upload}",
                headers: ["Tus-Resumable": "0.2.2", "Content-Type": offsetType, "Upload-Offset": "4"], body: [9, 9], status: 412),
        BadCase(name: "wrong Content-Type", method: "PATCH", uri: "{upload}",
                headers: ["Tus-Resumable": "1.0.0", "Content-Type": "application/octet-stream", "Upload-Offset": "4"],
                body: [9, 9], status: 415),
        BadCase(name: "past Upload-Length", method: "PATCH", uri: "{upload}", headers: patch.merging(["Upload-Offset": "4"]) { $1 },
                body: [UInt8](repeating: 9, count: 7), status: 413),
        BadCase(name: "someone else's upload", method: "PATCH", uri: "{upload}", headers: patch.merging(["Upload-Offset": "4"]) { $1 },
                body: [9, 9], caller: .nobody, status: 403),
        BadCase(name: "someone else's HEAD", method: "HEAD", uri: "{upload}", headers: tus, caller: .nobody, status: 403),
        BadCase(name: "someone else's DELETE", method: "DELETE", uri: "{upload}", headers: tus, caller: .nobody, status: 403),
        BadCase(name: "unknown upload", method: "PATCH", uri: "/v1/uploads/0123456789abcdef0123456789abcdef",
                headers: patch.merging(["Upload-Offset": "0"]) { $1 }, body: [9], status: 404),
        BadCase(name: "malformed id", method: "HEAD", uri: "/v1/uploads/..%2F..%2Fhearth", headers: tus, status: 404),
        BadCase(name: "oversized Upload-Length", method: "POST", uri: "/v1/uploads",
                headers: tus.merging(["Upload-Length": "\(2 << 20)", "Upload-Metadata": "path \(Base64.encode(Array("x/big".utf8)))"]) { $1 },
                status: 413),
        BadCase(name: "no Upload-Length", method: "POST", uri: "/v1/uploads",
                headers: tus.merging(["Upload-Metadata": "path \(Base64.encode(Array("x/a".utf8)))"]) { $1 }, status: 400),
        BadCase(name: "Upload-Defer-Length", method: "POST", uri: "/v1/uploads",
                headers: tus.merging(["Upload-Defer-Length": "1", "Upload-Metadata": "path \(Base64.encode(Array("x/a".utf8)))"]) { $1 },
                status: 400),
        BadCase(name: "no path", method: "POST", uri: "/v1/uploads",
                headers: tus.merging(["Upload-Length": "3", "Upload-Metadata": "contentType \(Base64.encode(Array("a/b".utf8)))"]) { $1 },
                status: 400),
        BadCase(name: "path with ..", method: "POST", uri: "/v1/uploads",
                headers: tus.merging(["Upload-Length": "3", "Upload-Metadata": "path \(Base64.encode(Array("x/../y".utf8)))"]) { $1 },
                status: 400),
        BadCase(name: "metadata not base64", method: "POST", uri: "/v1/uploads",
                headers: tus.merging(["Upload-Length": "3", "Upload-Metadata": "path ***"]) { $1 }, status: 400),
        BadCase(name: "creation body of another type", method: "POST", uri: "/v1/uploads",
                headers: tus.merging(["Upload-Length": "3", "Upload-Metadata": "path \(Base64.encode(Array("x/a".utf8)))",
                                      "Content-Type": "text/plain"]) { $1 }, body: [1, 2, 3], status: 415),
        BadCase(name: "creation without Tus-Resumable", method: "POST", uri: "/v1/uploads",
                headers: ["Upload-Length": "3", "Upload-Metadata": "path \(Base64.encode(Array("x/a".utf8)))"], status: 412),
    ]

    @Test(arguments: badCases) func badInputIsRefusedAndChangesNothing(_ bad: BadCase) async throws {
        try await TestServer.with(configure: { $0.maxFileSize = 1 << 20 }) { server, client in
            let created = try await client.request(.post, "/v1/uploads", body: [1, 2, 3, 4], contentType: Self.offsetType,
                                                   headers: Self.tus.merging(["Upload-Length": "10",
                                                                              "Upload-Metadata": "path \(Base64.encode(Array("x/up.bin".utf8)))"]) { $1 })
            #expect(created.status == 201, "\(created.text)")
            #expect(created.header("Upload-Offset") == "4")
            let upload = try #require(created.header("Location"))
            let uri = bad.uri.replacingOccurrences(of: "{upload}", with: upload)
            let r = try await client.request(.init(bad.method)!, uri, body: bad.body, contentType: nil, headers: bad.headers,
                                             as: bad.caller)
            #expect(r.status == bad.status, "\(bad.name): \(r.text)")
            #expect(r.header("Tus-Resumable") == "1.0.0", "every answer names the protocol")
            if bad.method != "HEAD" { #expect(r.errorCode != nil, "\(bad.name): \(r.text)") }
            if bad.status == 412 { #expect(r.header("Tus-Version") == "1.0.0") }
            // Nothing changed: the upload is where it was, and no object appeared.
            let head = try await client.request(.head, upload, headers: Self.tus)
            #expect(head.status == 200)
            #expect(head.header("Upload-Offset") == "4", "\(bad.name)")
            let listing = try await client.get("/v1/files?prefix=")
            #expect(FileAPITests.paths(listing.json) == [], "\(bad.name)")
            #expect(Self.uploadFiles(server.dataDirectory) == [String(upload.dropFirst("/v1/uploads/".count)) + ".json",
                                                                String(upload.dropFirst("/v1/uploads/".count)) + ".part"].sorted())
        }
    }

    @Test func rawProtocolDiscoveryTerminationAndCompletion() async throws {
        try await TestServer.with(configure: { $0.maxFileSize = 1 << 20 }) { server, client in
            let options = try await client.request(.options, "/v1/uploads", as: .nobody)
            #expect(options.status == 204)
            #expect(options.header("Tus-Version") == "1.0.0")
            #expect(options.header("Tus-Resumable") == "1.0.0")
            #expect(options.header("Tus-Extension") == "creation,creation-with-upload,termination,expiration,checksum")
            #expect(options.header("Tus-Max-Size") == "\(1 << 20)")
            #expect(options.header("Tus-Checksum-Algorithm") == "sha1,sha256")

            let metadata = "path \(Base64.encode(Array("docs/a.txt".utf8))),contentType \(Base64.encode(Array("text/plain".utf8))),flag"
            let created = try await client.request(.post, "/v1/uploads", headers: Self.tus.merging(
                ["Upload-Length": "5", "Upload-Metadata": metadata]) { $1 })
            #expect(created.status == 201, "\(created.text)")
            #expect(created.header("Upload-Offset") == "0")
            #expect(created.header("Upload-Expires")?.hasSuffix(" GMT") == true)
            let upload = try #require(created.header("Location"))
            #expect(upload.hasPrefix("/v1/uploads/") && upload.count == "/v1/uploads/".count + 32)
            let head = try await client.request(.head, upload, headers: Self.tus)
            #expect(head.header("Upload-Metadata")?.contains("path \(Base64.encode(Array("docs/a.txt".utf8)))") == true)

            // sha256 checksum, in two requests; the last makes the object.
            let part1 = try await client.request(.patch, upload, body: Array("hel".utf8), contentType: Self.offsetType,
                                                 headers: Self.tus.merging(["Upload-Offset": "0"]) { $1 })
            #expect(part1.status == 204, "\(part1.text)")
            #expect(part1.header("Upload-Offset") == "3")
            #expect(try await client.get("/v1/files/docs/a.txt").status == 404)
            let digest = try #require(Data(base64Encoded: "kpSrOAOfYNLsU4IvtGtSxmOvfqR49NF79D2kTt5eFmw=")) // sha256("lo")
            let part2 = try await client.request(.patch, upload, body: Array("lo".utf8), contentType: Self.offsetType,
                                                 headers: Self.tus.merging(["Upload-Offset": "3",
                                                                            "Upload-Checksum": "sha256 \(Base64.encode(Array(digest)))"]) { $1 })
            #expect(part2.status == 204, "\(part2.text)")
            #expect(part2.header("Upload-Offset") == "5")
            let got = try await client.get("/v1/files/docs/a.txt")
            #expect(got.text == "hello")
            #expect(got.header("Content-Type") == "text/plain")
            #expect(try await client.get("/v1/files/docs/a.txt?alt=json").json?["metadata"] == .object([("flag", .string(""))]))
            #expect(try await client.request(.head, upload, headers: Self.tus).status == 404, "a finished upload is gone")

            // Termination: the bytes go, and the upload answers 404 after.
            let other = try await client.request(.post, "/v1/uploads", body: [1, 2], contentType: Self.offsetType,
                                                 headers: Self.tus.merging(["Upload-Length": "5", "Upload-Metadata": metadata]) { $1 })
            let second = try #require(other.header("Location"))
            #expect(try await client.request(.delete, second, headers: Self.tus).status == 204)
            #expect(Self.uploadFiles(server.dataDirectory) == [])
            let after = try await client.request(.patch, second, body: [3], contentType: Self.offsetType,
                                                 headers: Self.tus.merging(["Upload-Offset": "2"]) { $1 })
            #expect(after.status == 404)
            #expect(try await client.request(.delete, second, headers: Self.tus).status == 404)

            // An empty upload is finished by its creation.
            let empty = try await client.request(.post, "/v1/uploads", headers: Self.tus.merging(
                ["Upload-Length": "0", "Upload-Metadata": "path \(Base64.encode(Array("docs/empty".utf8)))"]) { $1 })
            #expect(empty.status == 201)
            #expect(try await client.get("/v1/files/docs/empty?alt=json").json?["size"] == .int(0))
            let counted = try await InlineReadTests.requestCounts(server, route: "/v1/uploads/{id}")
            #expect(counted.contains { $0.contains("method=\"PATCH\"") && $0.contains("status=\"204\"") }, "\(counted)")
        }
    }

    @Test func expectContinueIsAnsweredOnlyOnceTheOffsetPasses() async throws {
        try await TestServer.with { server, client in
            let created = try await client.request(.post, "/v1/uploads", headers: Self.tus.merging(
                ["Upload-Length": "6", "Upload-Metadata": "path \(Base64.encode(Array("e/ok".utf8)))"]) { $1 })
            let upload = try #require(created.header("Location"))
            func head(_ offset: Int) -> String {
                "PATCH \(upload) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\nTus-Resumable: 1.0.0\r\n"
                    + "Upload-Offset: \(offset)\r\nContent-Type: \(Self.offsetType)\r\nContent-Length: 6\r\nExpect: 100-continue\r\n\r\n"
            }
            let wrong = try RawHTTPConnection(port: server.port, timeout: 30)
            try await wrong.send(head(3))
            #expect(try await wrong.readResponse().status == 409, "no 100 Continue: the body is not wanted")

            let raw = try RawHTTPConnection(port: server.port, timeout: 30)
            try await raw.send(head(0))
            #expect(try await raw.readResponse().status == 100)
            try await raw.send(bytes: Array("abcdef".utf8))
            let done = try await raw.readResponse()
            #expect(done.status == 204, "\(done.text)")
            #expect(try await client.get("/v1/files/e/ok").text == "abcdef")
        }
    }

    @Test func anExpiredUploadIsRefusedThenSwept() async throws {
        try await TestServer.with(configure: { $0.uploadLifetime = .milliseconds(300) }) { server, client in
            let created = try await client.request(.post, "/v1/uploads", body: [1, 2], contentType: Self.offsetType,
                                                   headers: Self.tus.merging(["Upload-Length": "10",
                                                                              "Upload-Metadata": "path \(Base64.encode(Array("x/late".utf8)))"]) { $1 })
            let upload = try #require(created.header("Location"))
            // Waits past the lifetime (a lower bound, never an assertion on how long anything took).
            try await Task.sleep(for: .milliseconds(600))
            let patch = try await client.request(.patch, upload, body: [3], contentType: Self.offsetType,
                                                 headers: Self.tus.merging(["Upload-Offset": "2"]) { $1 })
            #expect(patch.status == 410, "\(patch.text)")
            #expect(try await client.request(.head, upload, headers: Self.tus).status == 410)
            #expect(try await client.get("/v1/files/x/late").status == 404)
            #expect(Self.uploadFiles(server.dataDirectory).count == 2, "kept until the sweep")
            #expect(try await server.services.database.sweepUploads() == 1)
            #expect(Self.uploadFiles(server.dataDirectory) == [])
            #expect(try await client.request(.head, upload, headers: Self.tus).status == 404)
        }
    }
}

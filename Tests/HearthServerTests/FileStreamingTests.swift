import Foundation
import HearthCore
import HearthServer
import HearthTesting
import HTTPTypes
import Testing

/// `/v1/files` bytes on the wire: a body refused from its header, cut short or abandoned leaves nothing; a
/// large object goes up and down through the server without its memory growing with it; the files routes
/// are the router's, never the event loop's fast path.
@Suite struct FileStreamingTests {
    static func head(_ method: String, _ target: String, _ server: TestServer, _ fields: [String]) -> String {
        "\(method) \(target) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n"
            + fields.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    /// Waits (generously) until the data folder holds no temporary upload.
    static func temporaryFilesCleared(_ server: TestServer) async throws -> [String] {
        let folder = server.dataDirectory + "/files/tmp"
        var left: [String] = []
        for _ in 0..<300 {
            left = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            if left.isEmpty { return [] }
            try await Task.sleep(for: .milliseconds(100))
        }
        return left
    }

    @Test func aContentLengthOverTheLimitIsRefusedBeforeTheBody() async throws {
        try await TestServer.with(configure: { $0.maxFileSize = 1_000 }) { server, client in
            let raw = try RawHTTPConnection(port: server.port, timeout: 30)
            // Only the head: the answer must come without any of the body.
            try await raw.send(Self.head("PUT", "/v1/files/big/one", server, ["Content-Length: 5000000000"]))
            let r = try await raw.readResponse()
            #expect(r.status == 413, "\(r.text)")
            #expect(r.errorCode == "payload-too-large")
            #expect(r.errorMessage?.contains("1000-byte limit") == true, "\(r.text)")
            // At the limit it is stored; a chunked body (no length announced) is refused as it passes the limit.
            #expect(try await FileAPITests.put(client, "big/fits", Array(repeating: 7, count: 1_000)).status == 201)
            let chunked = try RawHTTPConnection(port: server.port, timeout: 30)
            let piece = String(repeating: "x", count: 600)
            try await chunked.send(Self.head("PUT", "/v1/files/big/chunked", server, ["Transfer-Encoding: chunked"])
                                   + "258\r\n\(piece)\r\n258\r\n\(piece)\r\n0\r\n\r\n")
            let refused = try await chunked.readResponse()
            #expect(refused.status == 413, "\(refused.text)")
            #expect(try await client.get("/v1/files/big/chunked").status == 404)
            #expect(try await client.get("/v1/files/big/one").status == 404)
            #expect(try await Self.temporaryFilesCleared(server) == [])
        }
    }

    @Test func expectContinueIsAnsweredOnlyWhenTheHeadPasses() async throws {
        try await TestServer.with(configure: { $0.maxFileSize = 1_000 }) { server, client in
            let raw = try RawHTTPConnection(port: server.port, timeout: 30)
            try await raw.send(Self.head("PUT", "/v1/files/e/ok", server, ["Content-Length: 3", "Expect: 100-continue"]))
            let interim = try await raw.readResponse()
            #expect(interim.status == 100)
            try await raw.send(bytes: [1, 2, 3])
            let created = try await raw.readResponse()
            #expect(created.status == 201, "\(created.text)")
            #expect(try await client.get("/v1/files/e/ok").body == [1, 2, 3])

            let refused = try RawHTTPConnection(port: server.port, timeout: 30)
            try await refused.send(Self.head("PUT", "/v1/files/e/big", server, ["Content-Length: 5000", "Expect: 100-continue"]))
            let answer = try await refused.readResponse()
            #expect(answer.status == 413, "no 100 Continue: the body is not wanted")
        }
    }

    struct Cut: Sendable, CustomTestStringConvertible {
        let name: String
        /// Closes both ways (a client gone), or only the sending half (a body that ends early).
        let disconnect: Bool
        var testDescription: String { name }
    }

    @Test(arguments: [Cut(name: "a body shorter than announced", disconnect: false),
                      Cut(name: "a client gone mid-upload", disconnect: true)])
    func anUploadCutShortLeavesNothing(cut: Cut) async throws {
        try await TestServer.with { server, client in
            #expect(try await FileAPITests.put(client, "cut/x", [1, 2, 3]).status == 201)
            let raw = try RawHTTPConnection(port: server.port, timeout: 30)
            try await raw.send(bytes: Array(Self.head("PUT", "/v1/files/cut/x", server, ["Content-Length: 1000000"]).utf8)
                               + Array(repeating: 9, count: 300_000))
            if cut.disconnect { raw.disconnect() } else { raw.finishSending() }
            #expect(try await Self.temporaryFilesCleared(server) == [])
            #expect(try await client.get("/v1/files/cut/x").body == [1, 2, 3], "the old object stays whole")
            #expect(try await FileAPITests.put(client, "cut/x", [4]).status == 200, "the server carries on")
        }
    }

    @Test func theFilesRoutesAreTheRoutersNotTheFastPaths() async throws {
        try await TestServer.with(configure: { $0.inlineAnswers = true }) { server, client in
            #expect(try await FileAPITests.put(client, "f/a", [1], type: "application/json").status == 201)
            #expect(try await client.get("/v1/files/f/a").status == 200)
            #expect(try await client.patch("/v1/files/f/a", "{}").status == 200)
            #expect(try await client.delete("/v1/files/f/a").status == 204)
            for name in ["hearth_inline_reads_total", "hearth_inline_writes_total"] {
                #expect(try await InlineReadTests.metric(name, server) ?? 0 == 0, "\(name)")
            }
            let counted = try await InlineReadTests.requestCounts(server, route: "/v1/files/**")
            #expect(counted.contains { $0.contains("method=\"PUT\"") && $0.contains("status=\"201\"") }, "\(counted)")
            #expect(counted.contains { $0.contains("method=\"GET\"") && $0.contains("status=\"200\"") }, "\(counted)")
        }
    }
}

/// A 64 MiB object up and down through a real `hearth serve`: its resident memory grows by far less.
@Suite(.serialized) struct FileMemoryTests {
    static let size = 64 << 20
    static let chunkSize = 1 << 20
    static let base: [UInt8] = (0..<chunkSize).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }

    /// Chunk `index` of the object: a pattern that starts with its index, so a lost, repeated or reordered
    /// chunk shows.
    static func chunk(_ index: Int) -> [UInt8] {
        var bytes = base
        withUnsafeBytes(of: UInt64(index).littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        return bytes
    }

    @Test func aLargeObjectStreamsThroughTheServer() async throws {
        // Megabytes made and compared: on threads of their own, not the ones the other tests' tasks need.
        try await HeavyWork.run {
            let dir = TestFolders.make()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let server = try await ServerProcess.start(dataDirectory: dir)
            let client = server.client()
            // Warm up: the paths of a put and a get run once before the baseline.
            #expect(try await client.request(.put, "/v1/files/warm", body: Self.chunk(0), contentType: nil).status == 201)
            #expect(try await client.get("/v1/files/warm").body.count == Self.chunkSize)
            await client.close()
            let baseline = try server.residentBytes()

            let raw = try RawHTTPConnection(port: server.port, timeout: 120)
            try await raw.send("PUT /v1/files/big HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                               + "Content-Length: \(Self.size)\r\n\r\n")
            var peak = baseline
            for index in 0..<(Self.size / Self.chunkSize) {
                try await raw.send(bytes: Self.chunk(index))
                if index % 8 == 0 { peak = max(peak, try server.residentBytes()) }
            }
            let put = try await raw.readResponse()
            #expect(put.status == 201, "\(put.text)")
            #expect(put.json?["size"] == .int(Int64(Self.size)))
            peak = max(peak, try server.residentBytes())

            let download = try RawHTTPConnection(port: server.port, timeout: 120, receiveBuffer: 256 * 1024)
            try await download.send("GET /v1/files/big HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(server.adminKey)\r\n\r\n")
            let got = try await download.readResponse()
            peak = max(peak, try server.residentBytes())
            #expect(got.status == 200)
            #expect(got.body.count == Self.size)
            if got.body.count == Self.size {
                let wrong = (0..<(Self.size / Self.chunkSize)).first { index in
                    let expected = Self.chunk(index)
                    return got.body.withUnsafeBytes { all in
                        expected.withUnsafeBytes { memcmp(all.baseAddress! + index * Self.chunkSize, $0.baseAddress!, Self.chunkSize) != 0 }
                    }
                }
                #expect(wrong == nil, "chunk \(wrong ?? -1) came back changed")
            }

            let growth = peak - baseline
            #expect(growth < 16 << 20, "RSS grew by \(growth >> 20) MiB (from \(baseline >> 20) MiB) for a \(Self.size >> 20) MiB object")
            server.signal(SIGTERM)
            _ = try await server.waitForExit()
        }
    }
}

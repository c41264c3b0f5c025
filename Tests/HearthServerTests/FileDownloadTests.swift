import Foundation
import HearthCore
import HearthTesting
import Testing

/// Downloads as real clients get them from `hearth serve`, over plain HTTP (where the bytes leave the file by
/// `sendfile`) and over HTTPS (where they are read in chunks), alike: whole objects, ranges, HEAD, conditional
/// requests, download links and kept thumbnails. No descriptor outlives its answer, however it ends; an object
/// replaced and its bytes removed mid-download still arrives whole, as it was.
@Suite(.serialized) struct FileDownloadTests {
    enum Transport: String, CaseIterable, Sendable {
        case http, https
    }

    /// A server over a fresh folder, with TLS for `https`.
    struct Served {
        let server: ServerProcess
        let folder: String
        let certificate: String?
        let base: String

        static func start(_ transport: Transport) async throws -> Served {
            let folder = TestFolders.make()
            var arguments: [String] = []
            var certificate: String?
            if transport == .https {
                let pair = try await TestCertificate.make(in: folder)
                arguments = ["--tls-cert", pair.certificate, "--tls-key", pair.key]
                certificate = pair.certificate
            }
            let server = try await ServerProcess.start(dataDirectory: folder + "/data", arguments: arguments)
            return Served(server: server, folder: folder, certificate: certificate,
                          base: "\(transport.rawValue)://127.0.0.1:\(server.port)")
        }

        func request(_ method: String, _ uri: String, headers: [String: String] = [:], body: [UInt8]? = nil,
                     authorized: Bool = true) async throws -> HTTPResult {
            var headers = headers
            if authorized { headers["Authorization"] = "Bearer \(server.adminKey)" }
            return try await Curl.request(method, base + uri, headers: headers, body: body, trusting: certificate)
        }

        /// Stores an object; answers its metadata.
        func put(_ path: String, _ bytes: [UInt8], type: String = "application/octet-stream") async throws -> JSON {
            let put = try await request("PUT", "/v1/files/" + path, headers: ["Content-Type": type], body: bytes)
            #expect(put.status == 201 || put.status == 200, "\(put.text)")
            return try #require(put.json)
        }

        /// Runs `tls_client.py download` on `path` (see the script), creating READY and then GO in `folder`.
        func download(_ path: String, go: String) async throws -> CommandResult {
            try await TLSClient.run("download", port: server.port, trusting: certificate ?? "-",
                                    [server.adminKey, path, folder + "/ready", go])
        }

        func stop() async throws {
            server.signal(SIGTERM)
            _ = try await server.waitForExit()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// Bytes that say where they came from: no two 4-byte words alike for the first 4 GiB.
    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { i in UInt8(truncatingIfNeeded: (i >> (8 * (i % 4))) &+ i / 251) }
    }

    static let hundred = (0..<100).map { UInt8($0) }
    /// Several chunks of a chunked read, and not a whole number of them.
    static let big = pattern(5 << 20 + 17)
    static let photo = TestImages.make(.jpeg, width: 400, height: 300)

    struct DownloadCase: Sendable, CustomTestStringConvertible {
        let name: String
        var method = "GET"
        let object: String
        var query = ""
        /// `{etag}` stands for the object's ETag.
        var headers: [String: String] = [:]
        var authorized = true
        let status: Int
        /// The object's bytes the answer carries (a HEAD: announces); nil for none.
        let bytes: Range<Int>?
        var testDescription: String { name }
    }

    static let cases: [DownloadCase] = [
        DownloadCase(name: "a small object whole", object: "hundred", status: 200, bytes: 0..<100),
        DownloadCase(name: "a large object whole", object: "big", status: 200, bytes: 0..<big.count),
        DownloadCase(name: "a range across chunks", object: "big", headers: ["Range": "bytes=1048570-3145730"], status: 206,
                     bytes: 1_048_570..<3_145_731),
        DownloadCase(name: "the last bytes", object: "big", headers: ["Range": "bytes=-10"], status: 206, bytes: (big.count - 10)..<big.count),
        DownloadCase(name: "a range from an offset", object: "hundred", headers: ["Range": "bytes=95-"], status: 206, bytes: 95..<100),
        DownloadCase(name: "a range past the end", object: "big", headers: ["Range": "bytes=99999999-"], status: 416, bytes: nil),
        DownloadCase(name: "HEAD", method: "HEAD", object: "big", status: 200, bytes: 0..<big.count),
        DownloadCase(name: "HEAD of a range", method: "HEAD", object: "big", headers: ["Range": "bytes=0-9"], status: 206, bytes: 0..<10),
        DownloadCase(name: "If-None-Match the current ETag", object: "big", headers: ["If-None-Match": "\"{etag}\""], status: 304, bytes: nil),
        DownloadCase(name: "If-Match another ETag", object: "big", headers: ["If-Match": "\"other\""], status: 412, bytes: nil),
        DownloadCase(name: "If-Range the current ETag", object: "big", headers: ["Range": "bytes=10-19", "If-Range": "\"{etag}\""],
                     status: 206, bytes: 10..<20),
        DownloadCase(name: "a download link", object: "big", query: "?token={token}", authorized: false, status: 200, bytes: 0..<big.count),
        DownloadCase(name: "a range of a download link", object: "hundred", query: "?token={token}", headers: ["Range": "bytes=0-1"],
                     authorized: false, status: 206, bytes: 0..<2),
        DownloadCase(name: "an attachment", object: "hundred", query: "?download=1", status: 200, bytes: 0..<100),
        DownloadCase(name: "a link's attachment", object: "big", query: "?token={token}&download=1", authorized: false, status: 200,
                     bytes: 0..<big.count),
    ]

    @Test(arguments: Transport.allCases)
    func downloadsAreServedAlikeOverEitherTransport(_ transport: Transport) async throws {
        let served = try await Served.start(transport)
        var stored: [String: ([UInt8], JSON)] = [:]
        for (name, bytes) in [("hundred", Self.hundred), ("big", Self.big)] {
            stored[name] = (bytes, try await served.put("d/" + name, bytes))
        }
        for c in Self.cases {
            let (bytes, json) = try #require(stored[c.object])
            let etag = try #require(json["etag"]?.stringValue)
            let token = try #require(json["downloadToken"]?.stringValue).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let headers = c.headers.mapValues { $0.replacingOccurrences(of: "{etag}", with: etag) }
            let r = try await served.request(c.method, "/v1/files/d/\(c.object)" + c.query.replacingOccurrences(of: "{token}", with: token),
                                             headers: headers, authorized: c.authorized)
            #expect(r.status == c.status, "\(transport) \(c.name): \(r.text.prefix(300))")
            if let range = c.bytes {
                #expect(r.header("Content-Length") == String(range.count), "\(transport) \(c.name)")
                let expected = c.method == "HEAD" ? [] : Array(bytes[range])
                #expect(r.body.count == expected.count && r.body == expected, "\(transport) \(c.name): \(r.body.count) bytes")
                if c.status == 206 {
                    #expect(r.header("Content-Range") == "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(bytes.count)", "\(transport) \(c.name)")
                }
            } else if c.status != 304 {
                #expect(r.json?["error"] != nil, "\(transport) \(c.name): \(r.text.prefix(300))")
            } else {
                #expect(r.body.isEmpty, "\(transport) \(c.name)")
            }
        }

        // A thumbnail is made once, kept, and served from the kept copy like any download.
        _ = try await served.put("d/photo.jpg", Self.photo, type: "image/jpeg")
        let made = try await served.request("GET", "/v1/files/d/photo.jpg?thumb=100x100")
        #expect(made.status == 200, "\(transport): \(made.text.prefix(300))")
        #expect(made.header("Content-Type") == "image/jpeg")
        #expect(made.body.starts(with: [0xFF, 0xD8, 0xFF]) && made.header("Content-Length") == String(made.body.count))
        let kept = try await served.request("GET", "/v1/files/d/photo.jpg?thumb=100x100")
        #expect(kept.status == 200 && kept.body == made.body && kept.header("ETag") == made.header("ETag"))
        let part = try await served.request("GET", "/v1/files/d/photo.jpg?thumb=100x100", headers: ["Range": "bytes=2-5"])
        #expect(part.status == 206 && part.body == Array(made.body[2..<6]))
        let headOnly = try await served.request("HEAD", "/v1/files/d/photo.jpg?thumb=100x100")
        #expect(headOnly.status == 200 && headOnly.body.isEmpty && headOnly.header("Content-Length") == String(made.body.count))
        try await served.stop()
    }

    /// The server's open descriptors once `settled` holds for their count, or after a generous wait (a
    /// connection's descriptor closes when its end is read).
    static func descriptors(_ server: ServerProcess, settled: (_ count: Int, _ previous: Int) -> Bool) async throws -> [String] {
        var previous = -1
        var open = try server.openDescriptors()
        for _ in 0..<200 where !settled(open.count, previous) {
            try await Task.sleep(for: .milliseconds(50))
            previous = open.count
            open = try server.openDescriptors()
        }
        return open
    }

    @Test(arguments: Transport.allCases)
    func noDescriptorOutlivesItsAnswer(_ transport: Transport) async throws {
        let served = try await Served.start(transport)
        let blobs = served.folder + "/data/files/"
        // Larger than the sockets between server and client hold: the abandoned download is under way.
        _ = try await served.put("d/large", Self.pattern(32 << 20))
        _ = try await served.put("d/small", Self.hundred)
        // Every kind of answer once, so what the server opens for good (threads, pools) is open before counting.
        let answers: [(String, [String: String], Int)] = [
            ("GET", [:], 200), ("HEAD", [:], 200), ("GET", ["If-None-Match": "*"], 304), ("GET", ["Range": "bytes=999999999-"], 416),
            ("GET", ["Range": "bytes=1-2"], 206),
        ]
        for (method, headers, status) in answers {
            #expect(try await served.request(method, "/v1/files/d/small", headers: headers).status == status, "\(method) \(headers)")
        }
        let before = try await Self.descriptors(served.server) { count, previous in count == previous }.count

        let abandoned = try await served.download("/v1/files/d/large", go: "abandon")
        #expect(abandoned.output.hasPrefix("200 abandoned"), "\(abandoned.output) \(abandoned.errorOutput)")
        for (method, headers, status) in answers {
            #expect(try await served.request(method, "/v1/files/d/large", headers: headers).status == status, "\(method) \(headers)")
        }
        let after = try await Self.descriptors(served.server) { count, _ in count == before }
        #expect(after.count == before, "\(transport): \(before) descriptors before, \(after.count) after: \(after)")
        #expect(!after.contains { $0.hasPrefix(blobs) }, "\(transport): \(after.filter { $0.hasPrefix(blobs) })")
        try await served.stop()
    }

    @Test(arguments: Transport.allCases)
    func anObjectReplacedMidDownloadArrivesWholeAsItWas(_ transport: Transport) async throws {
        let served = try await Served.start(transport)
        let old = Self.pattern(32 << 20)
        let put = try await served.put("d/moving", old)
        let sha = try #require(put["sha256"]?.stringValue)
        let go = served.folder + "/go"
        async let download = served.download("/v1/files/d/moving", go: go)
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: served.folder + "/ready") {
            try await Task.sleep(for: .milliseconds(50))
        }
        // Replaced, then deleted: no object names the old bytes, and they are removed from the folder.
        _ = try await served.put("d/moving", [1, 2, 3])
        #expect(try await served.request("DELETE", "/v1/files/d/moving").status == 204)
        let blob = served.folder + "/data/files/blobs/\(sha.prefix(2))/\(sha)"
        #expect(!FileManager.default.fileExists(atPath: blob), "the old bytes are no longer stored")
        FileManager.default.createFile(atPath: go, contents: nil)
        let got = try await download
        #expect(got.output.trimmingCharacters(in: .whitespacesAndNewlines) == "200 \(old.count) \(sha)", "\(transport): \(got.output) \(got.errorOutput)")
        try await served.stop()
    }
}

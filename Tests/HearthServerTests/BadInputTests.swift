import HearthCore
import HearthTesting
import HTTPTypes
import Testing

/// Bad requests get the documented error and change nothing. One server holds one document (`col/doc`,
/// `{"v": 1}`); every row of the table is sent to it, must get its status and code (and, when the row names
/// one, a message with that phrase), and must leave that document the only one stored.
@Suite struct BadInputTests {
    /// One bad request and the error it must get.
    struct Row: Sendable, CustomStringConvertible {
        let method: HTTPRequest.Method
        let uri: String
        let body: [UInt8]?
        let contentType: String
        let status: Int
        let code: String
        let phrase: String?
        let sourceLocation: SourceLocation

        init(_ method: HTTPRequest.Method, _ uri: String, _ json: String? = nil, bytes: [UInt8]? = nil,
             contentType: String = "application/json", status: Int = 400, code: String = "invalid-argument",
             saying phrase: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
            self.method = method
            self.uri = uri
            body = bytes ?? json.map { Array($0.utf8) }
            self.contentType = contentType
            self.status = status
            self.code = code
            self.phrase = phrase
            self.sourceLocation = sourceLocation
        }

        var description: String { "\(method) \(uri.prefix(80))" }
    }

    static let malformedJSON = [
        Row(.put, "/v1/docs/col/doc", #"{"v": 2"#),
        Row(.put, "/v1/docs/col/doc", #"{"v": 2} trailing"#),
        Row(.put, "/v1/docs/col/doc", #"{"v": 2, "v": 3}"#),
        Row(.put, "/v1/docs/col/doc", #"[1, 2]"#),
        Row(.put, "/v1/docs/col/doc", #"{"v": 99999999999999999999}"#),
    ]

    static let invalidUTF8 = [
        Row(.put, "/v1/docs/col/doc", bytes: Array(#"{"v": ""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)),
        Row(.put, "/v1/docs/col/doc", #"{"v": "\ud800"}"#),
        Row(.put, "/v1/docs/col/%FF%FE", "{}"),
    ]

    static let pathOnTheWrongRoute = [
        Row(.put, "/v1/docs/col", "{}"),
        Row(.patch, "/v1/docs/col", #"{"a": 1}"#),
        Row(.delete, "/v1/docs/col"),
        Row(.post, "/v1/docs/col/doc", "{}"),
    ]

    static let badPathSegments = [
        Row(.put, "/v1/docs/col//doc", "{}"),
        Row(.put, "/v1/docs/col/..", "{}"),
        Row(.put, "/v1/docs/col/.", "{}"),
        Row(.put, "/v1/docs/col/__x__", "{}"),
        Row(.put, "/v1/docs/__c__/doc", "{}"),
        Row(.put, "/v1/docs/col/a%2Fb", "{}"),
        Row(.put, "/v1/docs/col/doc/", "{}"),
        Row(.post, "/v1/docs/col?id=__id__", "{}"),
        Row(.put, "/v1/docs/col/" + String(repeating: "x", count: 1501), "{}"),
    ]

    /// A NUL would cut the id short wherever it is handled as a C string (SQLite's text among them), so that
    /// `col/a%00b` would land on `col/a`: refused in URL paths and in every JSON path alike.
    static let nulInIDs: [Row] = {
        let nul = "NUL character (U+0000)"
        return [
            Row(.put, "/v1/docs/col/a%00b", #"{"v": 2}"#, saying: nul),
            Row(.put, "/v1/docs/col/%00", #"{"v": 2}"#, saying: nul),
            Row(.put, "/v1/docs/c%00l/doc", #"{"v": 2}"#, saying: nul),
            Row(.patch, "/v1/docs/col/doc%00", #"{"v": 2}"#, saying: nul),
            Row(.delete, "/v1/docs/col/doc%00x", saying: nul),
            Row(.post, "/v1/docs/col%00", #"{"v": 2}"#, saying: nul),
            Row(.post, "/v1/docs/col?id=a%00b", #"{"v": 2}"#, saying: nul),
            Row(.put, "/v1/docs/col/doc/sub%00/x", #"{"v": 2}"#, saying: nul),
            // JSON paths: commits, references in data, queries.
            Row(.post, "/v1/commit", #"{"writes": [{"set": "col/a\u0000b", "data": {"v": 2}}]}"#, saying: nul),
            Row(.post, "/v1/commit", #"{"writes": [{"set": "col/ok", "data": {}}, {"create": "c\u0000l/x", "data": {}}]}"#,
                saying: nul),
            Row(.put, "/v1/docs/col/ref", #"{"r": {"$ref": "col/\u0000"}}"#, saying: nul),
            Row(.post, "/v1/query", #"{"from": "col\u0000"}"#, saying: nul),
            Row(.post, "/v1/query", #"{"from": {"collectionGroup": "c\u0000l"}}"#, saying: nul),
        ]
    }()

    /// A string of exactly 1 MiB + 1 byte: the document is over Firestore's 1 MiB limit, whether it is
    /// written whole or an existing document grows past it by an update.
    static let oversizedDocument: [Row] = {
        let big = String(repeating: "a", count: 1_048_577)
        return [
            Row(.put, "/v1/docs/col/big", #"{"s": "\#(big)"}"#, status: 413, code: "payload-too-large"),
            Row(.patch, "/v1/docs/col/doc", #"{"s": "\#(big)"}"#, status: 413, code: "payload-too-large"),
        ]
    }()

    static func nested(_ depth: Int) -> String {
        String(repeating: #"{"a": "#, count: depth) + "1" + String(repeating: "}", count: depth)
    }

    static let nestingDeeperThan20 = [
        Row(.put, "/v1/docs/col/d21", nested(21)),
        Row(.put, "/v1/docs/col/arr", String(repeating: #"{"a": ["#, count: 11) + "1" + String(repeating: "]}", count: 11)),
        Row(.put, "/v1/docs/col/deep", String(repeating: "[", count: 100_000)),
        Row(.patch, "/v1/docs/col/doc", #"{"\#((1...21).map { "f\($0)" }.joined(separator: "."))": 1}"#),
    ]

    static let unknownTagAndMisplacedSentinels = [
        Row(.put, "/v1/docs/col/doc", #"{"v": {"$nope": 1}}"#),
        Row(.put, "/v1/docs/col/doc", #"{"v": {"$timestamp": "yesterday"}}"#),
        Row(.put, "/v1/docs/col/doc", #"{"v": {"$bytes": "!!"}}"#),
        Row(.put, "/v1/docs/col/doc", #"{"v": {"$geo": {"latitude": 91, "longitude": 0}}}"#),
        Row(.put, "/v1/docs/col/doc", #"{"v": {"$ref": "col"}}"#),
        Row(.put, "/v1/docs/col/doc", #"{"v": [{"$increment": 1}]}"#),
        Row(.put, "/v1/docs/col/doc", #"{"v": {"$delete": true}}"#),
        Row(.put, "/v1/docs/col/doc", #"{"v": {"$serverTimestamp": false}}"#),
        Row(.patch, "/v1/docs/col/doc", #"{"v": {"x": {"$delete": true}}}"#),
        Row(.put, "/v1/docs/col/doc", #"{"__name__": 1}"#),
        Row(.put, "/v1/docs/col/doc", #"{"": 1}"#),
    ]

    static let bodyOver10MiB: [Row] = {
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: 10 * 1_048_576 + 10)
        return [
            Row(.put, "/v1/docs/col/doc", bytes: huge, status: 413, code: "payload-too-large"),
            Row(.post, "/v1/commit", bytes: huge, status: 413, code: "payload-too-large"),
        ]
    }()

    static let wrongContentType = [
        Row(.put, "/v1/docs/col/doc", #"{"v": 2}"#, contentType: "text/plain", status: 415, code: "unsupported-media-type"),
        Row(.post, "/v1/commit", "writes=1", contentType: "application/x-www-form-urlencoded",
            status: 415, code: "unsupported-media-type"),
    ]

    static let unknownRouteAndMethod = [
        Row(.get, "/v1/nothing", status: 404, code: "not-found"),
        Row(.get, "/v1/docs", status: 404, code: "not-found"),
        Row(.get, "/v1/docs/", status: 404, code: "not-found"),
    ]

    static let rows = malformedJSON + invalidUTF8 + pathOnTheWrongRoute + badPathSegments + nulInIDs
        + oversizedDocument + nestingDeeperThan20 + unknownTagAndMisplacedSentinels + bodyOver10MiB
        + wrongContentType + unknownRouteAndMethod

    /// A server holding only `col/doc`.
    static func seeded() async throws -> TestServer {
        let server = try await TestServer.start()
        let client = server.client()
        _ = try await client.put("/v1/docs/col/doc", #"{"v": 1}"#)
        await client.close()
        return server
    }

    /// Sends a row and checks its error; answers whether the store still holds exactly the seeded document.
    static func isRejected(_ row: Row, by server: TestServer) async throws -> Bool {
        let client = server.client()
        do {
            let unchanged = try await isRejected(row, client: client)
            await client.close()
            return unchanged
        } catch {
            await client.close()
            throw error
        }
    }

    static func isRejected(_ row: Row, client: HearthClient) async throws -> Bool {
        let at = row.sourceLocation
        let r = try await client.request(row.method, row.uri, body: row.body, contentType: row.contentType)
        #expect(r.status == row.status, "\(row): got \(r.status): \(r.text.prefix(300))", sourceLocation: at)
        #expect(r.errorCode == row.code, "\(row)", sourceLocation: at)
        #expect((r.errorMessage ?? "").count > 5, "\(row)", sourceLocation: at)
        if let phrase = row.phrase {
            #expect(r.errorMessage?.contains(phrase) == true, "\(row): message: \(r.errorMessage ?? r.text)",
                    sourceLocation: at)
        }
        let list = try await client.get("/v1/docs/col")
        guard case .array(let docs)? = list.json?["documents"] else {
            Issue.record("\(row): listing failed", sourceLocation: at)
            return false
        }
        let seed = try JSON.parse(#"{"v": 1}"#)
        let collections = try await client.get("/v1/collections").json?["collectionIds"]
        #expect(docs.count == 1, "\(row)", sourceLocation: at)
        #expect(docs.first?["data"] == seed, "\(row)", sourceLocation: at)
        #expect(collections == .array([.string("col")]), "\(row)", sourceLocation: at)
        return docs.count == 1 && docs.first?["data"] == seed && collections == .array([.string("col")])
    }

    @Test func everyBadRequestIsRefusedAndChangesNothing() async throws {
        var server = try await Self.seeded()
        for row in Self.rows {
            // A row that changed the store has failed; the rows after it start again from the seed.
            if try await !Self.isRejected(row, by: server) {
                await server.stop()
                server = try await Self.seeded()
            }
        }
        await server.stop()
    }

    @Test func documentJustUnderTheLimitIsAccepted() async throws {
        try await TestServer.with { _, client in
            // name size: "col" + 1 + "ok" + 1 + 16 = 23; field "s" = 2; overhead 32; string = n + 1.
            let n = 1_048_576 - 23 - 2 - 32 - 1
            let r = try await client.put("/v1/docs/col/ok", #"{"s": "\#(String(repeating: "b", count: n))"}"#)
            #expect(r.status == 200)
            let over = try await client.put("/v1/docs/col/ok", #"{"s": "\#(String(repeating: "b", count: n + 1))"}"#)
            #expect(over.status == 413)
        }
    }

    @Test func nestingOf20IsAccepted() async throws {
        try await TestServer.with { _, client in
            let accepted = try await client.put("/v1/docs/col/d20", Self.nested(20))
            #expect(accepted.status == 200)
        }
    }
}

import HearthCore
import HearthTesting
import Testing

/// Bad requests get the documented error and change nothing.
@Suite struct BadInputTests {
    /// Seeds one document, runs the bad request, and checks the store still holds exactly that document.
    func expectRejected(_ status: Int, _ code: String, saying phrase: String? = nil,
                        _ send: (HearthClient) async throws -> HTTPResult,
                        sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await TestServer.with { _, client in
            _ = try await client.put("/v1/docs/col/doc", #"{"v": 1}"#)
            let r = try await send(client)
            #expect(r.status == status, "got \(r.status): \(r.text.prefix(300))", sourceLocation: sourceLocation)
            #expect(r.errorCode == code, sourceLocation: sourceLocation)
            #expect((r.errorMessage ?? "").count > 5, sourceLocation: sourceLocation)
            if let phrase {
                #expect(r.errorMessage?.contains(phrase) == true, "message: \(r.errorMessage ?? r.text)",
                        sourceLocation: sourceLocation)
            }
            let list = try await client.get("/v1/docs/col")
            guard case .array(let docs)? = list.json?["documents"] else {
                Issue.record("listing failed", sourceLocation: sourceLocation)
                return
            }
            #expect(docs.count == 1, sourceLocation: sourceLocation)
            #expect(docs.first?["data"] == (try JSON.parse(#"{"v": 1}"#)), sourceLocation: sourceLocation)
            #expect(try await client.get("/v1/collections").json?["collectionIds"] == .array([.string("col")]),
                    sourceLocation: sourceLocation)
        }
    }

    @Test func malformedJSON() async throws {
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": 2"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": 2} trailing"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": 2, "v": 3}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"[1, 2]"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": 99999999999999999999}"#) }
    }

    @Test func invalidUTF8() async throws {
        try await expectRejected(400, "invalid-argument") {
            try await $0.request(.put, "/v1/docs/col/doc", body: Array(#"{"v": ""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8))
        }
        try await expectRejected(400, "invalid-argument") {
            try await $0.request(.put, "/v1/docs/col/doc", body: Array(#"{"v": "\ud800"}"#.utf8))
        }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/%FF%FE", "{}") }
    }

    @Test func pathOnTheWrongRoute() async throws {
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col", "{}") }
        try await expectRejected(400, "invalid-argument") { try await $0.patch("/v1/docs/col", #"{"a": 1}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.delete("/v1/docs/col") }
        try await expectRejected(400, "invalid-argument") { try await $0.post("/v1/docs/col/doc", "{}") }
    }

    @Test func badPathSegments() async throws {
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col//doc", "{}") }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/..", "{}") }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/.", "{}") }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/__x__", "{}") }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/__c__/doc", "{}") }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/a%2Fb", "{}") }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc/", "{}") }
        try await expectRejected(400, "invalid-argument") { try await $0.post("/v1/docs/col?id=__id__", "{}") }
        try await expectRejected(400, "invalid-argument") {
            try await $0.put("/v1/docs/col/" + String(repeating: "x", count: 1501), "{}")
        }
    }

    /// A NUL would cut the id short wherever it is handled as a C string (SQLite's text among them), so that
    /// `col/a%00b` would land on `col/a`: refused in URL paths and in every JSON path alike.
    @Test func nulInIDs() async throws {
        let nul = "NUL character (U+0000)"
        try await expectRejected(400, "invalid-argument", saying: nul) { try await $0.put("/v1/docs/col/a%00b", #"{"v": 2}"#) }
        try await expectRejected(400, "invalid-argument", saying: nul) { try await $0.put("/v1/docs/col/%00", #"{"v": 2}"#) }
        try await expectRejected(400, "invalid-argument", saying: nul) { try await $0.put("/v1/docs/c%00l/doc", #"{"v": 2}"#) }
        try await expectRejected(400, "invalid-argument", saying: nul) { try await $0.patch("/v1/docs/col/doc%00", #"{"v": 2}"#) }
        try await expectRejected(400, "invalid-argument", saying: nul) { try await $0.delete("/v1/docs/col/doc%00x") }
        try await expectRejected(400, "invalid-argument", saying: nul) { try await $0.post("/v1/docs/col%00", #"{"v": 2}"#) }
        try await expectRejected(400, "invalid-argument", saying: nul) { try await $0.post("/v1/docs/col?id=a%00b", #"{"v": 2}"#) }
        try await expectRejected(400, "invalid-argument", saying: nul) {
            try await $0.put("/v1/docs/col/doc/sub%00/x", #"{"v": 2}"#)
        }
        // JSON paths: commits, references in data, queries.
        try await expectRejected(400, "invalid-argument", saying: nul) {
            try await $0.post("/v1/commit", #"{"writes": [{"set": "col/a\u0000b", "data": {"v": 2}}]}"#)
        }
        try await expectRejected(400, "invalid-argument", saying: nul) {
            try await $0.post("/v1/commit", #"{"writes": [{"set": "col/ok", "data": {}}, {"create": "c\u0000l/x", "data": {}}]}"#)
        }
        try await expectRejected(400, "invalid-argument", saying: nul) {
            try await $0.put("/v1/docs/col/ref", #"{"r": {"$ref": "col/\u0000"}}"#)
        }
        try await expectRejected(400, "invalid-argument", saying: nul) {
            try await $0.post("/v1/query", #"{"from": "col\u0000"}"#)
        }
        try await expectRejected(400, "invalid-argument", saying: nul) {
            try await $0.post("/v1/query", #"{"from": {"collectionGroup": "c\u0000l"}}"#)
        }
    }

    @Test func oversizedDocument() async throws {
        // A string of exactly 1 MiB + 1 byte: the document is over Firestore's 1 MiB limit.
        let big = String(repeating: "a", count: 1_048_577)
        try await expectRejected(413, "payload-too-large") { try await $0.put("/v1/docs/col/big", #"{"s": "\#(big)"}"#) }
        // Growing an existing document past the limit by an update is refused too.
        try await expectRejected(413, "payload-too-large") { try await $0.patch("/v1/docs/col/doc", #"{"s": "\#(big)"}"#) }
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

    @Test func nestingDeeperThan20() async throws {
        func nested(_ depth: Int) -> String {
            String(repeating: #"{"a": "#, count: depth) + "1" + String(repeating: "}", count: depth)
        }
        try await TestServer.with { _, client in
            let accepted = try await client.put("/v1/docs/col/d20", nested(20))
            #expect(accepted.status == 200)
        }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/d21", nested(21)) }
        try await expectRejected(400, "invalid-argument") {
            try await $0.put("/v1/docs/col/arr", String(repeating: #"{"a": ["#, count: 11) + "1" + String(repeating: "]}", count: 11))
        }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/deep", String(repeating: "[", count: 100_000)) }
        try await expectRejected(400, "invalid-argument") {
            try await $0.patch("/v1/docs/col/doc", #"{"\#((1...21).map { "f\($0)" }.joined(separator: "."))": 1}"#)
        }
    }

    @Test func unknownTagAndMisplacedSentinels() async throws {
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": {"$nope": 1}}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": {"$timestamp": "yesterday"}}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": {"$bytes": "!!"}}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": {"$geo": {"latitude": 91, "longitude": 0}}}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": {"$ref": "col"}}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": [{"$increment": 1}]}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": {"$delete": true}}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"v": {"$serverTimestamp": false}}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.patch("/v1/docs/col/doc", #"{"v": {"x": {"$delete": true}}}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"__name__": 1}"#) }
        try await expectRejected(400, "invalid-argument") { try await $0.put("/v1/docs/col/doc", #"{"": 1}"#) }
    }

    @Test func bodyOver10MiB() async throws {
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: 10 * 1_048_576 + 10)
        try await expectRejected(413, "payload-too-large") { try await $0.request(.put, "/v1/docs/col/doc", body: huge) }
        try await expectRejected(413, "payload-too-large") { try await $0.request(.post, "/v1/commit", body: huge) }
    }

    @Test func wrongContentType() async throws {
        try await expectRejected(415, "unsupported-media-type") {
            try await $0.request(.put, "/v1/docs/col/doc", body: Array(#"{"v": 2}"#.utf8), contentType: "text/plain")
        }
        try await expectRejected(415, "unsupported-media-type") {
            try await $0.request(.post, "/v1/commit", body: Array("writes=1".utf8), contentType: "application/x-www-form-urlencoded")
        }
    }

    @Test func unknownRouteAndMethod() async throws {
        try await expectRejected(404, "not-found") { try await $0.get("/v1/nothing") }
        try await expectRejected(404, "not-found") { try await $0.get("/v1/docs") }
        try await expectRejected(404, "not-found") { try await $0.get("/v1/docs/") }
    }
}

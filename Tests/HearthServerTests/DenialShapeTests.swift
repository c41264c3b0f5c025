import HearthCore
import HearthTesting
import Testing
import HearthServer
import Foundation

/// A document the caller may not read gives the same answer whether it exists or not, on every way in: the
/// status, the body and a listener's error frame are the same, so that denials cannot be used to learn what
/// the rules hide. Letter's rules keep each user's index of their own letters private: bob probes alice's.
@Suite(.serialized) struct DenialShapeTests {
    /// A hidden document that exists (alice wrote the letter), and the same path under a user with no data.
    static let existing = Hidden(user: "alice")
    static let missing = Hidden(user: "nobody")

    struct Hidden: Sendable {
        let user: String
        var parent: String { "users/\(user)" }
        var collection: String { "users/\(user)/letters" }
        var document: String { "users/\(user)/letters/DLVSoeqMDgYAjp2wSPfg" }
    }

    /// What a way in answered: an HTTP status and body, or a listener's frame (status 0).
    struct Answer: Equatable, CustomStringConvertible {
        let status: Int
        let body: String
        var description: String { "\(status) \(body.prefix(300))" }
    }

    /// One way in, sent by bob against a hidden path; `status` is the one expected (0 for a listener's frame).
    /// Answers name the user whose data is probed as `<user>`, so that only what the server found can differ.
    struct Probe: Sendable {
        let name: String
        let status: Int
        let send: @Sendable (Harness, String, Hidden) async throws -> Answer

        init(_ name: String, status: Int = 403, _ send: @escaping @Sendable (HearthClient, Hidden) async throws -> HTTPResult) {
            self.name = name
            self.status = status
            self.send = { harness, token, hidden in
                let client = harness.client(as: .token(token))
                do {
                    let r = try await send(client, hidden)
                    await client.close()
                    return Answer(status: r.status, body: r.text.replacingOccurrences(of: hidden.user, with: "<user>"))
                } catch {
                    await client.close()
                    throw error
                }
            }
        }

        init(listen name: String, _ message: @escaping @Sendable (Hidden) -> String) {
            self.name = name
            status = 0
            send = { harness, token, hidden in
                let listener = try await ListenClient.connect(port: harness.port, credentials: .header(token))
                do {
                    try await listener.send(message(hidden))
                    let frame = try await listener.next()
                    await listener.close()
                    return Answer(status: 0, body: String(decoding: frame.serialized(), as: UTF8.self)
                        .replacingOccurrences(of: hidden.user, with: "<user>"))
                } catch {
                    await listener.close()
                    throw error
                }
            }
        }
    }

    static func commit(_ write: String) -> @Sendable (HearthClient, Hidden) async throws -> HTTPResult {
        { client, hidden in
            try await client.post("/v1/commit", #"{"writes": [\#(write.replacingOccurrences(of: "DOC", with: hidden.document))]}"#)
        }
    }

    /// A query of bob's own index positioned at the hidden document: outside what the query could return.
    static func cursor(_ name: String, from: String = "users/bob/letters") -> @Sendable (HearthClient, Hidden) async throws -> HTTPResult {
        { client, hidden in try await client.query(#"{"from": "\#(from)", "\#(name)": "\#(hidden.document)"}"#) }
    }

    /// Begins a transaction as the caller and sends `uri` (with `?transaction=`) or a body naming it.
    static func inTransaction(_ send: @escaping @Sendable (HearthClient, Hidden, String) async throws -> HTTPResult)
        -> @Sendable (HearthClient, Hidden) async throws -> HTTPResult {
        { client, hidden in
            let begun = try await client.post("/v1/transactions", "{}")
            guard let id = begun.json?["transaction"]?.stringValue else {
                throw ExpectationFailure("beginning a transaction failed: \(begun.status) \(begun.text)")
            }
            return try await send(client, hidden, id)
        }
    }

    static let probes: [Probe] = [
        Probe("get") { try await $0.get("/v1/docs/\($1.document)") },
        Probe("get in a transaction", inTransaction { try await $0.get("/v1/docs/\($1.document)?transaction=\($2)") }),
        Probe("list") { try await $0.get("/v1/docs/\($1.collection)") },
        Probe("list in a transaction", inTransaction { try await $0.get("/v1/docs/\($1.collection)?transaction=\($2)") }),
        Probe("query") { try await $0.query(#"{"from": "\#($1.collection)"}"#) },
        Probe("query by name") {
            try await $0.query(#"{"from": {"collectionGroup": "letters"}, "where": [["__name__", "==", {"$ref": "\#($1.document)"}]]}"#)
        },
        Probe("query in a transaction", inTransaction { try await $0.query(#"{"from": "\#($1.collection)"}"#, transaction: $2) }),
        Probe("aggregate") { try await $0.aggregate(#"{"query": {"from": "\#($1.collection)"}, "aggregations": {"n": {"count": {}}}}"#) },
        Probe("startAt cursor", status: 400, cursor("startAt")),
        Probe("startAfter cursor", status: 400, cursor("startAfter")),
        Probe("endAt cursor", status: 400, cursor("endAt")),
        Probe("endBefore cursor", status: 400, cursor("endBefore")),
        Probe("cursor on a collection group", status: 400, cursor("startAt", from: "{\"collectionGroup\": \"letters\", \"under\": \"users/bob\"}")),
        Probe("cursor in an aggregate", status: 400) {
            try await $0.aggregate(#"{"query": {"from": "users/bob/letters", "startAfter": "\#($1.document)"}, "aggregations": {"n": {"count": {}}}}"#)
        },
        Probe("cursor in a transaction", status: 400, inTransaction {
            try await $0.query(#"{"from": "users/bob/letters", "startAt": "\#($1.document)"}"#, transaction: $2)
        }),
        Probe("set") { try await $0.put("/v1/docs/\($1.document)", #"{"title": "x"}"#) },
        Probe("merge") { try await $0.put("/v1/docs/\($1.document)?merge=true", #"{"title": "x"}"#) },
        Probe("update") { try await $0.patch("/v1/docs/\($1.document)", #"{"title": "x"}"#) },
        Probe("create with an id") { try await $0.post("/v1/docs/\($1.collection)?id=DLVSoeqMDgYAjp2wSPfg", #"{"title": "x"}"#) },
        Probe("delete") { try await $0.delete("/v1/docs/\($1.document)") },
        Probe("recursive delete") { try await $0.delete("/v1/docs/\($1.parent)?recursive=true") },
        Probe("set with If-Match") {
            try await $0.put("/v1/docs/\($1.document)", #"{"title": "x"}"#, headers: ["If-Match": "\"2026-11-12T11:53:00.000000Z\""])
        },
        Probe("create with If-None-Match") { try await $0.put("/v1/docs/\($1.document)", #"{"title": "x"}"#, headers: ["If-None-Match": "*"]) },
        Probe("commit set", commit(#"{"set": "DOC", "data": {"title": "x"}}"#)),
        Probe("commit create", commit(#"{"create": "DOC", "data": {"title": "x"}}"#)),
        Probe("commit update", commit(#"{"update": "DOC", "data": {"title": "x"}}"#)),
        Probe("commit delete", commit(#"{"delete": "DOC"}"#)),
        Probe("commit delete that must exist", commit(#"{"delete": "DOC", "precondition": {"exists": true}}"#)),
        Probe("commit verify that it exists", commit(#"{"verify": "DOC", "precondition": {"exists": true}}"#)),
        Probe("commit verify that it is missing", commit(#"{"verify": "DOC", "precondition": {"exists": false}}"#)),
        Probe("commit set at a version", commit(#"{"set": "DOC", "data": {}, "precondition": {"updateTime": "2026-11-12T11:53:00Z"}}"#)),
        Probe("commit in a transaction", inTransaction { client, hidden, id in
            try await client.post("/v1/commit", #"{"transaction": "\#(id)", "writes": [{"verify": "\#(hidden.document)", "precondition": {"exists": true}}]}"#)
        }),
        Probe("collection ids") { try await $0.get("/v1/collections/\($1.parent)") },
        Probe(listen: "listen to the document") { #"{"type": "listen", "id": "t", "doc": "\#($0.document)"}"# },
        Probe(listen: "listen to the collection") { #"{"type": "listen", "id": "t", "query": {"from": "\#($0.collection)"}}"# },
        Probe(listen: "listen with a cursor") {
            #"{"type": "listen", "id": "t", "query": {"from": "users/bob/letters", "startAt": "\#($0.document)"}}"#
        },
    ]

    @Test(arguments: [true, false])
    func aHiddenDocumentAnswersTheSameWhetherItExistsOrNot(inline: Bool) async throws {
        let harness = try await Harness.start(rules: "rules/letter.rules", fixtures: "fixtures/letter.json", dev: false) {
            $0.inlineAnswers = inline
        }
        do {
            let (bob, session) = try await harness.signIn("bob")
            await bob.close()
            for probe in Self.probes {
                let onExisting = try await probe.send(harness, session.token, Self.existing)
                let onMissing = try await probe.send(harness, session.token, Self.missing)
                #expect(onExisting == onMissing, "\(probe.name): \(onExisting) against \(onMissing)")
                #expect(onExisting.status == probe.status, "\(probe.name): \(onExisting)")
                if probe.status == 0 {
                    #expect(onExisting.body.contains("\"type\":\"error\""), "\(probe.name): \(onExisting)")
                }
            }
            // Nothing was written by any of them.
            let admin = harness.client()
            #expect(try await admin.get("/v1/docs/\(Self.existing.document)").json?["data"]?["title"]?.stringValue != "x")
            #expect(try await admin.get("/v1/docs/\(Self.missing.document)").status == 404)
            await admin.close()
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }
}

import HearthCore
import HearthTesting
import Testing
import HearthServer

/// A query cursor that names a document reads that document only if the caller may `get` it: otherwise the
/// query is denied, the same whether the document exists or not. In ComeOver a user may list his own events
/// and read those he is invited to; positioning his list against someone else's event must not tell him
/// anything about it (before, ordering his events against hidden ones recovered their fields).
@Suite(.serialized) struct CursorRulesTests {
    /// Nina's plant swap: only lena is invited.
    static let hidden = "events/1K4JTcqzJptfkefxIvZq"
    static let missing = "events/AAAAAAAAAAAAAAAAAAAA"
    /// Nina's cookie decorating, where omar is invited.
    static let invited = "events/9O7mqbw0XTbH7Lt5h3y2"

    /// Omar's own events, ordered by their start, positioned at a cursor document.
    static func ownEvents(_ cursor: String, _ kind: String = "startAt") -> String {
        #"{"from": "events", "where": [["author", "==", "omar"]], "orderBy": [["startsAt", "asc"]], "\#(kind)": "\#(cursor)"}"#
    }

    @Test(arguments: [true, false])
    func cursorsAreDecidedByTheGetRule(inline: Bool) async throws {
        let harness = try await Harness.start(rules: "rules/comeover.rules", fixtures: "fixtures/comeover.json", dev: false) {
            $0.inlineAnswers = inline
        }
        do {
            let (omar, session) = try await harness.signIn("omar")
            for kind in ["startAt", "startAfter", "endAt", "endBefore"] {
                let onHidden = try await omar.query(Self.ownEvents(Self.hidden, kind))
                let onMissing = try await omar.query(Self.ownEvents(Self.missing, kind))
                #expect(onHidden.status == 403, "\(kind): \(onHidden.status) \(onHidden.text.prefix(200))")
                #expect(onHidden.status == onMissing.status && onHidden.text == onMissing.text, "\(kind)")
            }
            let aggregate = { (cursor: String) in #"{"query": \#(Self.ownEvents(cursor)), "aggregations": {"n": {"count": {}}}}"# }
            let aggregateOnHidden = try await omar.aggregate(aggregate(Self.hidden))
            #expect(aggregateOnHidden.status == 403)
            #expect(aggregateOnHidden.text == (try await omar.aggregate(aggregate(Self.missing))).text)

            // A document he may read positions the query by its values, as the same values given as a cursor do.
            let admin = harness.client()
            let startsAt = try #require(try await admin.get("/v1/docs/\(Self.invited)").json?["data"]?["startsAt"])
            let byDocument = try harness.expectAllowed(try await omar.query(Self.ownEvents(Self.invited, "startAfter")))
            let byValues = try harness.expectAllowed(try await omar.query(
                #"{"from": "events", "where": [["author", "==", "omar"]], "orderBy": [["startsAt", "asc"]], "#
                    + #""startAfter": [\#(startsAt.text), {"$ref": "\#(Self.invited)"}]}"#))
            #expect(byDocument.json?["documents"] == byValues.json?["documents"])
            #expect(try await omar.aggregate(aggregate(Self.invited)).status == 200)

            // A cursor outside the queried collection is refused before anything is read.
            let outside = try await omar.query(Self.ownEvents("\(Self.invited)/invitations/omar"))
            #expect(outside.status == 400)
            #expect(outside.errorMessage?.contains("not part of the query's result set") == true, "\(outside.text)")

            // The same for a listener: denied alike, and allowed with the same result.
            let listener = try await ListenClient.connect(port: harness.port, credentials: .header(session.token))
            try await listener.listen("hidden", query: Self.ownEvents(Self.hidden))
            let hiddenFrame = try await listener.expect("error", id: "hidden")
            try await listener.listen("missing", query: Self.ownEvents(Self.missing))
            let missingFrame = try await listener.expect("error", id: "missing")
            #expect(hiddenFrame["code"]?.stringValue == "permission-denied")
            #expect(hiddenFrame["message"] == missingFrame["message"])
            try await listener.listen("invited", query: Self.ownEvents(Self.invited, "startAfter"))
            let snapshot = try await listener.expect("snapshot", id: "invited")
            guard case .array(let changes)? = snapshot["changes"], case .array(let documents)? = byDocument.json?["documents"] else {
                throw ExpectationFailure("no changes or documents: \(snapshot.text)")
            }
            #expect(!documents.isEmpty)
            #expect(changes.compactMap { $0["doc"] } == documents)
            await listener.close()
            await admin.close()
            await omar.close()
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }
}

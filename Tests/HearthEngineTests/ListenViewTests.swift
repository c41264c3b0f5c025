import Foundation
import HearthCore
import HearthEngine
import HearthStore
import HearthTesting
import Testing

/// The live-update state machines without sockets: a view kept current from changes equals the query run
/// over the new state, with exact indexes; message parsing; rate limit and deadlines on an injected clock.
@Suite struct ListenViewTests {
    static let collections = [CollectionPath(uncheckedSegments: ["users"]), CollectionPath(uncheckedSegments: ["users", "a", "users"])]

    /// Random states, random queries (filters, orders, cursors, offsets, limits, projections) and random
    /// batches of creates, updates and deletes: after each batch the view, by its changes or by a requery,
    /// equals the query's result, and the changes turn the old result into the new one.
    @Test func viewFollowsRandomChanges() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["HEARTH_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max / 2)
        var r = RandomValues(seed: seed)
        var requeries = 0
        var deliveries = 0
        for round in 0..<150 {
            var state: [DocumentPath: Document] = [:]
            for k in 0..<r.int(0...20) {
                let doc = r.document(in: Self.collections, id: "d\(k % 12)")
                state[doc.path] = doc
            }
            let query = r.query(over: Self.collections[0])
            var view = TargetView(target: .query(query))
            var client = view.reset(to: view.result(over: Array(state.values)))
            var shown = try #require(ViewChange.apply(client, to: []))
            var clock: Int64 = 1_000
            for step in 0..<12 {
                var batch: [DocumentPath: Document?] = [:]
                for _ in 0..<r.int(1...3) {
                    clock += 1
                    let path = Self.collections[r.chance(0.8) ? 0 : 1].segments + ["d\(r.int(0...11))"]
                    let docPath = DocumentPath(uncheckedSegments: path)
                    if r.chance(0.25) {
                        state[docPath] = nil
                        batch[docPath] = .some(nil)
                    } else {
                        var doc = r.document(in: Self.collections, id: "x")
                        doc.path = docPath
                        doc.createTime = state[docPath]?.createTime ?? Timestamp(microseconds: clock)
                        doc.updateTime = Timestamp(microseconds: clock)
                        state[docPath] = doc
                        batch[docPath] = doc
                    }
                }
                let expected = try query.run(over: Array(state.values))
                switch view.apply(batch) {
                case .changes(let changes):
                    client = changes
                    deliveries += changes.isEmpty ? 0 : 1
                case .requery:
                    requeries += 1
                    client = view.reset(to: view.result(over: Array(state.values)))
                }
                let context = "seed \(seed) round \(round) step \(step): \(query.jsonText)"
                guard let next = ViewChange.apply(client, to: shown) else {
                    Issue.record("\(context): changes do not apply: \(client)")
                    return
                }
                let previous = shown
                shown = next
                #expect(shown == expected, "\(context) old \(previous.map(\.path)) changes \(client.map { "\($0.kind) \($0.document.path) \($0.oldIndex) \($0.newIndex)" })")
                if shown != expected { return }
            }
        }
        #expect(requeries > 0 && deliveries > 0, "seed \(seed): the rounds exercise both paths")
    }

    @Test func diffReportsFirestoreIndexes() throws {
        let c = CollectionPath(uncheckedSegments: ["scores"])
        var q = Query(source: .collection(c), orderBy: [Query.Order(try FieldPath(parsing: "n"))])
        q.limit = 3
        func doc(_ id: String, _ n: Int64, _ t: Int64) -> Document {
            Document(path: DocumentPath(uncheckedSegments: ["scores", id]), fields: ["n": .int(n)],
                     createTime: Timestamp(microseconds: 1), updateTime: Timestamp(microseconds: t))
        }
        var view = TargetView(target: .query(q))
        let initial = view.reset(to: [doc("a", 1, 1), doc("b", 2, 1), doc("c", 3, 1)])
        #expect(initial.map(\.newIndex) == [0, 1, 2])
        #expect(initial.allSatisfy { $0.kind == .added && $0.oldIndex == -1 })
        // "a" moves inside the window (ties on n break by name): one modification, from 0 to 1.
        guard case .changes(let moved) = view.apply([doc("a", 1, 1).path: doc("a", 3, 2)]) else {
            Issue.record("expected changes")
            return
        }
        #expect(moved == [ViewChange(kind: .modified, document: doc("a", 3, 2), oldIndex: 0, newIndex: 1)])
        // Past the last document of a full window, the view cannot know what lies between: it asks to requery.
        var probe = view
        #expect(probe.apply([doc("b", 2, 1).path: doc("b", 9, 3)]) == .requery)
        // A new first document pushes the last one out of the limit window.
        guard case .changes(let pushed) = view.apply([doc("z", 0, 3).path: doc("z", 0, 3)]) else {
            Issue.record("expected changes")
            return
        }
        #expect(pushed.map(\.kind) == [.removed, .added])
        #expect(pushed[0].document.path.id == "c" && pushed[0].oldIndex == 2)
        #expect(pushed[1].document.path.id == "z" && pushed[1].newIndex == 0)
        // Losing a member of a full window needs the next document, which the view does not hold.
        let deleted: [DocumentPath: Document?] = [doc("b", 2, 1).path: nil]
        #expect(view.apply(deleted) == .requery)
    }

    @Test func messagesParseOrNameWhatIsWrong() throws {
        #expect(ListenRequest.parse(#"{"type":"ping"}"#) == .success(.ping))
        #expect(ListenRequest.parse(#"{"type":"auth","token":"t"}"#) == .success(.auth(token: "t")))
        #expect(ListenRequest.parse(#"{"type":"unlisten","id":"t1"}"#) == .success(.unlisten(id: "t1")))
        #expect(ListenRequest.parse(#"{"type":"listen","id":"d","doc":"users/alice"}"#)
                == .success(.listen(id: "d", target: .document(try DocumentPath("users/alice")), resumeToken: nil)))
        func failure(_ text: String) -> ListenRequestError? {
            if case .failure(let e) = ListenRequest.parse(text) { return e }
            return nil
        }
        #expect(failure("nope")?.error.message.contains("not JSON") == true)
        #expect(failure("[1]")?.error.message.contains("JSON object") == true)
        #expect(failure(#"{"type":"dance"}"#)?.error.message.contains("unknown message type 'dance'") == true)
        #expect(failure(#"{"type":"ping","x":1}"#)?.error.message.contains("unknown field 'x'") == true)
        let noTarget = failure(#"{"type":"listen","id":"t9"}"#)
        #expect(noTarget?.targetID == "t9")
        #expect(noTarget?.error.code == .invalidArgument)
        #expect(failure(#"{"type":"listen","id":"t","doc":"users"}"#)?.error.message.contains("'doc'") == true)
        #expect(failure(#"{"type":"listen","id":"t","query":{"from":"users","limit":-1}}"#)?.error.code == .invalidArgument)
        #expect(failure(#"{"type":"listen","id":"t","doc":"a/b","query":{"from":"a"}}"#)?.error.message.contains("not both") == true)
    }

    @Test func resumeTokensRoundTripAndRejectForgeries() throws {
        let position = LogPosition(sequence: 42, commitTime: Timestamp(microseconds: 1_700_000_000_000_000))
        #expect(try LogPosition(resumeToken: position.resumeToken) == position)
        #expect(throws: HearthError.self) { try LogPosition(resumeToken: "garbage!") }
        #expect(throws: HearthError.self) { try LogPosition(resumeToken: Base64.encode(Array("x:1".utf8))) }
    }

    @Test func rateLimitAndDeadlinesFollowTheClock() {
        var configuration = ListenConfiguration()
        configuration.messagesPerSecond = 10
        configuration.messageBurst = 5
        configuration.idleTimeout = .seconds(60)
        configuration.authTimeout = .seconds(10)
        let start = ContinuousClock.now
        var state = ListenSessionState(configuration: configuration, now: start)
        for _ in 0..<5 { #expect(state.received(at: start) == .accept) }
        #expect(state.received(at: start) == .reject)
        #expect(state.received(at: start + .milliseconds(100)) == .accept)  // one token back after 0.1 s
        #expect(state.received(at: start + .milliseconds(100)) == .reject)
        #expect(state.deadline(authenticated: false, hasTargets: false) == start + .seconds(10))
        #expect(state.deadline(authenticated: true, hasTargets: true) == nil)
        #expect(state.deadline(authenticated: true, hasTargets: false) == start + .milliseconds(100) + .seconds(60))
    }
}

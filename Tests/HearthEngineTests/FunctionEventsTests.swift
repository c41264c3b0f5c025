import HearthCore
import HearthEngine
import HearthTesting
import Testing

/// Document triggers: events queued in the commit of their cause, delivered with the answer's writes once.
@Suite struct FunctionEventsTests {
    static let functions = """
        {"endpoints": {"app": {"url": "http://127.0.0.1:9/hooks", "secret": "whsec_\(Base64.encode(Array(repeating: UInt8(7), count: 32)))"}},
         "triggers": [{"name": "postWritten", "on": "document.written", "path": "posts/{postId}", "endpoint": "app"},
                      {"name": "commentCreated", "on": "document.created", "path": "posts/{postId}/comments/{commentId}", "endpoint": "app"}]}
        """

    static func open() async throws -> TestDatabase {
        let test = try await TestDatabase.open()
        test.database.functions.install(try FunctionsFile.parse(JSON.parse(functions)))
        return test
    }

    static func pending(_ db: Database) async throws -> [FunctionEventRecord] {
        guard case .functionEvents(let events) = try await db.perform(.functions(.events(dead: false, after: 0, limit: 100)), as: .admin) else {
            throw ExpectationFailure("not a list of events")
        }
        return events
    }

    static func due(_ db: Database, skipping: Set<Int64> = []) async throws -> [FunctionEventRecord] {
        guard case .functionEvents(let events) = try await db.perform(.functions(.due(skipping: skipping, limit: 100)), as: .admin) else {
            throw ExpectationFailure("not a list of events")
        }
        return events
    }

    static func write(_ text: String) throws -> Write { try Write(json: JSON.parse(text)) }

    static func body(_ event: FunctionEventRecord) throws -> JSON { try JSON.parse(event.body) }

    @Test func createUpdateDeleteQueueEventsInCommitOrder() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "posts/a", "data": {"n": 1}}"#)]), as: .admin)
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"update": "posts/a", "data": {"n": 2}}"#)]), as: .admin)
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"delete": "posts/a"}"#),
                                                       Self.write(#"{"set": "posts/a/comments/c1", "data": {"t": "hi"}}"#),
                                                       Self.write(#"{"set": "other/x", "data": {}}"#)]), as: .admin)
        let events = try await Self.pending(db)
        #expect(events.map(\.endpoint) == ["app", "app", "app", "app"])
        let bodies = try events.map(Self.body)
        #expect(bodies.map { $0["name"]?.stringValue } == ["postWritten", "postWritten", "postWritten", "commentCreated"])
        #expect(bodies.map { $0["type"]?.stringValue } == ["document.written", "document.written", "document.written", "document.created"])
        #expect(bodies[0]["params"] == .object([("postId", .string("a"))]))
        #expect(bodies[3]["params"] == .object([("postId", .string("a")), ("commentId", .string("c1"))]))
        #expect(bodies[0]["document"]?["before"] == .null)
        #expect(bodies[0]["document"]?["after"]?["data"] == .object([("n", .int(1))]))
        #expect(bodies[1]["document"]?["before"]?["data"] == .object([("n", .int(1))]))
        #expect(bodies[1]["document"]?["after"]?["data"] == .object([("n", .int(2))]))
        #expect(bodies[2]["document"]?["path"]?.stringValue == "posts/a")
        #expect(bodies[2]["document"]?["after"] == .null)
        #expect(bodies.map { $0["id"]?.stringValue } == events.map(\.id))
        // One document's events wait for the one before: only the first of posts/a is due, with the comment's.
        #expect(try await Self.due(db).map(\.id) == [events[0].id, events[3].id])
        #expect(try await Self.due(db, skipping: [events[0].sequence]).map(\.id) == [events[3].id])
    }

    @Test func aFailedCommitQueuesNothing() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        await #expect(throws: HearthError.self) {
            _ = try await db.commit(CommitRequest(writes: [
                Self.write(#"{"set": "posts/a", "data": {}}"#),
                Self.write(#"{"update": "posts/missing", "data": {"n": 1}}"#),
            ]), as: .admin)
        }
        #expect(try await Self.pending(db).isEmpty)
    }

    /// Acknowledges events in one `.delivered`; answers each one's outcome.
    static func acknowledge(_ db: Database, _ acknowledgements: [FunctionAcknowledgement]) async throws -> [AcknowledgementOutcome] {
        guard case .acknowledged(let outcomes) = try await db.perform(.functions(.delivered(acknowledgements)), as: .admin) else {
            throw ExpectationFailure("not the acknowledgements' outcomes")
        }
        return outcomes
    }

    @Test func deliveredCommitsTheAnswersWritesOnce() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "posts/a", "data": {}}"#)]), as: .admin)
        let event = try #require(try await Self.pending(db).first)
        let writes = try [Self.write(#"{"update": "counters/posts", "data": {"n": {"$increment": 1}}}"#)]
        // Invalid writes (the counter does not exist): nothing committed, the event still pending.
        let refused = try await Self.acknowledge(db, [FunctionAcknowledgement(id: event.id, writes: writes)])
        #expect(refused.count == 1 && refused[0].error is HearthError)
        #expect(try await Self.pending(db).map(\.id) == [event.id])
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "counters/posts", "data": {"n": 0}}"#)]), as: .admin)
        #expect(try await Self.acknowledge(db, [FunctionAcknowledgement(id: event.id, writes: writes)]).map { $0.error == nil } == [true])
        #expect(try await Self.acknowledge(db, [FunctionAcknowledgement(id: event.id, writes: writes)]).map { $0.error == nil } == [true])
        #expect(try await Self.pending(db).isEmpty)
        #expect(try await Self.counter(db) == .int(1))
    }

    static func counter(_ db: Database) async throws -> Value? {
        let counter = try await db.perform(.get(DocumentPath("counters/posts"), transaction: nil), as: .admin)
        guard case .document(let stored?) = counter else { throw ExpectationFailure("no counter") }
        return try stored.decoded().fields["n"]
    }

    /// Many acknowledgements in one `.delivered`: those without writes go in one job, each with writes in a job of
    /// its own, so one whose writes fail leaves only its own event pending; an id no longer pending (acknowledged
    /// before, or unknown) commits nothing, not even its writes.
    @Test func manyAcknowledgementsAtOnceEachWithItsOwnOutcome() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "counters/posts", "data": {"n": 0}}"#)]), as: .admin)
        for i in 0..<6 { _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "posts/p\#(i)", "data": {}}"#)]), as: .admin) }
        let events = try await Self.pending(db)
        #expect(events.count == 6)
        let increment = try [Self.write(#"{"update": "counters/posts", "data": {"n": {"$increment": 1}}}"#)]
        let missing = try [Self.write(#"{"update": "missing/x", "data": {"a": 1}}"#)]
        let outcomes = try await Self.acknowledge(db, [
            FunctionAcknowledgement(id: events[0].id),
            FunctionAcknowledgement(id: events[1].id, writes: increment),
            FunctionAcknowledgement(id: events[2].id, writes: missing),
            FunctionAcknowledgement(id: events[3].id),
            FunctionAcknowledgement(id: "evt_unknown", writes: increment),
            FunctionAcknowledgement(id: events[4].id, writes: increment),
        ])
        #expect(outcomes.map { $0.error == nil } == [true, true, false, true, true, true])
        #expect(outcomes.allSatisfy { !$0.laterPending })
        #expect((outcomes[2].error as? HearthError)?.message.contains("no document to update at missing/x") == true)
        #expect(try await Self.pending(db).map(\.id) == [events[2].id, events[5].id])
        #expect(try await Self.counter(db) == .int(2))
        // The same acknowledgements again: every event is gone already, so nothing more is written.
        let again = try await Self.acknowledge(db, [FunctionAcknowledgement(id: events[1].id, writes: increment),
                                                    FunctionAcknowledgement(id: events[0].id)])
        #expect(again.map { $0.error == nil } == [true, true])
        #expect(try await Self.counter(db) == .int(2))
        #expect(try await Self.acknowledge(db, []).isEmpty)
    }

    /// An acknowledgement says whether later events of its document are pending: the queue handed them out
    /// to no read while it was, so the delivery must look again.
    @Test func anAcknowledgementSaysWhetherItsDocumentsLaterEventsWait() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "counters/posts", "data": {"n": 0}}"#)]), as: .admin)
        for i in 0..<3 { _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "posts/a", "data": {"v": \#(i)}}"#)]), as: .admin) }
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "posts/b", "data": {}}"#)]), as: .admin)
        let events = try await Self.pending(db)
        #expect(events.count == 4)
        let increment = try [Self.write(#"{"update": "counters/posts", "data": {"n": {"$increment": 1}}}"#)]
        let first = try await Self.acknowledge(db, [FunctionAcknowledgement(id: events[0].id),
                                                    FunctionAcknowledgement(id: events[3].id)])
        #expect(first.map(\.laterPending) == [true, false])
        let second = try await Self.acknowledge(db, [FunctionAcknowledgement(id: events[1].id, writes: increment)])
        #expect(second.map(\.laterPending) == [true] && second[0].error == nil)
        // A dead event holds up nothing: the document's last event, acknowledged, leaves none pending behind it.
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "posts/a", "data": {"v": 3}}"#)]), as: .admin)
        let dead = try #require(try await Self.pending(db).last)
        _ = try await db.perform(.functions(.failed(id: dead.id, attempts: 1, nextAttemptAt: .now(), error: "HTTP 500", dead: true)),
                                 as: .admin)
        #expect(try await Self.acknowledge(db, [FunctionAcknowledgement(id: events[2].id)]).map(\.laterPending) == [false])
        // One no longer pending says nothing waits.
        #expect(try await Self.acknowledge(db, [FunctionAcknowledgement(id: events[0].id)]).map(\.laterPending) == [false])
    }

    @Test func deadEventsAreKeptAndRetriedOnRequest() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "posts/a", "data": {}}"#)]), as: .admin)
        let event = try #require(try await Self.pending(db).first)
        _ = try await db.perform(.functions(.failed(id: event.id, attempts: 3, nextAttemptAt: .now(), error: "HTTP 500", dead: true)), as: .admin)
        #expect(try await Self.pending(db).isEmpty)
        guard case .functionEvents(let dead) = try await db.perform(.functions(.events(dead: true, after: 0, limit: 10)), as: .admin) else {
            throw ExpectationFailure("not a list")
        }
        #expect(dead.map(\.id) == [event.id] && dead.first?.lastError == "HTTP 500" && dead.first?.attempts == 3)
        _ = try await db.perform(.functions(.retry(id: event.id)), as: .admin)
        let again = try await Self.due(db)
        #expect(again.map(\.id) == [event.id] && again.first?.deadAt == nil && again.first?.body == event.body)
        await #expect(throws: HearthError.self) { _ = try await db.perform(.functions(.retry(id: event.id)), as: .admin) }
        await #expect(throws: HearthError.self) {
            _ = try await db.perform(.functions(.events(dead: false, after: 0, limit: 10)), as: .user(uid: "u", token: [:]))
        }
    }
}

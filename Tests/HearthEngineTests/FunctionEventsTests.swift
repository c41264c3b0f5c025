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

    @Test func deliveredCommitsTheAnswersWritesOnce() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "posts/a", "data": {}}"#)]), as: .admin)
        let event = try #require(try await Self.pending(db).first)
        let writes = try [Self.write(#"{"update": "counters/posts", "data": {"n": {"$increment": 1}}}"#)]
        // Invalid writes (the counter does not exist): nothing committed, the event still pending.
        await #expect(throws: HearthError.self) { _ = try await db.perform(.functions(.delivered(id: event.id, writes: writes)), as: .admin) }
        #expect(try await Self.pending(db).map(\.id) == [event.id])
        _ = try await db.commit(CommitRequest(writes: [Self.write(#"{"set": "counters/posts", "data": {"n": 0}}"#)]), as: .admin)
        _ = try await db.perform(.functions(.delivered(id: event.id, writes: writes)), as: .admin)
        _ = try await db.perform(.functions(.delivered(id: event.id, writes: writes)), as: .admin)
        #expect(try await Self.pending(db).isEmpty)
        let counter = try await db.perform(.get(DocumentPath("counters/posts"), transaction: nil), as: .admin)
        guard case .document(let stored?) = counter else { throw ExpectationFailure("no counter") }
        #expect(try stored.decoded().fields["n"] == .int(1))
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

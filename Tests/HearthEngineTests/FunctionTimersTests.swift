import HearthCore
import HearthEngine
import HearthTesting
import Testing

/// Timers: armed in the commit that writes a document's timestamp field, re-armed when it changes, dropped
/// when it goes, fired once into an event by a run at a time the test chooses; kept across a restart.
@Suite struct FunctionTimersTests {
    static let secret = "whsec_" + Base64.encode(Array(repeating: UInt8(7), count: 32))

    static func file() throws -> FunctionsFile {
        try FunctionsFile.parse(JSON.parse("""
            {"endpoints": {"app": {"url": "http://127.0.0.1:9/hooks", "secret": "\(secret)"}},
             "timers": [{"name": "publish", "path": "users/{uid}/posts/{postId}", "field": "publishAt", "endpoint": "app"}]}
            """))
    }

    static func open(dataDirectory: String? = nil) async throws -> TestDatabase {
        let test = try await TestDatabase.open(dataDirectory: dataDirectory)
        test.database.functions.install(try file())
        return test
    }

    static func write(_ db: Database, _ texts: String...) async throws {
        _ = try await db.commit(CommitRequest(writes: texts.map { try Write(json: JSON.parse($0)) }), as: .admin)
    }

    static let path = "users/u1/posts/p1"

    @Test func armedByAWriteAndFiredOnceWithTheDocumentAsItIsThen() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        try await Self.write(db, #"{"set": "users/u1/posts/p1", "data": {"publishAt": {"$timestamp": "2026-11-27T09:00:00Z"}, "title": "draft"}}"#)
        #expect(try await db.functionTimer("publish", Self.path) == .at("2026-11-27T09:00:00Z"))
        // Another field changes: the timer stays as it is; the event shows the document when it fires.
        try await Self.write(db, #"{"update": "users/u1/posts/p1", "data": {"title": "final"}}"#)
        var run = try await db.runFunctionClock(.fireTimers(now: .at("2026-11-27T08:59:59.999999Z"), limit: 10))
        #expect(run.fired == 0)
        #expect(run.next == .at("2026-11-27T09:00:00Z"))
        #expect(try await db.runFunctionClock(.timers(count: true)).pending == 1)
        run = try await db.runFunctionClock(.fireTimers(now: .at("2026-11-27T09:00:00Z"), limit: 10))
        #expect(run.fired == 1)
        #expect(run.next == nil)
        #expect(try await db.functionTimer("publish", Self.path) == nil)
        let events = try await db.pendingFunctionEvents()
        #expect(events.count == 1)
        let body = try JSON.parse(events[0].body)
        #expect(body["type"]?.stringValue == "timer")
        #expect(body["name"]?.stringValue == "publish")
        #expect(body["time"]?.stringValue == "2026-11-27T09:00:00.000000Z")
        #expect(body["params"] == .object([("uid", .string("u1")), ("postId", .string("p1"))]))
        #expect(body["document"]?["path"]?.stringValue == Self.path)
        #expect(body["document"]?["after"]?["data"]?["title"]?.stringValue == "final")
        #expect(body["id"]?.stringValue == events[0].id)
        // Fired once: a later run, or a write that leaves the field as it was, fires nothing again.
        try await Self.write(db, #"{"update": "users/u1/posts/p1", "data": {"title": "again"}}"#)
        #expect(try await db.runFunctionClock(.fireTimers(now: .at("2026-11-28T00:00:00Z"), limit: 10)).fired == 0)
        #expect(try await db.pendingFunctionEvents().count == 1)
    }

    @Test func aChangedTimeReArmsAndTheOldTimeNoLongerFires() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        try await Self.write(db, #"{"set": "users/u1/posts/p1", "data": {"publishAt": {"$timestamp": "2026-11-27T09:00:00Z"}}}"#)
        try await Self.write(db, #"{"update": "users/u1/posts/p1", "data": {"publishAt": {"$timestamp": "2026-11-27T10:00:00Z"}}}"#)
        #expect(try await db.runFunctionClock(.fireTimers(now: .at("2026-11-27T09:30:00Z"), limit: 10)).fired == 0)
        #expect(try await db.runFunctionClock(.fireTimers(now: .at("2026-11-27T10:00:00Z"), limit: 10)).fired == 1)
        let body = try JSON.parse(try await db.pendingFunctionEvents()[0].body)
        #expect(body["time"]?.stringValue == "2026-11-27T10:00:00.000000Z")
    }

    struct DropCase: CustomTestStringConvertible, Sendable {
        let write: String, why: String
        var testDescription: String { why }
    }

    static let drops: [DropCase] = [
        .init(write: #"{"delete": "users/u1/posts/p1"}"#, why: "the document is deleted"),
        .init(write: #"{"update": "users/u1/posts/p1", "data": {"publishAt": {"$delete": true}}}"#, why: "the field is removed"),
        .init(write: #"{"update": "users/u1/posts/p1", "data": {"publishAt": "tomorrow"}}"#, why: "the field becomes a string"),
        .init(write: #"{"update": "users/u1/posts/p1", "data": {"publishAt": null}}"#, why: "the field becomes null"),
        .init(write: #"{"set": "users/u1/posts/p1", "data": {"title": "x"}}"#, why: "a set without the field"),
    ]

    @Test(arguments: drops) func droppedWhenTheTimeGoes(_ c: DropCase) async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        try await Self.write(db, #"{"set": "users/u1/posts/p1", "data": {"publishAt": {"$timestamp": "2026-11-27T09:00:00Z"}}}"#)
        try await Self.write(db, c.write)
        #expect(try await db.functionTimer("publish", Self.path) == nil)
        #expect(try await db.runFunctionClock(.fireTimers(now: .at("2026-11-28T00:00:00Z"), limit: 10)).fired == 0)
        #expect(try await db.pendingFunctionEvents().isEmpty)
    }

    @Test func aFieldThatIsNotATimestampDoesNotArm() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        try await Self.write(db, #"{"set": "users/u1/posts/p1", "data": {"publishAt": "2026-11-27T09:00:00Z"}}"#,
                             #"{"set": "users/u1/posts/p2", "data": {"publishAt": 1790000000}}"#,
                             #"{"set": "users/u1/other/p3", "data": {"publishAt": {"$timestamp": "2026-11-27T09:00:00Z"}}}"#)
        #expect(try await db.runFunctionClock(.timers(count: true)).pending == 0)
    }

    @Test func aTimeAlreadyPastFiresAtTheNextRun() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        try await Self.write(db, #"{"set": "users/u1/posts/p1", "data": {"publishAt": {"$timestamp": "2000-01-01T00:00:00Z"}}}"#)
        #expect(try await db.runFunctionClock(.fireTimers(now: .at("2026-11-27T00:00:00Z"), limit: 10)).fired == 1)
    }

    @Test func aRunFiresAPageAtATimeEarliestFirst() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        var writes: [String] = []
        for k in 0..<30 {  // seconds 59 down to 30: written latest first
            writes.append(#"{"set": "users/u1/posts/p\#(k)", "data": {"publishAt": {"$timestamp": "2026-11-27T09:00:\#(59 - k)Z"}}}"#)
        }
        _ = try await db.commit(CommitRequest(writes: writes.map { try Write(json: JSON.parse($0)) }), as: .admin)
        let run = try await db.runFunctionClock(.fireTimers(now: .at("2026-11-27T10:00:00Z"), limit: 10))
        #expect(run.fired == 10)
        #expect(run.next == .at("2026-11-27T09:00:40Z"))
        let times = try await db.pendingFunctionEvents().map { try JSON.parse($0.body)["time"]?.stringValue ?? "" }
        #expect(times == times.sorted())
        #expect(times.first == "2026-11-27T09:00:30.000000Z")
        #expect(try await db.runFunctionClock(.timers(count: true)).pending == 20)
    }

    @Test func pendingTimersAreKeptAcrossARestart() async throws {
        let first = try await Self.open()
        let folder = first.dataDirectory
        try await Self.write(first.database, #"{"set": "users/u1/posts/p1", "data": {"publishAt": {"$timestamp": "2026-11-27T09:00:00Z"}}}"#)
        first.closeKeepingData()
        let second = try await Self.open(dataDirectory: folder)
        defer { second.close() }
        #expect(try await second.database.runFunctionClock(.timers(count: true)) == FunctionClockOutcome(
            fired: 0, next: .at("2026-11-27T09:00:00Z"), pending: 1))
        #expect(try await second.database.runFunctionClock(.fireTimers(now: .at("2026-11-27T09:00:01Z"), limit: 10)).fired == 1)
    }

    @Test func aTimerDeclaredLaterArmsOnWritesAfterItOnly() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let db = test.database
        try await Self.write(db, #"{"set": "users/u1/posts/p1", "data": {"publishAt": {"$timestamp": "2026-11-27T09:00:00Z"}}}"#)
        db.functions.install(try Self.file())
        #expect(try await db.runFunctionClock(.timers(count: true)).pending == 0)
        // A write that leaves the field as it was arms nothing; one that writes it (again, changed) does.
        try await Self.write(db, #"{"update": "users/u1/posts/p1", "data": {"title": "x"}}"#)
        #expect(try await db.functionTimer("publish", Self.path) == nil)
        try await Self.write(db, #"{"update": "users/u1/posts/p1", "data": {"publishAt": {"$timestamp": "2026-11-27T09:30:00Z"}}}"#)
        #expect(try await db.functionTimer("publish", Self.path) == .at("2026-11-27T09:30:00Z"))
    }

    @Test func aTimerRemovedFromTheFileDropsItsPendingTimesWithoutFiring() async throws {
        let test = try await Self.open()
        defer { test.close() }
        let db = test.database
        try await Self.write(db, #"{"set": "users/u1/posts/p1", "data": {"publishAt": {"$timestamp": "2026-11-27T09:00:00Z"}}}"#)
        db.functions.install(try FunctionsFile.parse(JSON.parse(#"{"endpoints": {}}"#)))
        #expect(try await db.runFunctionClock(.fireTimers(now: .at("2026-11-27T10:00:00Z"), limit: 10)).fired == 0)
        #expect(try await db.runFunctionClock(.timers(count: true)).pending == 0)
        #expect(try await db.pendingFunctionEvents().isEmpty)
    }
}

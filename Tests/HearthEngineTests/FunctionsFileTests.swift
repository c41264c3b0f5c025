import Foundation
import HearthCore
import HearthEngine
import HearthTesting
import Logging
import Testing

/// The functions file: what it accepts, and every mistake named by its place.
@Suite struct FunctionsFileTests {
    static let secret = "whsec_" + Base64.encode(Array(repeating: UInt8(7), count: 32))

    static func file(endpoints: String = "{\"app\": {\"url\": \"http://127.0.0.1:9000/hooks\", \"secret\": \"\(secret)\"}}",
                     _ rest: String = "") -> String {
        "{\"endpoints\": \(endpoints)\(rest.isEmpty ? "" : ", " + rest)}"
    }

    @Test func parsesEveryKind() throws {
        let text = Self.file("""
            "triggers": [{"name": "roundWritten", "on": "document.written", "path": "threads/{threadId}/rounds/{roundId}", "endpoint": "app"},
                         {"name": "welcome", "on": "user.created", "endpoint": "app"},
                         {"name": "thumbnail", "on": "file.finalized", "path": "media/{uid}/{file}", "endpoint": "app"}],
            "schedules": [{"name": "dailyReminder", "cron": "0 9 * * *", "timeZone": "Europe/Paris", "endpoint": "app"}],
            "timers": [{"name": "publishPost", "path": "posts/{postId}", "field": "scheduledAt", "endpoint": "app"}]
            """)
        let file = try FunctionsFile.parse(JSON.parse(text))
        #expect(file.endpoints["app"]?.key.count == 32)
        #expect(file.triggers.map(\.name) == ["roundWritten", "welcome", "thumbnail"])
        #expect(file.schedules.first?.timeZone.identifier == "Europe/Paris")
        #expect(file.timers.first?.field.description == "scheduledAt")
        let params = file.triggers[0].path?.match(["threads", "t1", "rounds", "r9"])
        #expect(params?.map { "\($0.0)=\($0.1)" } == ["threadId=t1", "roundId=r9"])
        #expect(file.triggers[0].path?.match(["threads", "t1", "rounds"]) == nil)
        #expect(file.triggers[0].path?.match(["threads", "t1", "posts", "r9"]) == nil)
    }

    struct Bad: Sendable, CustomStringConvertible {
        let text: String
        let error: String
        var description: String { error }
    }

    static let shortSecret = "whsec_" + Base64.encode(Array(repeating: UInt8(1), count: 16))

    static let bad: [Bad] = [
        Bad(text: "[]", error: "the functions file must be an object, got an array"),
        Bad(text: file("\"trigers\": []"), error: "unknown key 'trigers' in the functions file (expected: endpoints, triggers, schedules, timers)"),
        Bad(text: file(endpoints: "{\"app\": {\"url\": \"http://x/\", \"secret\": \"\(secret)\", \"retries\": 3}}"),
            error: "unknown key 'retries' in endpoints.app (expected: url, secret, identity)"),
        Bad(text: file(endpoints: "{\"app\": {\"url\": \"ftp://x/\", \"secret\": \"\(secret)\"}}"),
            error: "endpoints.app.url: 'ftp://x/' is not an http:// or https:// URL with a host"),
        Bad(text: file(endpoints: "{\"app\": {\"url\": \"http://x/\", \"secret\": \"\(shortSecret)\"}}"),
            error: "endpoints.app.secret: the key is 16 byte(s); it must be 24 to 64 random bytes (for example: openssl rand -base64 32)"),
        Bad(text: file(endpoints: "{\"app\": {\"url\": \"http://x/\", \"secret\": \"hunter2\"}}"),
            error: "endpoints.app.secret must be whsec_ followed by the key in base64 (a Standard Webhooks secret)"),
        Bad(text: file(endpoints: "{\"app\": {\"url\": \"http://x/\", \"secret\": \"whsec_!!!\"}}"),
            error: "endpoints.app.secret: the part after whsec_ is not base64"),
        Bad(text: file(endpoints: "{\"app\": {\"url\": \"http://x/\"}}"), error: "endpoints.app.secret is missing"),
        Bad(text: file(endpoints: "{\"app\": {\"url\": \"http://x/\", \"secret\": \"\(secret)\", \"identity\": {\"claims\": {}}}}"),
            error: "endpoints.app.identity.uid is missing"),
        Bad(text: file("\"triggers\": [{\"name\": \"a\", \"on\": \"document.created\", \"path\": \"posts/{p}\", \"endpoint\": \"app\"}, {\"name\": \"b\", \"on\": \"document.created\", \"path\": \"posts/{p}\", \"endpoint\": \"x\"}]"),
            error: "triggers[1].endpoint: unknown endpoint 'x' (declared: app)"),
        Bad(text: file("\"triggers\": [{\"name\": \"a\", \"on\": \"document.changed\", \"path\": \"posts/{p}\", \"endpoint\": \"app\"}]"),
            error: "triggers[0].on: unknown event 'document.changed' (expected one of document.created, document.updated, document.deleted, document.written, user.created, user.deleted, file.finalized, file.deleted)"),
        Bad(text: file("\"triggers\": [{\"name\": \"a\", \"on\": \"document.created\", \"path\": \"posts\", \"endpoint\": \"app\"}]"),
            error: "triggers[0].path: 'posts' has 1 segment(s), so it names a collection and can never match a document; a document path has an even number"),
        Bad(text: file("\"triggers\": [{\"name\": \"a\", \"on\": \"document.created\", \"path\": \"posts//{p}\", \"endpoint\": \"app\"}]"),
            error: "triggers[0].path: 'posts//{p}' has an empty segment; a path is ids separated by single '/'"),
        Bad(text: file("\"triggers\": [{\"name\": \"a\", \"on\": \"document.created\", \"path\": \"__x__/{p}\", \"endpoint\": \"app\"}]"),
            error: "triggers[0].path: '__x__/{p}' can never match: id '__x__' is reserved: ids matching __.*__ are not allowed"),
        Bad(text: file("\"triggers\": [{\"name\": \"a\", \"on\": \"document.created\", \"path\": \"posts/p{id}\", \"endpoint\": \"app\"}]"),
            error: "triggers[0].path: the segment 'p{id}' mixes a wildcard with text; a wildcard is a whole segment, {name}"),
        Bad(text: file("\"triggers\": [{\"name\": \"a\", \"on\": \"document.created\", \"path\": \"a/{x}/b/{x}\", \"endpoint\": \"app\"}]"),
            error: "triggers[0].path: the wildcard {x} appears twice in 'a/{x}/b/{x}'"),
        Bad(text: file("\"triggers\": [{\"name\": \"a\", \"on\": \"document.created\", \"path\": \"posts/{doc=**}\", \"endpoint\": \"app\"}]"),
            error: "triggers[0].path: '{doc=**}' is not a wildcard; one is {name}, a name of letters, digits and _ not starting with a digit (a wildcard matches one segment)"),
        Bad(text: file("\"triggers\": [{\"name\": \"a\", \"on\": \"user.created\", \"path\": \"users/{u}\", \"endpoint\": \"app\"}]"),
            error: "triggers[0].path: a user.created trigger takes no path"),
        Bad(text: file("\"triggers\": [{\"name\": \"a\", \"on\": \"document.created\", \"endpoint\": \"app\"}]"),
            error: "triggers[0].path is missing"),
        Bad(text: file("\"triggers\": [{\"name\": \"a\", \"on\": \"user.created\", \"endpoint\": \"app\"}, {\"name\": \"a\", \"on\": \"user.deleted\", \"endpoint\": \"app\"}]"),
            error: "triggers[1].name: 'a' names another trigger, schedule or timer already; names are unique"),
        Bad(text: file("\"triggers\": [{\"name\": \"a b\", \"on\": \"user.created\", \"endpoint\": \"app\"}]"),
            error: "triggers[0].name: the name 'a b' must be 1 to 100 letters, digits, _ or -"),
        Bad(text: file("\"schedules\": [{\"name\": \"s\", \"cron\": \"0 9 * *\", \"endpoint\": \"app\"}]"),
            error: "schedules[0].cron: '0 9 * *' has 4 field(s); a cron expression has 5 (minute hour day-of-month month day-of-week)"),
        Bad(text: file("\"schedules\": [{\"name\": \"s\", \"cron\": \"61 9 * * *\", \"endpoint\": \"app\"}]"),
            error: "schedules[0].cron: minute field '61': '61' is not a value from 0 to 59"),
        Bad(text: file("\"schedules\": [{\"name\": \"s\", \"cron\": \"0 9 * * FUN\", \"endpoint\": \"app\"}]"),
            error: "schedules[0].cron: day-of-week field 'FUN': 'FUN' is not a value from 0 to 7 or a name (SUN...)"),
        Bad(text: file("\"schedules\": [{\"name\": \"s\", \"cron\": \"0 17-9 * * *\", \"endpoint\": \"app\"}]"),
            error: "schedules[0].cron: hour field '17-9': the range '17-9' ends before it starts"),
        Bad(text: file("\"schedules\": [{\"name\": \"s\", \"cron\": \"*/0 * * * *\", \"endpoint\": \"app\"}]"),
            error: "schedules[0].cron: minute field '*/0': the step '0' must be a number from 1 to 59"),
        Bad(text: file("\"schedules\": [{\"name\": \"s\", \"cron\": \"0 9 * * *\", \"timeZone\": \"Mars/Olympus\", \"endpoint\": \"app\"}]"),
            error: "schedules[0].timeZone: unknown time zone 'Mars/Olympus' (an IANA name such as Europe/Paris)"),
        Bad(text: file("\"timers\": [{\"name\": \"t\", \"path\": \"posts/{p}\", \"endpoint\": \"app\"}]"),
            error: "timers[0].field is missing"),
        Bad(text: file("\"timers\": [{\"name\": \"t\", \"path\": \"posts/{p}/x\", \"field\": \"at\", \"endpoint\": \"app\"}]"),
            error: "timers[0].path: 'posts/{p}/x' has 3 segment(s), so it names a collection and can never match a document; a document path has an even number"),
    ]

    @Test(arguments: bad) func refusesWithThePlace(_ row: Bad) throws {
        do {
            _ = try FunctionsFile.parse(JSON.parse(row.text))
            Issue.record("accepted: \(row.text)")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message == row.error)
        }
    }

    @Test func cronMatchesAsCrontabDoes() throws {
        let weekdays9 = try CronExpression("0 9 * * MON-FRI", at: "cron")
        #expect(weekdays9.matches(minute: 0, hour: 9, day: 3, month: 6, weekday: 1))
        #expect(!weekdays9.matches(minute: 0, hour: 9, day: 3, month: 6, weekday: 0))
        let either = try CronExpression("30 8 1 * 0", at: "cron")  // the 1st, or any Sunday
        #expect(either.matches(minute: 30, hour: 8, day: 1, month: 2, weekday: 3))
        #expect(either.matches(minute: 30, hour: 8, day: 9, month: 2, weekday: 0))
        #expect(!either.matches(minute: 30, hour: 8, day: 9, month: 2, weekday: 3))
        let sunday7 = try CronExpression("*/15 * * * 7", at: "cron")
        #expect(sunday7.minutes == [0, 15, 30, 45] && sunday7.weekdays == [0])
    }
}

/// The signature of the Standard Webhooks specification's own example.
@Suite struct WebhookSignatureTests {
    @Test func signsAsTheSpecificationsExample() throws {
        let key = try #require(Base64.decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let signature = WebhookSignature.sign(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330,
                                              body: Array(#"{"test": 2432232314}"#.utf8), key: key)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }
}

/// The functions file in force follows the file: a reload swaps it in, a broken file keeps the old one.
@Suite struct FunctionsReloadTests {
    static func text(trigger: String) -> String {
        """
        {"endpoints": {"app": {"url": "http://127.0.0.1:9/", "secret": "\(FunctionsFileTests.secret)"}},
         "triggers": [{"name": "\(trigger)", "on": "user.created", "endpoint": "app"}]}
        """
    }

    @Test func aBrokenFileKeepsTheOldOneAndAChangeIsPickedUp() async throws {
        let path = TestFolders.make() + "/functions.json"
        try Self.text(trigger: "first").write(toFile: path, atomically: true, encoding: .utf8)
        let functions = FunctionsInForce()
        try functions.load(file: path)
        try #"{"endpoints": {}, "triggers": [{"name": "x", "on": "user.created", "endpoint": "app"}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: HearthError.self) { try functions.load(file: path) }
        #expect(functions.file?.triggers.map(\.name) == ["first"])

        var configuration = FileReloader.Configuration()
        configuration.pollInterval = .milliseconds(50)
        let reloader = FileReloader(path: path, what: "functions", configuration: configuration, logger: .init(label: "test")) {
            try functions.load(file: $0)
        }
        let task = Task { try await reloader.run() }
        defer { task.cancel() }
        try await Task.sleep(for: .milliseconds(200))
        try Self.text(trigger: "second").write(toFile: path, atomically: true, encoding: .utf8)
        for _ in 0..<200 where functions.file?.triggers.first?.name != "second" {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(functions.file?.triggers.map(\.name) == ["second"])
    }
}

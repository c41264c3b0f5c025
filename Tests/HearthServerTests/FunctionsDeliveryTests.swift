import Foundation
import HearthCore
import HearthMail
import HearthServer
import HearthTesting
import Testing

/// Document triggers delivered to a real Standard Webhooks receiver (`Tests/peers/webhook_receiver.py`, which
/// verifies each signature with the `standardwebhooks` library). One at a time: each starts a Python process.
@Suite(.serialized) struct FunctionsDeliveryTests {
    static func secret() -> String {
        "whsec_" + Base64.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
    }

    /// A functions file sending every write of `posts/{postId}` to `url`.
    static func functionsFile(url: String, secret: String) throws -> String {
        let path = TestFolders.make() + "/functions.json"
        let text = """
            {"endpoints": {"app": {"url": "\(url)", "secret": "\(secret)"}},
             "triggers": [{"name": "postWritten", "on": "document.written", "path": "posts/{postId}", "endpoint": "app"}]}
            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func configure(_ file: String) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.useFunctions(file: file)
        }
    }

    /// Runs `body` with a receiver and a server whose functions file points at it.
    static func with<T>(_ body: (WebhookTestReceiver, TestServer, HearthClient) async throws -> T,
                        configure more: (inout ServerConfiguration) -> Void = { _ in }) async throws -> T {
        try await WebhookTestReceiver.with(secret: Self.secret()) { receiver in
            let file = try Self.functionsFile(url: receiver.url, secret: receiver.secret)
            return try await TestServer.with(configure: { Self.configure(file)(&$0); more(&$0) }) { server, client in
                try await body(receiver, server, client)
            }
        }
    }


    @Test func createUpdateDeleteArriveSignedInOrderWithParamsAndBeforeAfter() async throws {
        try await Self.with { receiver, _, client in
            #expect(try await client.put("/v1/docs/posts/p1", #"{"title": "draft"}"#).status == 200)
            #expect(try await client.patch("/v1/docs/posts/p1", #"{"title": "final"}"#).status == 200)
            #expect(try await client.delete("/v1/docs/posts/p1").status == 204)
            #expect(try await client.put("/v1/docs/other/x", "{}").status == 200)
            let requests = try await receiver.waitForRequests(3)
            let errors = requests.compactMap(\.error)
            #expect(requests.allSatisfy { $0.verified }, "\(errors)")
            let bodies = requests.map(\.json)
            #expect(bodies.map { $0["name"]?.stringValue } == ["postWritten", "postWritten", "postWritten"])
            #expect(bodies.allSatisfy { $0["params"] == .object([("postId", .string("p1"))]) })
            #expect(bodies.map { $0["id"]?.stringValue ?? "" } == requests.map(\.id))
            #expect(Set(requests.map(\.id)).count == 3)
            #expect(bodies[0]["document"]?["before"] == .null)
            #expect(bodies[0]["document"]?["after"]?["data"]?["title"]?.stringValue == "draft")
            #expect(bodies[1]["document"]?["before"]?["data"]?["title"]?.stringValue == "draft")
            #expect(bodies[1]["document"]?["after"]?["data"]?["title"]?.stringValue == "final")
            #expect(bodies[2]["document"]?["before"]?["data"]?["title"]?.stringValue == "final")
            #expect(bodies[2]["document"]?["after"] == .null)
            #expect(requests.allSatisfy { $0.headers["content-type"] == "application/json" && $0.headers["webhook-timestamp"] != nil })
            _ = try await client.functionEvents("pending") { $0.isEmpty }
            // Nothing more arrives for other/x (no trigger matches it).
            #expect(receiver.received().count == 3)
        }
    }

    @Test func aFailedAttemptIsRetriedWithTheSameID() async throws {
        try await Self.with { receiver, _, client in
            try receiver.answer([.init(status: 500, body: #"{"error": "busy"}"#)], then: .init(status: 204))
            #expect(try await client.put("/v1/docs/posts/p1", "{}").status == 200)
            let requests = try await receiver.waitForRequests(2)
            #expect(requests.map(\.status) == [500, 204])
            #expect(requests[0].id == requests[1].id && requests[0].body == requests[1].body)
            #expect(requests.allSatisfy { $0.verified })
            _ = try await client.functionEvents("pending") { $0.isEmpty }
        }
    }

    @Test func anAnswersWritesAreCommittedOnce() async throws {
        try await Self.with { receiver, _, client in
            #expect(try await client.put("/v1/docs/counters/posts", #"{"n": 0}"#).status == 200)
            try receiver.answer([], then: .init(status: 200, body: #"{"writes": [{"update": "counters/posts", "data": {"n": {"$increment": 1}}}]}"#))
            #expect(try await client.put("/v1/docs/posts/p1", "{}").status == 200)
            #expect(try await client.put("/v1/docs/posts/p2", "{}").status == 200)
            _ = try await receiver.waitForRequests(2)
            _ = try await client.functionEvents("pending") { $0.isEmpty }
            #expect(try await client.get("/v1/docs/counters/posts").json?["data"]?["n"] == .int(2))
            #expect(receiver.received().count == 2)
            let metrics = try await client.get("/metrics").text
            #expect(metrics.contains("hearth_function_delivered_total 2") && metrics.contains("hearth_function_attempts_total 2"))
        }
    }

    @Test func invalidWritesMakeTheEventDeadAndARetryDeliversIt() async throws {
        try await Self.with { receiver, _, client in
            try receiver.answer([.init(status: 200, body: #"{"writes": [{"update": "missing/x", "data": {"a": 1}}]}"#)],
                                then: .init(status: 200))
            #expect(try await client.put("/v1/docs/posts/p1", "{}").status == 200)
            let dead = try await client.functionEvents("dead") { $0.count == 1 }
            let id = try #require(dead[0]["id"]?.stringValue)
            #expect(dead[0]["lastError"]?.stringValue?.hasPrefix("the answer's writes were not committed: no document to update at missing/x") == true)
            #expect(dead[0]["event"]?["params"] == .object([("postId", .string("p1"))]))
            #expect(try await client.get("/v1/docs/missing/x").status == 404)
            #expect(try await client.post("/v1/functions/events/\(id)/retry", "", as: .nobody).status == 403)
            #expect(try await client.post("/v1/functions/events/evt_nothing/retry", "").status == 404)
            #expect(try await client.get("/v1/functions/events?state=lost").status == 400)
            #expect(try await client.post("/v1/functions/events/\(id)/retry", "").status == 200)
            let requests = try await receiver.waitForRequests(2)
            #expect(requests[1].id == id && requests[1].verified)
            _ = try await client.functionEvents("dead") { $0.isEmpty }
            _ = try await client.functionEvents("pending") { $0.isEmpty }
        }
    }

    @Test func pendingEventsSurviveSIGKILLAndGoOutAfterARestartWithTheirID() async throws {
        try await WebhookTestReceiver.with(secret: Self.secret()) { receiver in
            let file = try Self.functionsFile(url: receiver.url, secret: receiver.secret)
            let (refused, delivered) = try await receiver.deliveredAfterKill(
                events: 2, arguments: ["--functions", file, "--functions-retry-delay", "0.05"]) { server async throws in
                #expect(try await server.client().put("/v1/docs/posts/p1", "{}").status == 200)
                #expect(try await server.client().put("/v1/docs/posts/p2", "{}").status == 200)
            }
            #expect(Set(delivered.map(\.id)) == Set(refused.map(\.id)))
            #expect(delivered.allSatisfy { $0.verified })
        }
    }

    /// Killed after the receiver has an event and before its acknowledgement is committed (the receiver holds its
    /// answer), the server sends the event again after the restart, with the same id, and then forgets it.
    @Test func aKillBeforeTheAcknowledgementCommitsSendsTheEventAgainWithItsID() async throws {
        let secret = Self.secret()
        let receiver = try await WebhookTestReceiver.start(secret: secret)
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            try receiver.answer([.init(status: 200, delay: 20)], then: .init(status: 200))
            let file = try Self.functionsFile(url: receiver.url, secret: secret)
            let arguments = ["--functions", file]
            let server = try await ServerProcess.start(dataDirectory: dir, arguments: arguments)
            #expect(try await server.client().put("/v1/docs/posts/p1", "{}").status == 200)
            let held = try await receiver.waitForRequests(1)
            server.signal(SIGKILL)
            _ = try await server.waitForExit()
            let restarted = try await ServerProcess.start(dataDirectory: dir, adminKey: server.adminKey, arguments: arguments)
            #expect(try await restarted.client().put("/v1/docs/posts/p2", "{}").status == 200)
            _ = try await restarted.client().functionEvents("pending") { $0.isEmpty }
            let again = receiver.received().filter { $0.id == held[0].id }
            #expect(again.count == 2 && again.allSatisfy { $0.verified && $0.body == held[0].body })
            restarted.signal(SIGTERM)
            _ = try await restarted.waitForExit()
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    /// Many events at once, several per document: every one arrives, each document's in commit order, and the
    /// queue empties (acknowledgements answered together commit together).
    @Test func manyEventsArriveOncePerAcknowledgementInEachDocumentsOrder() async throws {
        try await Self.with { receiver, _, client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for d in 0..<12 {
                    group.addTask {
                        for n in 0..<5 {
                            let status = try await client.put("/v1/docs/posts/d\(d)", #"{"n": \#(n)}"#).status
                            #expect(status == 200)
                        }
                    }
                }
                try await group.waitForAll()
            }
            _ = try await receiver.waitForRequests(60)
            _ = try await client.functionEvents("pending") { $0.isEmpty }
            let requests = receiver.received()
            #expect(requests.allSatisfy { $0.verified && $0.status == 200 })
            #expect(requests.count == 60 && Set(requests.map(\.id)).count == 60, "each event sent once, acknowledged at once")
            for d in 0..<12 {
                let values = requests.filter { $0.json["params"]?["postId"]?.stringValue == "d\(d)" }
                    .map { $0.json["document"]?["after"]?["data"]?["n"] }
                #expect(values == (0..<5).map { Optional(JSON.int($0)) }, "posts/d\(d)")
            }
        }
    }

    /// With the queue's poll out of reach, nothing but the events' own outcomes wakes the delivery: a
    /// document's later events, committed while its first was in flight, go once it is acknowledged, and a
    /// dead event retried on request goes at once.
    @Test func laterEventsAndRetriesGoWithoutWaitingForThePoll() async throws {
        try await Self.with { receiver, _, client in
            try receiver.answer([.init(status: 200, delay: 0.5),
                                 .init(status: 200, body: #"{"writes": [{"update": "missing/x", "data": {"a": 1}}]}"#)],
                                then: .init(status: 200))
            for n in 0..<5 { #expect(try await client.put("/v1/docs/posts/p1", #"{"n": \#(n)}"#).status == 200) }
            let dead = try await client.functionEvents("dead") { $0.count == 1 }
            let requests = try await receiver.waitForRequests(5, timeout: 30)
            #expect(requests.map { $0.json["document"]?["after"]?["data"]?["n"] } == (0..<5).map { Optional(JSON.int($0)) })
            let id = try #require(dead[0]["id"]?.stringValue)
            #expect(try await client.post("/v1/functions/events/\(id)/retry", "").status == 200)
            #expect(try await receiver.waitForRequests(6, timeout: 30)[5].id == id)
        } configure: { $0.functions.pollInterval = .seconds(600) }
    }

    @Test func aRefusedConnectionIsRetriedUntilTheMaximumAgeThenDead() async throws {
        let unreachable = try UnreachablePort()
        let file = try Self.functionsFile(url: "http://127.0.0.1:\(unreachable.port)/hooks", secret: Self.secret())
        try await TestServer.with(configure: { configuration in
            Self.configure(file)(&configuration)
            configuration.functions.retry.maxAge = .seconds(3)
            configuration.functions.timeout = .seconds(1)
        }) { _, client in
            #expect(try await client.put("/v1/docs/posts/p1", "{}").status == 200)
            let dead = try await client.functionEvents("dead") { $0.count == 1 }
            let reason = dead[0]["lastError"]?.stringValue ?? ""
            #expect(reason.hasPrefix("connection refused (gave up after"), "\(reason)")
            if case .int(let attempts)? = dead[0]["attempts"] { #expect(attempts >= 2) } else { Issue.record("no attempts") }
            #expect(try await client.get("/metrics").text.contains("hearth_function_dead_total 1"))
        }
    }

    @Test func anEndpointThatAnswersTooLateIsRetried() async throws {
        try await Self.with { receiver, server, client in
            try receiver.answer([.init(status: 200, delay: 3)], then: .init(status: 200))
            #expect(try await client.put("/v1/docs/posts/p1", "{}").status == 200)
            let requests = try await receiver.waitForRequests(2)
            #expect(requests[0].id == requests[1].id)
            _ = try await client.functionEvents("pending") { $0.isEmpty }
        } configure: { $0.functions.timeout = .milliseconds(500) }
    }

    /// An answer larger than the limit fails the attempt, saying so; the event is retried and goes once the
    /// answer fits.
    @Test func anAnswerLargerThanTheLimitFailsTheAttempt() async throws {
        try await Self.with { receiver, server, client in
            let large = "\"" + String(repeating: "x", count: 2000) + "\""
            try receiver.answer([], then: .init(status: 200, body: large))
            #expect(try await client.put("/v1/docs/posts/p1", "{}").status == 200)
            let pending = try await client.functionEvents("pending") { $0.first?["lastError"] != nil }
            #expect(pending[0]["lastError"]?.stringValue == "the answer is larger than 1024 bytes", "\(pending)")
            try receiver.answer([], then: .init(status: 204))
            _ = try await client.functionEvents("pending") { $0.isEmpty }
            #expect(Set(receiver.received().map(\.id)).count == 1)
        } configure: { $0.functions.maxAnswerBytes = 1024 }
    }

    /// An endpoint that holds every request gets no more than its share in flight, and another endpoint's
    /// events go out meanwhile.
    @Test func aSlowEndpointHoldsUpNoOther() async throws {
        let (slowSecret, fastSecret) = (Self.secret(), Self.secret())
        let slow = try await WebhookTestReceiver.start(secret: slowSecret)
        let fast = try await WebhookTestReceiver.start(secret: fastSecret)
        do {
            try await Self.slowAndFast(slow, slowSecret, fast, fastSecret)
        } catch {
            await slow.stop()
            await fast.stop()
            throw error
        }
        await slow.stop()
        await fast.stop()
    }

    static func slowAndFast(_ slow: WebhookTestReceiver, _ slowSecret: String, _ fast: WebhookTestReceiver,
                            _ fastSecret: String) async throws {
        try slow.answer([], then: .init(status: 200, delay: 25))
        let path = TestFolders.make() + "/functions.json"
        try """
            {"endpoints": {"slow": {"url": "\(slow.url)", "secret": "\(slowSecret)"}, "fast": {"url": "\(fast.url)", "secret": "\(fastSecret)"}},
             "triggers": [{"name": "post", "on": "document.created", "path": "posts/{p}", "endpoint": "slow"},
                          {"name": "note", "on": "document.created", "path": "notes/{n}", "endpoint": "fast"}]}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        try await TestServer.with(configure: { configuration in
            Self.configure(path)(&configuration)
            configuration.functions.concurrencyPerEndpoint = 3
            configuration.functions.timeout = .seconds(60)
        }) { _, client in
            for i in 0..<6 { #expect(try await client.put("/v1/docs/posts/p\(i)", "{}").status == 200) }
            _ = try await slow.waitForRequests(3)
            #expect(try await client.put("/v1/docs/notes/n1", "{}").status == 200)
            let notes = try await fast.waitForRequests(1)
            #expect(notes.first?.json["name"]?.stringValue == "note" && notes.first?.verified == true)
            // The slow endpoint's three answers are still to come, and no fourth request was sent meanwhile.
            #expect(slow.received().count == 3)
        }
    }

    /// A broken functions file or delivery setting stops `hearth serve` at start, naming it.
    @Test(arguments: [
        ("{\"endpoints\": {}, \"triggers\": [{\"name\": \"a\", \"on\": \"user.created\", \"endpoint\": \"x\"}]}", [String](),
         "triggers[0].endpoint: unknown endpoint 'x' (the file declares none)"),
        ("{\"endpoints\": {}}", ["--functions-retry-delay", "0"], "functionsRetryDelay must be seconds from 0.01 to 86400, got 0"),
        ("{\"endpoints\": {}}", ["--functions-timeout", "4000"], "functionsTimeout must be seconds from 0.1 to 3600, got 4000"),
        ("{\"endpoints\": {}}", ["--functions-ca-file", "/nonexistent/ca.pem"], "functionsCaFile: cannot read certificates from /nonexistent/ca.pem"),
        ("{\"endpoints\": {}}", ["--functions-ca-file", "/etc/hostname"], "functionsCaFile: "),
    ])
    func badFunctionsSettingsStopTheStart(file: String, arguments: [String], message: String) async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try file.write(toFile: folder + "/functions.json", atomically: true, encoding: .utf8)
        let (status, output) = try await HearthCLI.run(["serve", "--port", "0", "--data", folder + "/data",
                                                        "--functions", folder + "/functions.json"] + arguments)
        #expect(status != 0 && output.contains(message), "\(output)")
    }

    @Test func checkNamesTheMistakeAndItsPlace() async throws {
        let path = TestFolders.make() + "/functions.json"
        try #"{"endpoints": {}, "triggers": [{"name": "a", "on": "user.created", "endpoint": "x"}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let bad = try await HearthCLI.run(["functions", "check", path])
        #expect(bad.status != 0)
        #expect(bad.output.contains("functions file \(path): triggers[0].endpoint: unknown endpoint 'x' (the file declares none)"))
        try #"{"endpoints": {"app": {"url": "http://127.0.0.1:9/", "secret": "\#(Self.secret())"}}, "triggers": [{"name": "a", "on": "user.created", "endpoint": "app"}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let good = try await HearthCLI.run(["functions", "check", path])
        #expect(good.status == 0 && good.output.contains("OK (1 endpoint(s), 1 trigger(s), 0 schedule(s), 0 timer(s))"), "\(good.output)")
    }
}

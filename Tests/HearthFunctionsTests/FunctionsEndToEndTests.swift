import Foundation
import HearthCore
import HearthFunctions
import HearthMail
import HearthServer
import HearthTesting
import Hummingbird
import Logging
import ServiceLifecycle
import Testing

/// A Hearth server delivering document events to a `FunctionsServer` on loopback, whose handlers answer
/// writes that Hearth commits.
@Suite(.serialized) struct FunctionsEndToEndTests {
    static func secret() -> String {
        "whsec_" + Base64.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
    }

    /// What the handlers saw, and how many attempts of each event to fail first.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: [String] = []
        func add(_ id: String) -> Int {
            lock.withLock {
                ids.append(id)
                return ids.filter { $0 == id }.count
            }
        }
        var all: [String] { lock.withLock { ids } }
    }

    /// The Hearth server's URL, known once it runs, for handlers that call it.
    final class ServerURL: @unchecked Sendable {
        private let lock = NSLock()
        private var url: URL?
        var value: URL? {
            get { lock.withLock { url } }
            set { lock.withLock { url = newValue } }
        }
    }

    /// Runs `body` with a Hearth server whose functions file sends round writes to `functions`, served
    /// with `serverSecret` (the file's secret unless given).
    /// `identity`, a JSON object, is the endpoint's (docs/functions.md, Identity tokens); `rules` the server's.
    static func with(_ functions: Functions, serverSecret: String? = nil, identity: String? = nil, rules: String? = nil,
                     _ body: (_ client: HearthClient, _ port: Int) async throws -> Void) async throws {
        let secret = Self.secret()
        let port = try LoopbackPort.unused()
        let functionsServer = try FunctionsServer(secret: serverSecret ?? secret, path: "/hooks", functions: functions)
        var logger = Logger(label: "functions-test")
        logger.logLevel = .warning
        let group = ServiceGroup(configuration: .init(services: [functionsServer.application(port: port, logger: logger)],
                                                      logger: logger))
        let running = Task { try await group.run() }
        defer { running.cancel() }
        let file = TestFolders.make() + "/functions.json"
        try """
            {"endpoints": {"app": {"url": "http://127.0.0.1:\(port)/hooks", "secret": "\(secret)"\(identity.map { #", "identity": \#($0)"# } ?? "")}},
             "triggers": [{"name": "roundWritten", "on": "document.written", "path": "threads/{threadId}/rounds/{roundId}", "endpoint": "app"}]}
            """.write(toFile: file, atomically: true, encoding: .utf8)
        var rulesFile: String?
        if let rules {
            rulesFile = TestFolders.make() + "/app.rules"
            try rules.write(toFile: rulesFile!, atomically: true, encoding: .utf8)
        }
        try await TestServer.with(configure: { configuration in
            configuration.rulesFile = rulesFile
            configuration.useFunctions(file: file)
        }) { server, client in
            try await body(client, server.port)
        }
        await group.triggerGracefulShutdown()
        _ = await running.result
    }


    @Test func aHandlersWritesAreCommittedOnceThoughTheFirstAttemptFailed() async throws {
        struct Round: Codable { var title: String }
        struct NotYet: Error {}
        let log = Log()
        var functions = Functions()
        functions.onDocumentWritten("threads/{threadId}/rounds/{roundId}") { event in
            // The first attempt of each event fails: Hearth delivers it again, with the same id.
            if log.add(event.id) == 1 { throw NotYet() }
            let round = try #require(try event.document?.after?.data(as: Round.self))
            let thread = "threads/\(event.params["threadId"] ?? "")"
            return [.set(thread, ["rounds": .increment(1), "latestTitle": .value(.string(round.title))], merge: true),
                    .create("\(thread)/log/\(event.id)", ["round": .value(.string(event.params["roundId"] ?? ""))])]
        }
        try await Self.with(functions) { client, _ in
            #expect(try await client.put("/v1/docs/threads/t1/rounds/r1", #"{"title": "Round one"}"#).status == 200)
            _ = try await client.functionEvents("pending") { $0.isEmpty }
            let thread = try await client.get("/v1/docs/threads/t1").json
            #expect(thread?["data"]?["rounds"] == .int(1))
            #expect(thread?["data"]?["latestTitle"]?.stringValue == "Round one")
            // The log document was created once: a second create would have failed the commit.
            let logs = try await client.get("/v1/docs/threads/t1/log").json
            guard case .array(let documents)? = logs?["documents"] else { throw ExpectationFailure("no log: \(String(describing: logs))") }
            #expect(documents.count == 1)
            #expect(log.all.count == 2 && Set(log.all).count == 1)
            #expect(try await client.get("/v1/functions/events?state=dead").json?["events"] == .array([]))
        }
    }

    /// A handler reads with the event's token through the client, and answers with the client's `FieldValue`.
    @Test func aHandlerReadsWithTheEventsTokenThroughTheClient() async throws {
        struct Thread: Codable {
            @DocumentID var id: String?
            var title: String
        }
        let rules = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /threads/{threadId} { allow get: if request.auth.uid == 'functions'; }
              }
            }
            """
        let server = ServerURL()
        var functions = Functions()
        functions.onDocumentWritten("threads/{threadId}/rounds/{roundId}") { event in
            let auth = try #require(event.auth)
            let thread = try await auth.hearth(url: try #require(server.value)).document("threads/\(event.params["threadId"]!)")
                .getDocument(as: Thread.self)
            return [.set("threads/\(thread.id!)/seen/\(event.params["roundId"]!)",
                         ["title": .value(.string(thread.title)), "at": FieldValue.serverTimestamp()])]
        }
        try await Self.with(functions, identity: #"{"uid": "functions"}"#, rules: rules) { client, port in
            server.value = URL(string: "http://127.0.0.1:\(port)")
            #expect(try await client.put("/v1/docs/threads/t1", #"{"title": "Thread one"}"#).status == 200)
            #expect(try await client.put("/v1/docs/threads/t1/rounds/r1", #"{"title": "Round one"}"#).status == 200)
            _ = try await client.functionEvents("pending") { $0.isEmpty }
            let seen = try await client.get("/v1/docs/threads/t1/seen/r1").json?["data"]
            #expect(seen?["title"]?.stringValue == "Thread one", "\(String(describing: seen))")
            #expect(seen?["at"]?["$timestamp"] != nil, "\(String(describing: seen))")
            #expect(try await client.get("/v1/functions/events?state=dead").json?["events"] == .array([]))
        }
    }

    @Test func aDeliveryWithAnotherSecretIsRefusedAndTheHandlerNeverRuns() async throws {
        let log = Log()
        var functions = Functions()
        functions.onDocumentWritten("threads/{threadId}/rounds/{roundId}") { event in _ = log.add(event.id) }
        try await Self.with(functions, serverSecret: Self.secret()) { client, _ in
            #expect(try await client.put("/v1/docs/threads/t1/rounds/r1", "{}").status == 200)
            let pending = try await client.functionEvents("pending") { events in
                events.contains { event in
                    if case .int(let attempts)? = event["attempts"] { return attempts >= 2 }
                    return false
                }
            }
            #expect(pending[0]["lastError"]?.stringValue?.hasPrefix("HTTP 401") == true, "\(pending)")
            #expect(log.all.isEmpty)
        }
    }
}

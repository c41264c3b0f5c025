import HearthCore
import HearthEngine
import HearthTesting
import Synchronization
import Testing
import HearthServer
import HearthEngine

/// The listen protocol (docs/api.md, Live updates) over a real WebSocket on loopback: every message, every error frame,
/// credentials in each place, limits, resume and shutdown.
@Suite struct ListenProtocolTests {
    static func code(_ frame: JSON) -> String? { frame["code"]?.stringValue }

    @Test func documentAndQueryTargetsSnapshotThenChangesOnly() async throws {
        try await TestServer.with { server, client in
            _ = try await client.put("/v1/docs/rooms/r1", #"{"name": "one", "n": 1}"#)
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            try await ws.listen("d", doc: "rooms/r1")
            let first = try await ws.expect("snapshot", id: "d")
            #expect(first["initial"] == .bool(true))
            #expect(first["readTime"]?.stringValue != nil && first["resumeToken"]?.stringValue != nil)
            #expect(ws.views["d"]?.first?.fields["name"] == .string("one"))

            try await ws.listen("q", query: #"{"from": "rooms", "orderBy": [["n", "asc"]]}"#)
            let q = try await ws.expect("snapshot", id: "q")
            #expect(q["initial"] == .bool(true))
            #expect(ws.views["q"]?.count == 1)

            _ = try await client.put("/v1/docs/rooms/r0", #"{"name": "zero", "n": 0}"#)
            let added = try await ws.expect("snapshot", id: "q")
            #expect(added["initial"] == .bool(false))
            #expect(added["changes"]?.arrayCount == 1)
            #expect(added["changes"]?[0]?["type"] == .string("added") && added["changes"]?[0]?["newIndex"] == .int(0))

            _ = try await client.patch("/v1/docs/rooms/r1", #"{"name": "uno"}"#)
            var ids: Set<String> = []
            for _ in 0..<2 { ids.insert(try await ws.expect("snapshot")["id"]?.stringValue ?? "") }
            #expect(ids == ["d", "q"])
            #expect(ws.views["d"]?.first?.fields["name"] == .string("uno"))
            #expect(ws.views["q"]?.map(\.path.id) == ["r0", "r1"])

            _ = try await client.delete("/v1/docs/rooms/r1")
            for _ in 0..<2 { try await ws.expect("snapshot") }
            #expect(ws.views["d"] == [])
            #expect(ws.views["q"]?.map(\.path.id) == ["r0"])

            try await ws.unlisten("q")
            try await ws.send(#"{"type": "ping"}"#)
            try await ws.expect("pong")
            _ = try await client.put("/v1/docs/rooms/r2", #"{"n": 2}"#)
            #expect(await ws.isQuiet())
            await ws.close()
        }
    }

    @Test func credentialsInHeaderQueryOrFirstMessage() async throws {
        try await TestServer.with { server, client in
            let viaQuery = try await ListenClient.connect(port: server.port, credentials: .query(server.adminKey))
            try await viaQuery.listen("d", doc: "a/b")
            try await viaQuery.expect("snapshot", id: "d")
            await viaQuery.close()

            let anonymous = try await ListenClient.connect(port: server.port)
            try await anonymous.listen("d", doc: "a/b")
            let denied = try await anonymous.expect("error", id: "d")
            #expect(Self.code(denied) == "permission-denied")
            try await anonymous.send(#"{"type": "auth", "token": "wrong"}"#)
            #expect(Self.code(try await anonymous.expect("error")) == "unauthenticated")
            try await anonymous.send(#"{"type": "auth", "token": "\#(server.adminKey)"}"#)
            try await anonymous.listen("d", doc: "a/b")
            try await anonymous.expect("snapshot", id: "d")
            try await anonymous.send(#"{"type": "auth", "token": "\#(server.adminKey)"}"#)
            #expect(Self.code(try await anonymous.expect("error")) == "failed-precondition")
            await anonymous.close()

            await #expect(throws: (any Error).self) {
                _ = try await ListenClient.connect(port: server.port, credentials: .header("not-the-key"))
            }
            // Without an upgrade, the route explains itself; bad credentials are refused first.
            let plain = try await client.get("/v1/listen")
            #expect(plain.status == 400 && plain.errorCode == "invalid-argument")
            let badQuery = try await client.get("/v1/listen?token=nope", as: .nobody)
            #expect(badQuery.status == 401 && badQuery.errorCode == "unauthenticated")
        }
    }

    /// An upgrade whose credentials do not work is answered `401 unauthenticated` in the one error shape (not
    /// upgraded), whether the token is bogus, malformed, or was revoked, in the header or in `?token=`; an
    /// upgrade elsewhere than the listen path is `404`.
    @Test func refusedUpgradesSayWhy() async throws {
        try await TestServer.with(configure: { $0.useTestAccounts() }) { server, client in
            let session = try await client.signedUp("ws@example.com", "a-long-password-1")
            let revoked = try await client.signedUp("gone@example.com", "a-long-password-2")
            #expect(try await client.post("/v1/auth/logout", "{}", as: .token(revoked.token)).status == 204)
            let rows: [(String, [String], Int, String)] = [
                ("/v1/listen", ["Authorization: Bearer not-a-token"], 401, "unauthenticated"),
                ("/v1/listen", ["Authorization: Basic Zm9vOmJhcg=="], 401, "unauthenticated"),
                ("/v1/listen", ["Authorization: Bearer \(revoked.token)"], 401, "unauthenticated"),
                ("/v1/listen?token=nope", [], 401, "unauthenticated"),
                ("/v1/listen?token=\(revoked.token)", [], 401, "unauthenticated"),
                ("/v1/elsewhere", ["Authorization: Bearer \(session.token)"], 404, "not-found"),
            ]
            for (target, headers, status, code) in rows {
                let connection = try RawHTTPConnection(port: server.port)
                try await connection.send("GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                    + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + headers.map { $0 + "\r\n" }.joined() + "\r\n")
                let answer = try await connection.readResponse()
                #expect(answer.status == status && answer.errorCode == code, "\(target) \(headers): \(answer.status) \(answer.text)")
                #expect((answer.errorMessage ?? "").count > 5)
            }
            // The good token still upgrades.
            let ws = try await ListenClient.connect(port: server.port, credentials: .query(session.token))
            await ws.close()
        }
    }

    @Test func everyErrorFrameLeavesTheConnectionUsable() async throws {
        try await TestServer.with(configure: { $0.listen.maxTargetsPerConnection = 2 }) { server, _ in
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            let cases: [(String, String, String?)] = [
                ("{not json", "invalid-argument", nil),
                (#"{"type": "subscribe"}"#, "invalid-argument", nil),
                (#"{"type": "ping", "extra": 1}"#, "invalid-argument", nil),
                (#"{"type": "listen", "id": "x"}"#, "invalid-argument", "x"),
                (#"{"type": "listen", "id": "x", "doc": "onlyacollection"}"#, "invalid-argument", "x"),
                (#"{"type": "listen", "id": "x", "query": {"from": "a", "where": [["n", "~", 1]]}}"#, "invalid-argument", "x"),
                (#"{"type": "listen", "id": "x", "doc": "a/b", "resumeToken": "forged"}"#, "invalid-argument", "x"),
                (#"{"type": "unlisten", "id": "nothing"}"#, "not-found", "nothing"),
            ]
            for (message, code, id) in cases {
                try await ws.send(message)
                let frame = try await ws.expect("error")
                #expect(Self.code(frame) == code, "\(message)")
                #expect(frame["id"]?.stringValue == id, "\(message)")
                #expect(frame["message"]?.stringValue?.isEmpty == false)
            }
            try await ws.listen("t1", doc: "a/1")
            try await ws.expect("snapshot", id: "t1")
            try await ws.listen("t1", doc: "a/2")
            #expect(Self.code(try await ws.expect("error", id: "t1")) == "already-exists")
            try await ws.listen("t2", doc: "a/2")
            try await ws.expect("snapshot", id: "t2")
            try await ws.listen("t3", doc: "a/3")
            #expect(Self.code(try await ws.expect("error", id: "t3")) == "resource-exhausted")
            try await ws.send(#"{"type": "ping"}"#)
            try await ws.expect("pong")
            await ws.close()
        }
    }

    @Test func messageRateAndSizeLimits() async throws {
        try await TestServer.with(configure: {
            $0.listen.messagesPerSecond = 1
            $0.listen.messageBurst = 3
            $0.listen.maxMessageBytes = 1024
        }) { server, _ in
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            for _ in 0..<4 { try await ws.send(#"{"type": "ping"}"#) }
            for _ in 0..<3 { try await ws.expect("pong") }
            #expect(Self.code(try await ws.expect("error")) == "resource-exhausted")
            try await Task.sleep(for: .milliseconds(1100))
            try await ws.send(#"{"type": "ping"}"#)
            try await ws.expect("pong")

            // An oversized message ends the connection with 1009 (message too big).
            try await ws.send(#"{"type": "ping", "pad": "\#(String(repeating: "x", count: 2000))"}"#)
            while !ws.isClosed { try await Task.sleep(for: .milliseconds(10)) }
            #expect(ws.closeCode == 1009)
        }
    }

    /// Sessions that end, closed by the client or by the server, leave nothing in the change feed: no
    /// connection, target, view or index key, no connection object (its channel writer held it), and no
    /// finished load kept by the feed's task group.
    @Test func endedSessionsLeaveNothingInTheFeed() async throws {
        try await TestServer.with(configure: { $0.listen.maxMessageBytes = 1024 }) { server, client in
            for k in 0..<5 { _ = try await client.put("/v1/docs/rooms/r\(k)", #"{"n": \#(k)}"#) }
            for round in 0..<4 {
                var sessions: [ListenClient] = []
                for k in 0..<50 {
                    let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
                    switch k % 4 {
                    case 1:  // a query of its own
                        try await ws.listen("q", query: #"{"from": "rooms", "where": [["n", ">=", \#(-(round * 50 + k))]]}"#)
                        try await ws.expect("snapshot", id: "q")
                    case 2:
                        try await ws.listen("d", doc: "rooms/r\(k % 5)")
                        try await ws.expect("snapshot", id: "d")
                    case 3:  // closed by the server: an oversized message
                        try await ws.listen("d", doc: "rooms/x\(k)")
                        try await ws.send(#"{"type": "ping", "pad": "\#(String(repeating: "x", count: 2000))"}"#)
                        while !ws.isClosed { try await Task.sleep(for: .milliseconds(10)) }
                    default: break
                    }
                    sessions.append(ws)
                }
                for ws in sessions { await ws.close() }
            }
            var expected = ChangeFeed.Census.empty
            expected.holdsTasks = true  // the subscription to revocations
            let census = await server.services.feed.settledCensus(expecting: expected)
            #expect(census == expected, "\(census)")
        }
    }

    @Test func limitWindowsStayExact() async throws {
        try await TestServer.with { server, client in
            for (id, n) in [("a", 1), ("b", 2), ("c", 3), ("d", 4)] {
                _ = try await client.put("/v1/docs/scores/\(id)", #"{"n": \#(n)}"#)
            }
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            try await ws.listen("top", query: #"{"from": "scores", "orderBy": [["n", "desc"]], "limit": 2}"#)
            try await ws.expect("snapshot", id: "top")
            #expect(ws.views["top"]?.map(\.path.id) == ["d", "c"])
            _ = try await client.delete("/v1/docs/scores/d")
            let pushed = try await ws.expect("snapshot", id: "top")
            #expect(pushed["changes"]?[0]?["type"] == .string("removed"))
            #expect(pushed["changes"]?[1]?["type"] == .string("added"))
            #expect(ws.views["top"]?.map(\.path.id) == ["c", "b"])
            _ = try await client.put("/v1/docs/scores/e", #"{"n": 10}"#)
            try await ws.expect("snapshot", id: "top")
            #expect(ws.views["top"]?.map(\.path.id) == ["e", "c"])
            await ws.close()
        }
    }

    @Test func resumeReplaysOnlyWhatChangedOrResets() async throws {
        try await TestServer.with(configure: { $0.storage.changeLogRetention = 5 }) { server, client in
            _ = try await client.put("/v1/docs/items/a", #"{"n": 1}"#)
            _ = try await client.put("/v1/docs/items/b", #"{"n": 2}"#)
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            let query = #"{"from": "items", "orderBy": [["n", "asc"]]}"#
            try await ws.listen("q", query: query)
            try await ws.expect("snapshot", id: "q")
            let view = try #require(ws.views["q"])
            let token = try #require(ws.positions["q"]?.resumeToken)
            await ws.close()

            _ = try await client.patch("/v1/docs/items/a", #"{"n": 3}"#)
            _ = try await client.put("/v1/docs/items/c", #"{"n": 0}"#)
            _ = try await client.put("/v1/docs/other/x", #"{"n": 0}"#)
            let again = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            again.restore("q", view: view)
            try await again.listen("q", query: query, resumeToken: token)
            let resumed = try await again.expect("snapshot", id: "q")
            #expect(resumed["initial"] == .bool(true) && resumed["reset"] == nil)
            #expect(resumed["changes"]?.arrayCount == 2)  // a modified, c added; b untouched
            #expect(again.views["q"]?.map(\.path.id) == ["c", "b", "a"])
            let fresh = try #require(again.positions["q"]?.resumeToken)
            await again.close()

            // Past the log's retention (trimmed every 100 commits), the client gets the whole result to start over.
            for k in 0..<110 { _ = try await client.put("/v1/docs/other/y", #"{"n": \#(k)}"#) }
            let late = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            late.restore("q", view: view)
            try await late.listen("q", query: query, resumeToken: fresh)
            let reset = try await late.expect("snapshot", id: "q")
            #expect(reset["reset"] == .bool(true))
            #expect(late.views["q"]?.map(\.path.id) == ["c", "b", "a"])
            await late.close()
        }
    }

    /// The benchmark's light client speaks the same protocol: a first snapshot, then each change, handed over
    /// frame by frame on the connection's event loop; a bad token is refused at the upgrade.
    @Test func theFrameClientReceivesSnapshotsAsTheyArrive() async throws {
        try await TestServer.with { server, client in
            let frames = FrameLog()
            let ws = try await ListenFrameClient.connect(port: server.port, token: server.adminKey) { frames.add($0) }
            try await ws.listen("q", query: #"{"from": "rooms", "where": [["open", "==", true]]}"#)
            try await ws.listen("d", doc: "rooms/r1")
            // (target, initial, changes) of each snapshot once `count` arrived, in target order.
            func snapshots(_ count: Int) async throws -> [String] {
                for _ in 0..<500 where frames.snapshots.count < count { try await Task.sleep(for: .milliseconds(10)) }
                return frames.snapshots.map {
                    "\($0["id"]?.stringValue ?? "") \($0["initial"] == .bool(true)) \($0["changes"]?.arrayCount ?? -1)"
                }
            }
            #expect(try await snapshots(2).sorted() == ["d true 0", "q true 0"])
            _ = try await client.put("/v1/docs/rooms/r1", #"{"open": true}"#)
            _ = try await client.put("/v1/docs/rooms/r2", #"{"open": false}"#)
            #expect(try await snapshots(4).dropFirst(2).sorted() == ["d false 1", "q false 1"])
            try await Task.sleep(for: .milliseconds(100))
            #expect(frames.snapshots.count == 4)  // r2 is in neither target
            await ws.close()
            await #expect(throws: (any Error).self) {
                _ = try await ListenFrameClient.connect(port: server.port, token: "hat_not_a_token", onFrame: { _ in })
            }
        }
    }

    /// A message over the frame limit goes out as a text frame and continuation frames of at most the limit
    /// each, which a client joins back into the whole snapshot.
    @Test func aSnapshotOverTheFrameLimitIsSplitIntoFrames() async throws {
        try await TestServer.with(configure: { $0.listen.maxMessageBytes = 4096 }) { server, client in
            let text = String(repeating: "abcdefgh", count: 2000)
            _ = try await client.put("/v1/docs/big/one", #"{"text": "\#(text)"}"#)
            let raw = try RawHTTPConnection(port: server.port)
            try await raw.send(WebSocketWire.upgradeRequest(port: server.port, token: server.adminKey))
            #expect(try await raw.readResponse().status == 101)
            try await raw.send(bytes: WebSocketWire.clientText(#"{"type": "listen", "id": "b", "doc": "big/one"}"#))
            let bytes = try await raw.read { WebSocketWire.frames(in: $0).frames.contains(where: \.fin) }
            let frames = WebSocketWire.frames(in: bytes).frames
            #expect(frames.count >= 4, "16,000 bytes and more in frames of at most 4,096")
            #expect(frames.first?.opcode == 1 && frames.dropFirst().allSatisfy { $0.opcode == 0 })
            #expect(frames.dropLast().allSatisfy { !$0.fin && $0.payload.count == 4096 } && frames.last?.fin == true)
            let snapshot = try JSON.parse(WebSocketWire.messages(frames)[0].payload)
            #expect(snapshot["type"]?.stringValue == "snapshot")
            #expect(snapshot["changes"]?[0]?["doc"]?["data"]?["text"]?.stringValue == text)

            // The load driver's client joins the frames too.
            let received = Mutex<JSON?>(nil)
            let frameClient = try await ListenFrameClient.connect(port: server.port, token: server.adminKey,
                                                                  onFrame: { frame in received.withLock { $0 = frame } })
            try await frameClient.listen("b", doc: "big/one")
            try await Self.waitUntil { received.withLock { $0 != nil } }
            #expect(received.withLock { $0?["changes"]?[0]?["doc"]?["data"]?["text"]?.stringValue } == text)
            await frameClient.close()
        }
    }

    /// A client that stops reading costs the server its bounded queue, not memory without end: once the
    /// socket and the queue are full the connection ends with `resource-exhausted` and close code 1013 (try
    /// again later, resuming), which the client finds after what it had not read.
    @Test func aClientThatStopsReadingIsEndedNotBufferedWithoutEnd() async throws {
        try await TestServer.with(configure: {
            $0.listen.maxQueuedEvents = 8
            $0.listen.maxMessageBytes = 1 << 20
        }) { server, client in
            // Up to 40 first snapshots of a 400 KB document (16 MB, far more than the sockets hold); first
            // snapshots never merge, so each takes a place in the queue.
            _ = try await client.put("/v1/docs/big/one", #"{"text": "\#(String(repeating: "x", count: 400_000))"}"#)
            let raw = try RawHTTPConnection(port: server.port, timeout: 30, receiveBuffer: 65_536)
            try await raw.send(WebSocketWire.upgradeRequest(port: server.port, token: server.adminKey))
            #expect(try await raw.readResponse().status == 101)
            try await Self.waitUntil { server.services.feed.openConnections == 1 }
            #expect(try await InlineReadTests.metric("hearth_listen_connections", server) == 1)
            // One at a time, so that a writer that ignored the full socket would keep its queue short.
            for k in 0..<40 where server.services.feed.openConnections == 1 {
                try await raw.send(bytes: WebSocketWire.clientText(#"{"type": "listen", "id": "t\#(k)", "doc": "big/one"}"#))
                try await Task.sleep(for: .milliseconds(25))
            }
            // The server gives up on the connection while the client still reads nothing.
            try await Self.waitUntil { server.services.feed.openConnections == 0 }
            #expect(try await InlineReadTests.metric("hearth_listen_connections", server) == 0)
            let bytes = try await raw.read { WebSocketWire.frames(in: $0).frames.contains { $0.opcode == 8 } }
            let messages = WebSocketWire.messages(WebSocketWire.frames(in: bytes).frames)
            let snapshots = messages.filter { $0.opcode == 1 && (try? JSON.parse($0.payload))?["type"]?.stringValue == "snapshot" }
            #expect(snapshots.count < 40)
            let last = try #require(messages.last(where: { $0.opcode == 1 }))
            #expect(Self.code(try JSON.parse(last.payload)) == "resource-exhausted")
            #expect(messages.last?.closeCode == 1013)
        }
    }

    static func waitUntil(_ condition: () -> Bool, seconds: Double = 20) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ListenClient.Failure(description: "timed out waiting") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func gracefulShutdownClosesListenersWith1001() async throws {
        let server = try await TestServer.start()
        let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
        try await ws.listen("d", doc: "a/b")
        try await ws.expect("snapshot", id: "d")
        await server.stop()
        let frame = try await ws.expect("error")
        #expect(Self.code(frame) == "unavailable")
        while !ws.isClosed { try await Task.sleep(for: .milliseconds(10)) }
        #expect(ws.closeCode == 1001)
    }

    @Test func connectionsWithoutCredentialsOrTargetsTimeOut() async throws {
        try await TestServer.with(configure: {
            // Long enough that a loaded machine (the suite runs tests in parallel) still sends `busy`'s listen
            // in time, short enough to test.
            $0.listen.authTimeout = .seconds(1)
            $0.listen.idleTimeout = .seconds(3)
        }) { server, _ in
            let anonymous = try await ListenClient.connect(port: server.port)
            #expect(Self.code(try await anonymous.expect("error", timeout: .seconds(5))) == "unauthenticated")
            let idle = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            #expect(Self.code(try await idle.expect("error", timeout: .seconds(8))) == "deadline-exceeded")
            let busy = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            try await busy.listen("d", doc: "a/b")
            try await busy.expect("snapshot", id: "d")
            #expect(await busy.isQuiet(for: .milliseconds(4000)))
            #expect(!busy.isClosed)
            await busy.close()
        }
    }
}

extension JSON {
    /// The array's length, or nil.
    var arrayCount: Int? {
        if case .array(let items) = self { return items.count }
        return nil
    }

    /// The array's element, or nil.
    subscript(index: Int) -> JSON? {
        if case .array(let items) = self, index < items.count { return items[index] }
        return nil
    }
}

/// Frames a light client received, kept for a test to look at.
final class FrameLog: Sendable {
    private let frames = Mutex<[JSON]>([])
    func add(_ frame: JSON) { frames.withLock { $0.append(frame) } }
    var snapshots: [JSON] { frames.withLock { $0.filter { $0["type"] == .string("snapshot") } } }
}

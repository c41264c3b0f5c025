// Live-update load driver for bench/listen_bench.py: opens N listeners on one server (Hearth over WebSocket
// with HearthTesting's ListenFrameClient, or PocketBase realtime over SSE), runs a writer at a fixed rate for a
// bounded time, and prints one JSON line with write-to-delivery latency percentiles and the server's RSS.
//
//   hearth-listen-bench hearth PORT ADMIN_KEY CLIENTS query|doc SECONDS RATE SERVER_PID
//   hearth-listen-bench pocketbase PORT - CLIENTS query|doc SECONDS RATE SERVER_PID
import Foundation
import HearthCore
import HearthTesting
import NIOCore
import NIOHTTP1
import NIOPosix

/// The command line, read once.
enum Bench {
    static let args = CommandLine.arguments
    static let valid = args.count == 9 && Int(args[2]) != nil && Int(args[4]) != nil && Double(args[6]) != nil
        && Double(args[7]) != nil && Int(args[8]) != nil
    static let server = args[1]
    static let port = Int(args[2])!
    static let key = args[3]
    static let clients = Int(args[4])!
    static let mode = args[5]
    static let seconds = Double(args[6])!
    static let rate = Double(args[7])!
    static let serverPID = Int(args[8])!
    static let sharedDocs = 10
}

guard Bench.valid else {
    FileHandle.standardError.write(Data("usage: hearth-listen-bench hearth|pocketbase PORT KEY CLIENTS query|doc SECONDS RATE PID\n".utf8))
    exit(2)
}

/// Latency samples from every listener, in milliseconds.
final class Samples: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Double] = []
    func add(_ ms: Double) { lock.withLock { values.append(ms) } }
    func sorted() -> [Double] { lock.withLock { values.sorted() } }
}

@Sendable func nowMicros() -> Int64 { Timestamp.now().microseconds }

func rssKB(_ pid: Int) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
    }
    return 0
}

/// Runs `body` for 0..<n with at most `width` running at once.
func forEachConcurrently(_ n: Int, width: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(n, width) {
            let k = next
            group.addTask { try await body(k) }
            next += 1
        }
        while try await group.next() != nil {
            if next < n {
                let k = next
                group.addTask { try await body(k) }
                next += 1
            }
        }
    }
}

// MARK: Hearth

func runHearth(_ samples: Samples) async throws -> (Int, Int) {
    let http = HearthClient(port: Bench.port, adminKey: Bench.key)
    let ids = Bench.mode == "query" ? (0..<Bench.sharedDocs).map { "feed/d\($0)" } : (0..<Bench.clients).map { "own/c\($0)" }
    for start in stride(from: 0, to: ids.count, by: 500) {
        let writes = ids[start..<min(ids.count, start + 500)].map { #"{"set": "\#($0)", "data": {"sentAt": 0, "room": "r1"}}"# }
        _ = try await http.post("/v1/commit", #"{"writes": [\#(writes.joined(separator: ","))]}"#)
    }
    let before = rssKB(Bench.serverPID)
    let listeners = ListenerSet()
    try await forEachConcurrently(Bench.clients, width: 64) { k in
        // Frames are parsed and handled by a channel handler on the connection's event loop as they arrive,
        // as PocketBase's SSE events are below, so that the driver costs about the same per delivery on both
        // sides.
        let ready = ClientIDBox()
        let ws = try await ListenFrameClient.connect(port: Bench.port, token: Bench.key, onFrame: { frame in
            let received = nowMicros()
            guard case .array(let changes)? = frame["changes"] else { return }
            if frame["initial"] == .bool(true) {
                ready.set("")
                return
            }
            for change in changes {
                if case .int(let sent)? = change["doc"]?["data"]?["sentAt"], sent > 0 {
                    samples.add(Double(received - sent) / 1000)
                }
            }
        })
        if Bench.mode == "query" {
            try await ws.listen("t", query: #"{"from": "feed", "where": [["room", "==", "r1"]]}"#)
        } else {
            try await ws.listen("t", doc: "own/c\(k)")
        }
        _ = await ready.wait()
        listeners.add(ws)
    }
    try await Task.sleep(for: .milliseconds(500))
    let after = rssKB(Bench.serverPID)
    try await write(seconds: Bench.seconds, rate: Bench.rate) { k in
        let path = Bench.mode == "query" ? "feed/d\(k % Bench.sharedDocs)" : "own/c\(Int.random(in: 0..<Bench.clients))"
        _ = try await http.patch("/v1/docs/\(path)", #"{"sentAt": \#(nowMicros())}"#)
    }
    try await Task.sleep(for: .seconds(2))
    exitWith(samples, before: before, after: after)
    return (before, after)
}

final class ListenerSet: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [ListenFrameClient] = []
    func add(_ c: ListenFrameClient) { lock.withLock { items.append(c) } }
    var all: [ListenFrameClient] { lock.withLock { items } }
}

/// How long the writes took: longer than asked when the server answers the writer slowly.
nonisolated(unsafe) var writeSeconds = 0.0

/// Paces `body` at `rate` calls per second for `seconds`.
func write(seconds: Double, rate: Double, _ body: (Int) async throws -> Void) async throws {
    let start = ContinuousClock.now
    let total = Int(seconds * rate)
    for k in 0..<total {
        try await Task.sleep(until: start + .microseconds(Int64(Double(k) * 1_000_000 / rate)))
        try await body(k)
    }
    let elapsed = ContinuousClock.now - start
    writeSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func exitWith(_ samples: Samples, before: Int, after: Int) -> Never {
    let sorted = samples.sorted()
    func pct(_ p: Double) -> Double { sorted.isEmpty ? -1 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
    let perListener = Bench.clients > 0 ? Double(after - before) / Double(Bench.clients) : 0
    print(#"{"server": "\#(Bench.server)", "clients": \#(Bench.clients), "mode": "\#(Bench.mode)", "samples": \#(sorted.count), "p50_ms": \#(pct(0.5)), "p99_ms": \#(pct(0.99)), "rss_before_kb": \#(before), "rss_after_kb": \#(after), "rss_per_listener_kb": \#(perListener), "writes_per_second": \#(writeSeconds > 0 ? Double(Int(Bench.seconds * Bench.rate)) / writeSeconds : 0)}"#)
    fflush(nil)
    exit(0)
}

// MARK: PocketBase realtime (SSE)

/// Splits an SSE stream into events and hands each `data` line of a record event to `onData`.
final class SSEHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart
    var pending = ""
    let onEvent: @Sendable (String, String) -> Void

    init(onEvent: @escaping @Sendable (String, String) -> Void) { self.onEvent = onEvent }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .body(let buffer) = unwrapInboundIn(data) else { return }
        pending += String(buffer: buffer)
        while let end = pending.range(of: "\n\n") {
            let block = pending[..<end.lowerBound]
            var event = "", payload = ""
            for line in block.split(separator: "\n") {
                if line.hasPrefix("event:") { event = line.dropFirst(6).trimmingCharacters(in: .whitespaces) }
                if line.hasPrefix("data:") { payload = line.dropFirst(5).trimmingCharacters(in: .whitespaces) }
            }
            pending.removeSubrange(..<end.upperBound)
            onEvent(event, payload)
        }
    }
}

func runPocketBase(_ samples: Samples) async throws {
    let http = HearthClient(port: Bench.port, adminKey: "")
    // Go's HTTP server requires a Host header, which the test client does not add by itself.
    let host = ["Host": "127.0.0.1:\(Bench.port)"]
    let records = Bench.mode == "query" ? (0..<Bench.sharedDocs).map { "d\(String(format: "%014d", $0))" }
                                  : (0..<Bench.clients).map { "c\(String(format: "%014d", $0))" }
    try await forEachConcurrently(records.count, width: 16) { k in
        _ = try await http.post("/api/collections/feed/records", #"{"id": "\#(records[k])", "sentAt": 0}"#, headers: host, as: .nobody)
    }
    let before = rssKB(Bench.serverPID)
    let channels = ChannelSet()
    try await forEachConcurrently(Bench.clients, width: 64) { k in
        let connected = ClientIDBox()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(SSEHandler { event, data in
                        let received = nowMicros()
                        if event == "PB_CONNECT" {
                            connected.set(data)
                        } else if let json = try? JSON.parse(data), case .int(let sent)? = json["record"]?["sentAt"], sent > 0 {
                            samples.add(Double(received - sent) / 1000)
                        } else if let json = try? JSON.parse(data), case .double(let sent)? = json["record"]?["sentAt"], sent > 0 {
                            samples.add(Double(received - Int64(sent)) / 1000)
                        }
                    })
                }
            }
            .connect(host: "127.0.0.1", port: Bench.port).get()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/api/realtime")
        head.headers.add(name: "Host", value: "127.0.0.1:\(Bench.port)")
        head.headers.add(name: "Accept", value: "text/event-stream")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        let clientID = try await connected.wait()
        let topic = Bench.mode == "query" ? "feed" : "feed/\(records[k])"
        let r = try await http.post("/api/realtime", #"{"clientId": \#(quoteJSON(clientID)), "subscriptions": ["\#(topic)"]}"#, headers: host, as: .nobody)
        guard r.status == 204 else { throw ListenClient.Failure(description: "subscribe failed: \(r.status) \(r.text)") }
        channels.add(channel)
    }
    try await Task.sleep(for: .milliseconds(500))
    let after = rssKB(Bench.serverPID)
    try await write(seconds: Bench.seconds, rate: Bench.rate) { k in
        let id = Bench.mode == "query" ? records[k % Bench.sharedDocs] : records[Int.random(in: 0..<Bench.clients)]
        _ = try await http.patch("/api/collections/feed/records/\(id)", #"{"sentAt": \#(nowMicros())}"#, headers: host, as: .nobody)
    }
    try await Task.sleep(for: .seconds(2))
    exitWith(samples, before: before, after: after)
}

@Sendable func quoteJSON(_ text: String) -> String {
    guard let json = try? JSON.parse(text), case .object = json, let id = json["clientId"]?.stringValue else { return "\"\(text)\"" }
    return "\"\(id)\""
}

final class ClientIDBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: String?
    private var waiter: CheckedContinuation<String, Never>?
    func set(_ v: String) {
        let w = lock.withLock { () -> CheckedContinuation<String, Never>? in
            value = v
            defer { waiter = nil }
            return waiter
        }
        w?.resume(returning: v)
    }
    func wait() async -> String {
        await withCheckedContinuation { c in
            let v = lock.withLock { () -> String? in
                if value == nil { waiter = c }
                return value
            }
            if let v { c.resume(returning: v) }
        }
    }
}

final class ChannelSet: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [any Channel] = []
    func add(_ c: any Channel) { lock.withLock { items.append(c) } }
}

let samples = Samples()
do {
    if Bench.server == "hearth" { _ = try await runHearth(samples) } else { try await runPocketBase(samples) }
} catch {
    FileHandle.standardError.write(Data("bench failed: \(error)\n".utf8))
    exit(1)
}

// Live-update load driver for bench/listen_bench.py and bench/grpc_bench.py: opens N listeners on one server (Hearth
// over WebSocket with HearthTesting's ListenFrameClient, Hearth over Firestore's gRPC Listen, or PocketBase realtime
// over SSE), runs a writer at a fixed rate for a
// bounded time, and prints one JSON line with write-to-delivery latency percentiles and the server's RSS.
//
//   hearth-listen-bench hearth PORT ADMIN_KEY CLIENTS query|doc SECONDS RATE SERVER_PID [open|closed]
//   hearth-listen-bench grpc PORT:GRPC_PORT ADMIN_KEY CLIENTS query|doc SECONDS RATE SERVER_PID [open|closed] [LISTENERS]
//   hearth-listen-bench pocketbase PORT - CLIENTS query|doc SECONDS RATE SERVER_PID [open|closed]
//
// The writer is open-loop by default: each write is sent at its time whether or not earlier ones were
// answered, and stamped with that time, so a server that falls behind shows it in the latencies instead of
// slowing the writer down. `closed` waits for each answer before the next write (the writer slows to what
// the server answers).
//
// LISTENERS, for `grpc`, is a program that opens the gRPC listeners in place of grpc-swift's client
// (bench/listen_grpc.c, run as `LISTENERS GRPC_PORT ADMIN_KEY CLIENTS query|doc`): it says `ready` once every
// stream is current, counts deliveries until its standard input closes, and prints their figures.
import Foundation
import HearthCore
import HearthTesting
import NIOCore
import NIOHTTP1
import NIOPosix

/// The command line, read once.
enum Bench {
    static let args = CommandLine.arguments
    static let valid = (args.count == 9 || (args.count == 10 && ["open", "closed"].contains(args[9]))
                        || (args.count == 11 && server == "grpc" && ["open", "closed"].contains(args[9])))
        && ports.allSatisfy { Int($0) != nil } && ports.count == (server == "grpc" ? 2 : 1)
        && Int(args[4]) != nil && Double(args[6]) != nil && Double(args[7]) != nil && Int(args[8]) != nil
    static let server = args[1]
    /// `HTTP_PORT`, or for `grpc` `HTTP_PORT:GRPC_PORT` (the writer writes over HTTP on either face).
    static let ports = args[2].split(separator: ":")
    static let port = Int(ports[0])!
    static let grpcPort = ports.count > 1 ? Int(ports[1])! : 0
    static let key = args[3]
    static let clients = Int(args[4])!
    static let mode = args[5]
    static let seconds = Double(args[6])!
    static let rate = Double(args[7])!
    static let serverPID = Int(args[8])!
    static let openLoop = args.count < 10 || args[9] == "open"
    /// The program that opens the gRPC listeners, if not this one.
    static let listenersProgram = args.count > 10 ? args[10] : nil
    /// Connections the open-loop writer spreads its writes over.
    static let writerConnections = 8
    static let sharedDocs = 10
    /// The writer's connections get an event loop of their own: on the listeners' loops a write's request and
    /// answer would wait behind the frames of a thousand listeners, and that wait is the driver's, not the
    /// server's.
    static let writerLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
}

guard Bench.valid else {
    FileHandle.standardError.write(Data("usage: hearth-listen-bench hearth|grpc|pocketbase PORT[:GRPC_PORT] KEY CLIENTS query|doc SECONDS RATE PID [open|closed] [LISTENERS]\n".utf8))
    exit(2)
}

/// Latency samples, in milliseconds: one set per listener, each filled on its connection's event loop, so
/// that listeners never wait on one another's lock.
final class Samples: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Double] = []
    private var parts: [Samples] = []
    func add(_ ms: Double) { lock.withLock { values.append(ms) } }
    /// A set of its own for one listener, counted in `sorted`.
    func part() -> Samples {
        let part = Samples()
        lock.withLock { parts.append(part) }
        return part
    }
    func sorted() -> [Double] {
        lock.withLock { (values + parts.flatMap { $0.sorted() }).sorted() }
    }
}

/// What the listeners measured: deliveries, latency percentiles (ms), and the CPU of a listeners' program of
/// their own (0 when they run in this process).
struct Deliveries {
    var count: Int
    var p50: Double
    var p99: Double
    var programCPU = 0.0

    init(count: Int, p50: Double, p99: Double, programCPU: Double = 0) {
        (self.count, self.p50, self.p99, self.programCPU) = (count, p50, p99, programCPU)
    }

    init(_ samples: Samples) {
        let sorted = samples.sorted()
        self.init(count: sorted.count, p50: percentile(0.5, sorted), p99: percentile(0.99, sorted))
    }
}

/// The sample at index `min(n - 1, n * p)` of sorted samples, or -1 without any (listen_grpc.c takes the same).
func percentile(_ p: Double, _ sorted: [Double]) -> Double {
    sorted.isEmpty ? -1 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// Where `needle` first occurs in `bytes` at or after `from`.
@Sendable func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
    guard let first = needle.first, let base = bytes.baseAddress else { return nil }
    var at = from
    while at + needle.count <= bytes.count {
        guard let hit = memchr(base + at, Int32(first), bytes.count - needle.count + 1 - at) else { return nil }
        let k = base.distance(to: UnsafeRawPointer(hit))
        if needle.indices.allSatisfy({ bytes[k + $0] == needle[$0] }) { return k }
        at = k + 1
    }
    return nil
}

/// Calls `each` with every `"sentAt":<number>` value in a message, read from its bytes as they are. Both
/// servers' messages carry the field that way, so the driver spends the same, little, CPU per delivery on
/// either side and leaves the rest to the server.
@Sendable func sentAtValues(_ bytes: UnsafeRawBufferPointer, _ each: (Int64) -> Void) {
    let key = Array(#""sentAt":"#.utf8)
    var at = 0
    while let found = find(key, in: bytes, from: at) {
        var k = found + key.count
        while k < bytes.count, bytes[k] == 0x20 { k += 1 }
        let start = k
        var integer: Int64 = 0, plain = true
        while k < bytes.count, let c = Optional(bytes[k]), (c >= 0x30 && c <= 0x39) || c == 0x2E || c == 0x65 || c == 0x45 || c == 0x2B || c == 0x2D {
            if c >= 0x30 && c <= 0x39 { integer = integer &* 10 &+ Int64(c - 0x30) } else { plain = false }
            k += 1
        }
        if k > start {
            if plain {
                each(integer)
            } else if let value = Double(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<k]), as: UTF8.self)) {
                each(Int64(value))
            }
        }
        at = k
    }
}

/// Whether `needle` occurs in `bytes`.
@Sendable func contains(_ bytes: UnsafeRawBufferPointer, _ needle: String) -> Bool {
    find(Array(needle.utf8), in: bytes, from: 0) != nil
}

@Sendable func nowMicros() -> Int64 { Timestamp.now().microseconds }

/// The driver's own CPU time so far (user and system), to tell whether it kept up.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

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

/// Runs Hearth's side: the documents written, then `listen(k, samples)` for every listener `k` (answering once
/// its first snapshot is in), then the writer over HTTP.
func runHearth(_ samples: Samples, listen: @escaping @Sendable (Int, Samples) async throws -> Void) async throws {
    try await runHearth(open: {
        try await forEachConcurrently(Bench.clients, width: 64) { k in try await listen(k, samples.part()) }
    }, deliveries: { Deliveries(samples) })
}

/// Runs Hearth's side with the listeners opened by `open` (answering once every first snapshot is in) and
/// their figures read by `deliveries` after the writer is done.
func runHearth(open: () async throws -> Void, deliveries: () async throws -> Deliveries) async throws {
    let http = HearthClient(port: Bench.port, adminKey: Bench.key)
    let ids = Bench.mode == "query" ? (0..<Bench.sharedDocs).map { "feed/d\($0)" } : (0..<Bench.clients).map { "own/c\($0)" }
    for start in stride(from: 0, to: ids.count, by: 500) {
        let writes = ids[start..<min(ids.count, start + 500)].map { #"{"set": "\#($0)", "data": {"sentAt": 0, "room": "r1"}}"# }
        _ = try await http.post("/v1/commit", #"{"writes": [\#(writes.joined(separator: ","))]}"#)
    }
    let before = rssKB(Bench.serverPID)
    try await open()
    try await Task.sleep(for: .milliseconds(500))
    let after = rssKB(Bench.serverPID)
    let writers = (0..<Bench.writerConnections).map { _ in HearthClient(port: Bench.port, adminKey: Bench.key, eventLoopGroup: Bench.writerLoop) }
    try await write(seconds: Bench.seconds, rate: Bench.rate) { k, sentAt in
        let path = Bench.mode == "query" ? "feed/d\(k % Bench.sharedDocs)" : "own/c\(Int.random(in: 0..<Bench.clients))"
        _ = try await writers[k % writers.count].patch("/v1/docs/\(path)", #"{"sentAt": \#(sentAt)}"#)
    }
    try await Task.sleep(for: .seconds(2))
    exitWith(try await deliveries(), before: before, after: after)
}

/// Hearth's WebSocket listeners.
func runWebSocket(_ samples: Samples) async throws {
    let listeners = ListenerSet()
    try await runHearth(samples) { k, mine in
        // Frames are parsed and handled by a channel handler on the connection's event loop as they arrive,
        // as PocketBase's SSE events are below, so that the driver costs about the same per delivery on both
        // sides.
        let ready = ClientIDBox()
        let ws = try await ListenFrameClient.connect(port: Bench.port, token: Bench.key, onText: { payload in
            let received = nowMicros()
            payload.withUnsafeReadableBytes { bytes in
                if contains(bytes, #""initial":true"#) {
                    ready.set("")
                    return
                }
                sentAtValues(bytes) { sent in
                    if sent > 0 { mine.add(Double(received - sent) / 1000) }
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
}

final class ListenerSet: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [ListenFrameClient] = []
    func add(_ c: ListenFrameClient) { lock.withLock { items.append(c) } }
    var all: [ListenFrameClient] { lock.withLock { items } }
}

/// How long the writes took: longer than asked when the server answers the writer slowly.
nonisolated(unsafe) var writeSeconds = 0.0
/// How long after its time each write was answered, in milliseconds, sorted (open loop: how far the server
/// fell behind; in closed loop, empty).
nonisolated(unsafe) var answerMillis: [Double] = []

/// Paces `body` at `rate` calls per second for `seconds`, passing each call's number and the time it is
/// stamped with (microseconds since 1970). Open loop: each call starts at its time, stamped with that time,
/// whatever earlier calls are doing. Closed loop: each call waits for the one before.
func write(seconds: Double, rate: Double, _ body: @escaping @Sendable (Int, Int64) async throws -> Void) async throws {
    let start = ContinuousClock.now
    let startMicros = nowMicros()
    let total = Int(seconds * rate)
    let answers = Samples()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for k in 0..<total {
            let offset = Int64(Double(k) * 1_000_000 / rate)
            try await Task.sleep(until: start + .microseconds(offset))
            if Bench.openLoop {
                group.addTask {
                    try await body(k, startMicros + offset)
                    answers.add(Double(nowMicros() - startMicros - offset) / 1000)
                }
            } else {
                try await body(k, nowMicros())
            }
        }
        try await group.waitForAll()
    }
    let elapsed = ContinuousClock.now - start
    writeSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    answerMillis = answers.sorted()
}

func exitWith(_ deliveries: Deliveries, before: Int, after: Int) -> Never {
    let perListener = Bench.clients > 0 ? Double(after - before) / Double(Bench.clients) : 0
    print(#"{"server": "\#(Bench.server)", "clients": \#(Bench.clients), "mode": "\#(Bench.mode)", "samples": \#(deliveries.count), "p50_ms": \#(deliveries.p50), "p99_ms": \#(deliveries.p99), "rss_before_kb": \#(before), "rss_after_kb": \#(after), "rss_per_listener_kb": \#(perListener), "writes_per_second": \#(writeSeconds > 0 ? Double(Int(Bench.seconds * Bench.rate)) / writeSeconds : 0), "writer": "\#(Bench.openLoop ? "open" : "closed")", "answer_p50_ms": \#(percentile(0.5, answerMillis)), "answer_p99_ms": \#(percentile(0.99, answerMillis)), "slowest_answer_ms": \#(answerMillis.last ?? 0), "driver_cpu_s": \#(cpuSeconds() + deliveries.programCPU)}"#)
    fflush(nil)
    exit(0)
}

// MARK: PocketBase realtime (SSE)

/// Splits an SSE stream into events and hands each event's name and `data` bytes to `onEvent`, working on
/// the bytes as they arrive (no strings), as the WebSocket side does.
final class SSEHandler: ChannelInboundHandler, @unchecked Sendable {  // Touched on its event loop only.
    typealias InboundIn = HTTPClientResponsePart
    var pending: [UInt8] = []
    let onEvent: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void

    init(onEvent: @escaping (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) { self.onEvent = onEvent }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .body(let buffer) = unwrapInboundIn(data) else { return }
        pending.append(contentsOf: buffer.readableBytesView)
        var consumed = 0
        pending.withUnsafeBytes { all in
            while let blockEnd = find([0x0A, 0x0A], in: all, from: consumed) {
                var event = UnsafeRawBufferPointer(start: nil, count: 0), payload = event
                var line = consumed
                while line < blockEnd {
                    var next = line
                    while next < blockEnd, all[next] != 0x0A { next += 1 }
                    let text = UnsafeRawBufferPointer(rebasing: all[line..<next])
                    if text.starts(with: "event:".utf8) { event = Self.value(text, after: 6) }
                    if text.starts(with: "data:".utf8) { payload = Self.value(text, after: 5) }
                    line = next + 1
                }
                onEvent(event, payload)
                consumed = blockEnd + 2
            }
        }
        pending.removeFirst(consumed)
    }

    static func value(_ line: UnsafeRawBufferPointer, after n: Int) -> UnsafeRawBufferPointer {
        var start = n
        while start < line.count, line[start] == 0x20 { start += 1 }
        return UnsafeRawBufferPointer(rebasing: line[start...])
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
        let mine = samples.part()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(SSEHandler { event, data in
                        let received = nowMicros()
                        if event.elementsEqual("PB_CONNECT".utf8) {
                            connected.set(String(decoding: data, as: UTF8.self))
                            return
                        }
                        sentAtValues(data) { sent in
                            if sent > 0 { mine.add(Double(received - sent) / 1000) }
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
    let writers = (0..<Bench.writerConnections).map { _ in HearthClient(port: Bench.port, adminKey: "", eventLoopGroup: Bench.writerLoop) }
    try await write(seconds: Bench.seconds, rate: Bench.rate) { k, sentAt in
        let id = Bench.mode == "query" ? records[k % Bench.sharedDocs] : records[Int.random(in: 0..<Bench.clients)]
        _ = try await writers[k % writers.count].patch("/api/collections/feed/records/\(id)", #"{"sentAt": \#(sentAt)}"#,
                                                       headers: host, as: .nobody)
    }
    try await Task.sleep(for: .seconds(2))
    exitWith(Deliveries(samples), before: before, after: after)
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
    switch Bench.server {
    case "hearth": try await runWebSocket(samples)
    case "grpc": try await runGRPC(samples)
    default: try await runPocketBase(samples)
    }
} catch {
    FileHandle.standardError.write(Data("bench failed: \(error)\n".utf8))
    exit(1)
}

// Request load driver for bench/grpc_bench.py: the same work over Firestore's gRPC service and over the HTTP API,
// driven alike (one Swift process, CALLERS concurrent callers, each waiting for its answer before its next call),
// for SECONDS; prints one JSON line with requests/s, p50/p99 latency and the driver's own CPU time.
//
//   hearth-grpc-bench grpc|http commit|get HTTP_PORT GRPC_PORT ADMIN_KEY CALLERS CONNECTIONS SECONDS DOCS
//
// commit: one write per call, a ~300-byte document at an id of its own (gRPC `Commit`; HTTP `POST /v1/commit`).
// get: one document per call, at random among DOCS preloaded `bench/b{14 digits}` (gRPC `BatchGetDocuments` of
// one name; HTTP `GET /v1/docs/bench/b…`). The callers share CONNECTIONS connections, round robin.
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import HearthCore
import HearthFirestoreProtos
import HearthTesting
import SwiftProtobuf

/// The command line, read once.
enum Load {
    static let args = CommandLine.arguments
    static let valid = args.count == 10 && ["grpc", "http"].contains(args[1]) && ["commit", "get"].contains(args[2])
        && Int(args[3]) != nil && Int(args[4]) != nil && (Int(args[6]) ?? 0) > 0 && (Int(args[7]) ?? 0) > 0
        && Double(args[8]) != nil && (Int(args[9]) ?? 0) > 0
    static let face = args[1]
    static let workload = args[2]
    static let httpPort = Int(args[3])!
    static let grpcPort = Int(args[4])!
    static let key = args[5]
    static let callers = Int(args[6])!
    static let connections = Int(args[7])!
    static let seconds = Double(args[8])!
    static let docs = Int(args[9])!
    static let database = "projects/bench/databases/(default)"
    static let bodyText = String(repeating: "lorem ipsu", count: 20)
    static let documentJSON = #"{"title":"A day at the lake, part two","count":42,"published":true,"body":"\#(bodyText)"}"#
    /// The same document as Firestore fields.
    static let documentFields: [String: Google_Firestore_V1_Value] = [
        "title": .with { $0.stringValue = "A day at the lake, part two" },
        "count": .with { $0.integerValue = 42 },
        "published": .with { $0.booleanValue = true },
        "body": .with { $0.stringValue = bodyText },
    ]

    static func randomID() -> String { "b" + String(format: "%014d", Int.random(in: 1...docs)) }
}

guard Load.valid else {
    FileHandle.standardError.write(Data("usage: hearth-grpc-bench grpc|http commit|get HTTP_PORT GRPC_PORT KEY CALLERS CONNECTIONS SECONDS DOCS\n".utf8))
    exit(2)
}

/// One way of making a call: answers when the server has answered, throws on any failure.
protocol Caller: Sendable {
    func call(_ caller: Int, _ n: Int) async throws
}

struct GRPCCaller: Caller {
    let stub: Google_Firestore_V1_Firestore.Client<HTTP2ClientTransport.Posix>
    let metadata: Metadata

    func call(_ caller: Int, _ n: Int) async throws {
        if Load.workload == "commit" {
            _ = try await stub.commit(.with {
                $0.database = Load.database
                $0.writes = [.with {
                    $0.update = .with {
                        $0.name = "\(Load.database)/documents/bench/g\(caller)x\(n)"
                        $0.fields = Load.documentFields
                    }
                }]
            }, metadata: metadata)
        } else {
            let name = "\(Load.database)/documents/bench/\(Load.randomID())"
            try await stub.batchGetDocuments(.with {
                $0.database = Load.database
                $0.documents = [name]
            }, metadata: metadata) { response in
                var found = 0
                for try await message in response.messages where message.found.name == name { found += 1 }
                guard found == 1 else { throw RPCError(code: .notFound, message: "\(name) was not found") }
            }
        }
    }
}

struct HTTPCaller: Caller {
    let client: HearthClient

    func call(_ caller: Int, _ n: Int) async throws {
        let result: HTTPResult
        if Load.workload == "commit" {
            result = try await client.post("/v1/commit", #"{"writes": [{"set": "bench/h\#(caller)x\#(n)", "data": \#(Load.documentJSON)}]}"#)
        } else {
            result = try await client.get("/v1/docs/bench/\(Load.randomID())")
        }
        guard result.status == 200 else { throw RPCError(code: .unknown, message: "HTTP \(result.status)") }
    }
}

/// One caller's latencies, in milliseconds, kept apart so that callers never wait on one another's lock.
final class Latencies: @unchecked Sendable {  // Written by one caller's task, read after it ended.
    var values: [Double] = []
    var errors = 0
    var firstError: String?
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

var clients: [GRPCClient<HTTP2ClientTransport.Posix>] = []
var runs: [Task<Void, any Error>] = []
var pool: [any Caller] = []
for _ in 0..<Load.connections {
    if Load.face == "grpc" {
        let client = GRPCClient(transport: try .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: Load.grpcPort),
                                                              transportSecurity: .plaintext))
        runs.append(Task { try await client.runConnections() })
        clients.append(client)
        var metadata: Metadata = [:]
        metadata.addString("Bearer \(Load.key)", forKey: "authorization")
        pool.append(GRPCCaller(stub: .init(wrapping: client), metadata: metadata))
    } else {
        pool.append(HTTPCaller(client: HearthClient(port: Load.httpPort, adminKey: Load.key)))
    }
}
let callersPool = pool

// A short warm-up on every connection, so that connecting is not measured.
try await withThrowingTaskGroup(of: Void.self) { group in
    for k in 0..<Load.callers { group.addTask { for n in 0..<20 { try await callersPool[k % callersPool.count].call(k, -1 - n) } } }
    try await group.waitForAll()
}

let cpuBefore = cpuSeconds()
let start = ContinuousClock.now
let deadline = start + .milliseconds(Int(Load.seconds * 1000))
let latencies = (0..<Load.callers).map { _ in Latencies() }
await withTaskGroup(of: Void.self) { group in
    for k in 0..<Load.callers {
        group.addTask {
            let mine = latencies[k], caller = callersPool[k % callersPool.count]
            var n = 0
            while ContinuousClock.now < deadline {
                let began = ContinuousClock.now
                do {
                    try await caller.call(k, n)
                    let took = ContinuousClock.now - began
                    mine.values.append(Double(took.components.attoseconds) / 1e15 + Double(took.components.seconds) * 1000)
                } catch {
                    mine.errors += 1
                    if mine.firstError == nil { mine.firstError = "\(error)" }
                }
                n += 1
            }
        }
    }
}
let elapsed = ContinuousClock.now - start
let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let driverCPU = cpuSeconds() - cpuBefore
let sorted = latencies.flatMap(\.values).sorted()
let errors = latencies.reduce(0) { $0 + $1.errors }
func pct(_ p: Double) -> Double { sorted.isEmpty ? -1 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
let firstError = latencies.compactMap(\.firstError).first.map { #", "first_error": \#(quote($0))"# } ?? ""
func quote(_ s: String) -> String {
    "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        .replacingOccurrences(of: "\n", with: " ") + "\""
}
print(#"{"face": "\#(Load.face)", "workload": "\#(Load.workload)", "callers": \#(Load.callers), "connections": \#(Load.connections), "requests": \#(sorted.count), "errors": \#(errors), "seconds": \#(wall), "rps": \#(Double(sorted.count) / wall), "p50_ms": \#(pct(0.5)), "p99_ms": \#(pct(0.99)), "driver_cpu_s": \#(driverCPU)\#(firstError)}"#)
fflush(nil)
for client in clients { client.beginGracefulShutdown() }
exit(0)

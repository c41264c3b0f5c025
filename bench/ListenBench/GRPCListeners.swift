import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import HearthFirestoreProtos
import HearthTesting
import SwiftProtobuf

// MARK: Hearth over Firestore's gRPC Listen

/// Hearth's listeners over gRPC: each its own client and HTTP/2 connection (as separate apps have), one
/// `Listen` stream with one target, kept open (not half-closed) until the driver exits. With a listeners'
/// program, that program opens them the same way instead.
func runGRPC(_ samples: Samples) async throws {
    if let program = Bench.listenersProgram {
        let listeners = try ListenersProgram(program)
        return try await runHearth(open: { try await listeners.ready() }, deliveries: { try await listeners.finish() })
    }
    let clients = GRPCClientSet()
    let database = "projects/bench/databases/(default)"
    try await runHearth(samples) { k, mine in
        let client = GRPCClient(transport: try .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: Bench.grpcPort),
                                                              transportSecurity: .plaintext))
        clients.add(client, Task { try await client.runConnections() })
        let stub = Google_Firestore_V1_Firestore.Client(wrapping: client)
        var metadata: Metadata = [:]
        metadata.addString("Bearer \(Bench.key)", forKey: "authorization")
        var target = Google_Firestore_V1_Target()
        target.targetID = 1
        if Bench.mode == "query" {
            target.query = .with {
                $0.parent = "\(database)/documents"
                $0.structuredQuery = .with {
                    $0.from = [.with { $0.collectionID = "feed" }]
                    $0.where = .with {
                        $0.fieldFilter = .with {
                            $0.field = .with { $0.fieldPath = "room" }
                            $0.op = .equal
                            $0.value = .with { $0.stringValue = "r1" }
                        }
                    }
                }
            }
        } else {
            target.documents = .with { $0.documents = ["\(database)/documents/own/c\(k)"] }
        }
        let ready = ClientIDBox()
        let request = Google_Firestore_V1_ListenRequest.with { $0.database = database; $0.addTarget = target }
        clients.add(Task {
            do {
                try await listen(stub, metadata, request, mine, ready)
            } catch {
                FileHandle.standardError.write(Data("bench failed: a Listen stream ended: \(error)\n".utf8))
                exit(1)
            }
        })
        _ = await ready.wait()
    }
}

/// One listener's stream: its latencies into `mine`, `ready` set at its first `CURRENT`.
func listen(_ stub: Google_Firestore_V1_Firestore.Client<HTTP2ClientTransport.Posix>, _ metadata: Metadata,
            _ request: Google_Firestore_V1_ListenRequest, _ mine: Samples, _ ready: ClientIDBox) async throws {
    try await stub.listen(metadata: metadata, requestProducer: { writer in
        try await writer.write(request)
        try await Task.sleep(for: .seconds(86_400))
    }, onResponse: { response in
        for try await message in response.messages {
            let received = nowMicros()
            switch message.responseType {
            case .documentChange(let change)?:
                let sent = change.document.fields["sentAt"]?.integerValue ?? 0
                if sent > 0 { mine.add(Double(received - sent) / 1000) }
            case .targetChange(let change)? where change.targetChangeType == .current:
                ready.set("")
            default:
                break
            }
        }
    })
}

/// The clients and their tasks, kept until the driver exits.
final class GRPCClientSet: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Any] = []
    func add(_ client: GRPCClient<HTTP2ClientTransport.Posix>, _ connections: Task<Void, any Error>) {
        lock.withLock { items.append(client); items.append(connections) }
    }
    func add(_ call: Task<Void, Never>) { lock.withLock { items.append(call) } }
}

/// The listeners' program (bench/listen_grpc.c), run beside this one: it opens the streams, says `ready`, and
/// prints its figures as one JSON line when its standard input closes. Its pipes are read on a thread of
/// their own, off the concurrency pool the writer runs on.
final class ListenersProgram: @unchecked Sendable {
    let process = Process()
    let input = Pipe(), output = Pipe()

    init(_ path: String) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [String(Bench.grpcPort), Bench.key, String(Bench.clients), Bench.mode]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// The next line of the program's output; failing the bench if it ended without one (its standard error,
    /// shared with this process's, says why).
    func line() async throws -> String {
        let handle = output.fileHandleForReading
        return try await withCheckedThrowingContinuation { (done: CheckedContinuation<String, any Error>) in
            Thread.detachNewThread {
                var bytes: [UInt8] = []
                while true {
                    let chunk = handle.readData(ofLength: 1)
                    if chunk.isEmpty {
                        return done.resume(throwing: ListenClient.Failure(description: "the listeners' program ended"))
                    }
                    if chunk[0] == 0x0A { return done.resume(returning: String(decoding: bytes, as: UTF8.self)) }
                    bytes.append(chunk[0])
                }
            }
        }
    }

    func ready() async throws {
        let said = try await line()
        guard said == "ready" else { throw ListenClient.Failure(description: "the listeners' program said \(said)") }
    }

    func finish() async throws -> Deliveries {
        try input.fileHandleForWriting.close()
        let said = try await line()
        guard let json = try? JSONSerialization.jsonObject(with: Data(said.utf8)) as? [String: Any],
              let count = json["samples"] as? Int, let p50 = json["p50_ms"] as? Double, let p99 = json["p99_ms"] as? Double,
              let cpu = json["driver_cpu_s"] as? Double else {
            throw ListenClient.Failure(description: "the listeners' program said \(said)")
        }
        process.waitUntilExit()
        return Deliveries(count: count, p50: p50, p99: p99, programCPU: cpu)
    }
}

import Foundation
import HearthCore
import HearthTesting
import Testing

/// The server's memory is bounded by its configuration, not by how many documents it was ever sent: a real
/// `hearth serve` takes large commits and its resident memory stays within a bound over what it had after the
/// first few of them. A bound, not a timing: the load's speed does not matter.
@Suite(.serialized) struct MemoryBoundTests {
    /// One load: `documents` documents in commits of `batch` `set` writes on `connections` connections, the
    /// RSS taken after the first `baseline` documents, and the growth over it allowed at the end.
    struct Load: Sendable, CustomTestStringConvertible {
        var name: String
        var documents: Int
        var batch: Int
        var connections: Int
        var baseline: Int
        var allowedGrowth: Int
        var arguments: [String] = []
        var testDescription: String { name }
    }

    static let loads: [Load] = [
        Load(name: "200,000 new documents, commits of 500, two connections", documents: 200_000, batch: 500, connections: 2,
             baseline: 10_000, allowedGrowth: 64 << 20),
    ]

    /// The bench document of `bench/query_bench.py scale`: six fields and a two-element array; one in ten is
    /// nested under an owner, so collection-group scopes are written too.
    static func write(_ i: Int) -> String {
        let path = i % 10 == 0 ? "owners/o\(i % 1000)/notes/n\(i)" : "items/i\(i)"
        let score = (i &* 7_919) % 1_000_000
        return #"{"set": "\#(path)", "data": {"cat": "c\#(i % 100)", "score": \#(score), "n": \#(i), "#
            + #""tags": ["t\#(i % 200)", "t\#((i / 7) % 200)"], "title": "item \#(i)", "flag": \#(i % 3 == 0)}}"#
    }

    /// Sends documents `range` in commits of `load.batch`, spread over `load.connections` clients.
    static func send(_ range: Range<Int>, _ load: Load, to server: ServerProcess) async throws {
        let starts = Array(stride(from: range.lowerBound, to: range.upperBound, by: load.batch))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for c in 0..<load.connections {
                group.addTask {
                    let client = server.client()
                    var failure: String?
                    for (k, start) in starts.enumerated() where k % load.connections == c && failure == nil {
                        let writes = (start..<min(range.upperBound, start + load.batch)).map(write).joined(separator: ",")
                        let r = try await client.post("/v1/commit", #"{"writes": [\#(writes)]}"#)
                        if r.status != 200 { failure = "commit at \(start): \(r.status) \(r.text)" }
                    }
                    await client.close()
                    if let failure { throw ExpectationFailure(failure) }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test(arguments: loads) func residentMemoryStaysBounded(load: Load) async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try await ServerProcess.start(dataDirectory: dir, arguments: load.arguments)
        try await Self.send(0..<load.baseline, load, to: server)
        let baseline = try server.residentBytes()
        try await Self.send(load.baseline..<load.documents, load, to: server)
        let end = try server.residentBytes()
        let growth = end - baseline
        #expect(growth < load.allowedGrowth,
                "RSS grew by \(growth >> 20) MiB (from \(baseline >> 20) to \(end >> 20) MiB) over \(load.documents - load.baseline) documents")
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
    }
}

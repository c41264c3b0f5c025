import Foundation
import HearthCore
import HearthStore
import Testing

/// Changes another process commits to the same database (as `hearth fixtures load` or `hearth users` do
/// beside a running server) reach this store's commit hook too: each once, in the change log's order,
/// interleaved correctly with this store's own commits.
@Suite struct ForeignChangesTests {
    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var changes: [ChangeRecord] = []
        func add(_ more: [ChangeRecord]) { lock.withLock { changes += more } }
        var all: [ChangeRecord] { lock.withLock { changes } }
    }

    @Test(arguments: [Store.Configuration.Synchronous.normal, .full])
    func otherProcessesChangesReachTheHookInLogOrder(synchronous: Store.Configuration.Synchronous) async throws {
        let directory = NSTemporaryDirectory() + "hearth-foreign-" + makeAutoID()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Store.Configuration(dataDirectory: directory)
        configuration.synchronous = synchronous
        let server = try Store(configuration: configuration)
        defer { server.close() }
        let other = try Store(configuration: configuration)  // another process's store on the same files
        let collected = Collected()
        server.onCommit { collected.add($0) }

        var written: [String] = []
        for i in 0..<24 {
            // Runs of the other process's commits between the server's, and some with nothing in between.
            let path = "things/t\(i)"
            try await put(path, #"{"i": \#(i)}"#, in: i % 3 == 0 ? server : other)
            written.append(path)
            if i % 5 == 0 { try await Task.sleep(for: .milliseconds(Int(Double.random(in: 0...400)))) }
        }
        // The last ones came from the other process: they arrive with the next poll.
        let deadline = ContinuousClock.now + .seconds(5)
        while collected.all.count < written.count && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let changes = collected.all
        #expect(changes.map(\.path.description) == written)
        #expect(changes.map(\.sequence) == Array(1...Int64(written.count)))
        #expect(changes.allSatisfy { $0.document != nil })
        other.close()
    }
}

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

    /// What the hooks were told, in order.
    final class Told: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [String] = []
        func add(_ more: [String]) { lock.withLock { items += more } }
        var all: [String] { lock.withLock { items } }
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

    /// When another process's commit trims log rows this store never read, the store cannot name what changed:
    /// it says so (`onChangesMissed`) before handing over the changes after the gap, and forgets every decoded
    /// document, so a rule's `get()` reads the other process's writes at once.
    @Test func changesTrimmedBeforeThisStoreReadThemAreReportedAsMissed() async throws {
        let directory = NSTemporaryDirectory() + "hearth-foreign-" + makeAutoID()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Store.Configuration(dataDirectory: directory)
        configuration.synchronous = .normal
        let server = try Store(configuration: configuration)
        defer { server.close() }
        configuration.changeLogRetention = 2
        configuration.changeLogTrimInterval = 1
        let other = try Store(configuration: configuration)
        defer { other.close() }
        let told = Told()
        server.onCommit { changes in told.add(changes.map(\.path.description)) }
        server.onChangesMissed { told.add(["(missed)"]) }

        try await put("settings/s", #"{"open": true}"#, in: server)
        #expect(try server.ruleLookup(try DocumentPath("settings/s"))?.fields["open"] == .bool(true))  // cached now
        // One commit of 6 changes, of which the log keeps 2.
        try await other.write { context in
            let t = context.nextCommitTime()
            for (path, body) in [("settings/s", #"{"open": false}"#), ("a/1", "{}"), ("a/2", "{}"), ("a/3", "{}"), ("a/4", "{}"), ("a/5", "{}")] {
                try context.put(StoredDocument(path: try DocumentPath(path), data: Array(body.utf8), createTime: t, updateTime: t),
                                commitTime: t)
            }
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while told.all.count < 4 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(told.all == ["settings/s", "(missed)", "a/4", "a/5"])
        #expect(try server.ruleLookup(try DocumentPath("settings/s"))?.fields["open"] == .bool(false))
    }
}

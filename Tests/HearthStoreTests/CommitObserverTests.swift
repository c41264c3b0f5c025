import Foundation
import HearthCore
import HearthStore
import HearthTesting
import Testing

/// A store's commit observers are a list: each hears every commit, once, in the change log's order, at either
/// durability; a second observer does not replace the first, and a removed one hears nothing more.
@Suite struct CommitObserverTests {
    final class Collected: CommitObserver, @unchecked Sendable {
        private let lock = NSLock()
        private var changes: [ChangeRecord] = []
        func committed(_ more: [ChangeRecord]) { lock.withLock { changes += more } }
        var all: [ChangeRecord] { lock.withLock { changes } }

        /// Waits (generously) until `count` changes have arrived.
        func wait(for count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while all.count < count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    @Test(arguments: [Store.Configuration.Synchronous.normal, .full])
    func everyObserverHearsEveryCommitInLogOrder(synchronous: Store.Configuration.Synchronous) async throws {
        let directory = TestFolders.path("hearth-observers")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Store.Configuration(dataDirectory: directory)
        configuration.synchronous = synchronous
        let store = try Store(configuration: configuration)
        defer { store.close() }
        let first = Collected(), second = Collected()
        store.add(commitObserver: first)
        store.add(commitObserver: second)

        // Commits one at a time, then many at once (group commits).
        var written: [String] = []
        for i in 0..<8 {
            try await put("things/t\(i)", #"{"i": \#(i)}"#, in: store)
            written.append("things/t\(i)")
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 8..<40 { group.addTask { try await put("things/t\(i)", #"{"i": \#(i)}"#, in: store) } }
            try await group.waitForAll()
        }
        for observer in [first, second] {
            try await observer.wait(for: 40)
            #expect(observer.all.map(\.sequence) == Array(1...40))
            #expect(observer.all.allSatisfy { $0.document != nil })
        }
        #expect(first.all.prefix(8).map(\.path.description) == written)
        #expect(first.all.map(\.path) == second.all.map(\.path))

        store.remove(commitObserver: first)
        try await put("things/last", "{}", in: store)
        try await second.wait(for: 41)
        #expect(second.all.last?.path.description == "things/last")
        #expect(first.all.count == 40)
    }
}

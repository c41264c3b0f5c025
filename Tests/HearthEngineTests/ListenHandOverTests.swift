import Foundation
import HearthCore
@testable import HearthEngine
import HearthStore
import HearthTesting
import Testing

/// The feed's bookkeeping driven by hand, message by message, to place a load exactly where a race puts it.
@Suite struct ListenHandOverTests {
    /// While no target is open, hand-overs are only kept (`CommitHandOver`); the next target gets them with
    /// its first result's position deciding. Handed a result read before the kept commit, the target must
    /// still get that commit after its first snapshot. The writer hands a commit over before acknowledging
    /// it, so the commit below is kept by the time `commit` returns.
    @Test func aCommitKeptWhileNoTargetWasOpenReachesTheNextTarget() async throws {
        let directory = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Store.Configuration(dataDirectory: directory)
        configuration.synchronous = .normal
        let store = try Store(configuration: configuration)
        defer { store.close() }
        let database = Database(storage: SQLiteDocumentStorage(store))
        // Not running: its messages are handed to a FeedState below, one at a time.
        let feed = ChangeFeed(database: database)
        let state = FeedState(feed: feed)
        var messages = feed.messages.makeAsyncIterator()

        let path = try DocumentPath("events/e1")
        _ = try await database.commit(CommitRequest(writes: [Write(kind: .set(merge: nil), path: path,
                                                                   fields: ["n": .int(1)])]), as: .admin)
        let connection = feed.connect(identity: .admin)
        try connection.listen(id: "t", target: .query(try Query(jsonText: #"{"from": "events"}"#)), resumeToken: nil)
        var loads: [LoadRequest] = []
        // The commit was kept, not queued: the next messages are the connection's and its target's.
        for _ in 0..<2 {
            guard let message = await messages.next() else { Issue.record("the feed's messages ended"); return }
            if case .commit = message { Issue.record("a commit was queued while no target was open") }
            state.handle(message, load: { loads.append($0) }, reauthorize: { _ in })
        }
        #expect(loads.count == 1)
        guard let load = loads.first else { return }
        // The first result as read before the commit was visible: empty, at the position before it.
        let before = LogPosition(sequence: 0, commitTime: Timestamp(microseconds: 0))
        state.handle(.loaded(view: load.view, generation: load.generation,
                             result: .success(LoadResult(position: before, target: load.target, current: [], previous: nil))),
                     load: { loads.append($0) }, reauthorize: { _ in })
        guard let batch = await connection.nextBatch(), batch.count == 2,
              case .snapshot(let first) = batch[0], case .snapshot(let next) = batch[1] else {
            Issue.record("expected the first snapshot and one with the kept commit")
            return
        }
        #expect(first.initial && first.changes.isEmpty)
        #expect(!next.initial && next.changes.map(\.kind) == [.added] && next.changes.map(\.document.path) == [path])

        // With the target open, commits are queued for the loop again.
        _ = try await database.commit(CommitRequest(writes: [Write(kind: .delete, path: path)]), as: .admin)
        guard case .commit(let records)? = await messages.next() else {
            Issue.record("expected the commit to be queued")
            return
        }
        #expect(records.map(\.path) == [path])
    }
}

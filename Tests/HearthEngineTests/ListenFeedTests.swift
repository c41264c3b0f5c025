import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import HearthStore
import HearthTesting
import ServiceLifecycle
import Synchronization
import Testing

/// The change feed without sockets: rules at add time and on each change, revocation, and the bounded queue
/// of a client that does not read.
@Suite struct ListenFeedTests {
    /// A store, an engine and a running feed over a fresh folder.
    final class Harness: Sendable {
        let store: Store
        let database: Database
        let feed: ChangeFeed
        let task: Task<Void, any Error>
        let directory: String

        init(configuration: ListenConfiguration = .init(), authorizer: ListenAuthorizer? = nil, revocations: RevocationHub? = nil,
             identities: (@Sendable (ListenSession) async throws -> Identity?)? = nil) throws {
            directory = TestFolders.make()
            var storeConfiguration = Store.Configuration(dataDirectory: directory)
            storeConfiguration.synchronous = .normal
            store = try Store(configuration: storeConfiguration)
            database = Database(storage: SQLiteDocumentStorage(store))
            feed = ChangeFeed(database: database, configuration: configuration, authorizer: authorizer, revocations: revocations,
                              identities: identities)
            let feed = self.feed
            task = Task { try await feed.run() }
        }

        func set(_ path: String, _ json: String) async throws {
            let fields = try Value.decodeFields(JSON.parse(json))
            _ = try await database.commit(CommitRequest(writes: [Write(kind: .set(merge: nil), path: try DocumentPath(path), fields: fields)]), as: .admin)
        }

        func stop() async {
            task.cancel()
            _ = try? await task.value
            store.close()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func next(_ connection: ListenConnection, within limit: Duration = .seconds(60)) async throws -> ListenEvent {
        try await withThrowingTaskGroup(of: ListenEvent?.self) { group in
            group.addTask { await connection.next() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            guard let event = first else { throw ListenClient.Failure(description: "no event within \(limit)") }
            return event
        }
    }

    static func isEnd(_ event: ListenEvent?) -> Bool {
        if case .none = event { return true }
        return false
    }

    @Test func rulesAtAddTimeAndOnEveryChange() async throws {
        let authorizer = ListenAuthorizer(
            admitTarget: { _, target in
                if case .document(let path) = target, path.segments[0] == "secret" { throw HearthError.permissionDenied() }
                return target
            },
            authorizeRead: { _, _, doc in
                if doc?.fields["private"] == .bool(true) { throw HearthError.permissionDenied("the document is private now") }
            })
        let h = try Harness(authorizer: authorizer)
        let alice = Identity.user(uid: "alice", token: [:])
        let connection = h.feed.connect(identity: alice)
        #expect(throws: HearthError.permissionDenied()) {
            try connection.listen(id: "s", target: .document(try DocumentPath("secret/x")), resumeToken: nil)
        }
        try await h.set("notes/n1", #"{"text": "hi"}"#)
        try connection.listen(id: "n", target: .document(try DocumentPath("notes/n1")), resumeToken: nil)
        guard case .snapshot(let first) = try await Self.next(connection) else { Issue.record("expected a snapshot"); return }
        #expect(first.initial && first.changes.count == 1)
        try await h.set("notes/n1", #"{"text": "secret", "private": true}"#)
        guard case .targetError(let id, let error) = try await Self.next(connection) else { Issue.record("expected an error"); return }
        #expect(id == "n" && error.code == .permissionDenied)
        #expect(connection.targetCount == 0)
        await h.stop()
    }

    @Test func revokingTheSessionEndsItsConnectionsOnly() async throws {
        let hub = RevocationHub()
        let h = try Harness(revocations: hub)
        let revoked = h.feed.connect(identity: .admin, session: ListenSession(uid: "u1", sessionID: "s1"))
        let other = h.feed.connect(identity: .admin, session: ListenSession(uid: "u1", sessionID: "s2"))
        try revoked.listen(id: "a", target: .document(try DocumentPath("a/b")), resumeToken: nil)
        try other.listen(id: "a", target: .document(try DocumentPath("a/b")), resumeToken: nil)
        _ = try await Self.next(revoked)
        _ = try await Self.next(other)
        // The feed subscribes to the hub when it starts; wait for that before publishing.
        while hub.subscriberCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        hub.publish(RevocationEvent(uid: "u1", sessionIDs: ["s1"], reason: .loggedOut))
        guard case .closed(let error, let code) = try await Self.next(revoked) else { Issue.record("expected a close"); return }
        #expect(error.code == .unauthenticated && code == 1008)
        #expect(Self.isEnd(await revoked.next()))
        try await h.set("a/b", #"{"x": 1}"#)
        guard case .snapshot(let s) = try await Self.next(other) else { Issue.record("expected a snapshot"); return }
        #expect(s.changes.count == 1 && !s.initial)
        await h.stop()
    }

    /// When revocation news was lost, every connection's session is looked up again: those that no longer
    /// work end, the others carry on, and so do those whose lookup failed (not knowing is no reason to end).
    @Test func lostRevocationNewsHasEverySessionLookedUpAgain() async throws {
        let hub = RevocationHub()
        struct LookupFailed: Error {}
        let h = try Harness(revocations: hub, identities: { session in
            switch session.sessionID {
            case "ended": return nil
            case "unknown": throw LookupFailed()
            default: return .admin
            }
        })
        let ended = h.feed.connect(identity: .admin, session: ListenSession(uid: "u1", sessionID: "ended"))
        let working = h.feed.connect(identity: .admin, session: ListenSession(uid: "u2", sessionID: "working"))
        let unknown = h.feed.connect(identity: .admin, session: ListenSession(uid: "u3", sessionID: "unknown"))
        for connection in [ended, working, unknown] {
            try connection.listen(id: "a", target: .document(try DocumentPath("a/b")), resumeToken: nil)
            _ = try await Self.next(connection)
        }
        while hub.subscriberCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        hub.publish(.sessionsUnknown)
        guard case .closed(let error, let code) = try await Self.next(ended) else { Issue.record("expected a close"); return }
        #expect(error.code == .unauthenticated && code == 1008)
        #expect(error.message.contains("session-ended"), "\(error.message)")
        try await h.set("a/b", #"{"x": 1}"#)
        for connection in [working, unknown] {
            guard case .snapshot(let s) = try await Self.next(connection) else { Issue.record("expected a snapshot"); return }
            #expect(s.changes.count == 1)
        }
        await h.stop()
    }

    /// A subscriber that falls further behind than the hub buffers loses its oldest events and is told to
    /// look every session up again, last, so that no revocation goes unnoticed.
    @Test func aSubscriberTooFarBehindIsToldToLookEverySessionUpAgain() async {
        let hub = RevocationHub()
        let events = hub.events()
        for k in 0..<(RevocationHub.bufferLimit + 10) {
            hub.publish(RevocationEvent(uid: "u\(k)", sessionIDs: nil, reason: .revokedByAdmin))
        }
        var received: [RevocationEvent] = []
        for await event in events {
            received.append(event)
            if received.count == RevocationHub.bufferLimit { break }
        }
        // Once, after the first loss: the one told stays in the buffer while later events push older ones out.
        #expect(received.filter { $0 == .sessionsUnknown }.count == 1)
        #expect(received.suffix(10).contains(.sessionsUnknown))
        #expect(RevocationEvent.sessionsUnknown.affects(sessionID: "any", uid: "anyone"))
        #expect(!RevocationEvent.sessionsUnknown.revokes)
    }

    /// A connection is ended by the revocation of its session even before it adds a target, so that it
    /// cannot add one afterwards.
    @Test func revokingTheSessionEndsAConnectionWithoutTargets() async throws {
        let hub = RevocationHub()
        let h = try Harness(revocations: hub)
        let idle = h.feed.connect(identity: .admin, session: ListenSession(uid: "u1", sessionID: "s1"))
        while hub.subscriberCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        hub.publish(RevocationEvent(uid: "u1", sessionIDs: ["s1"], reason: .revokedByAdmin))
        guard case .closed(let error, let code) = try await Self.next(idle) else { Issue.record("expected a close"); return }
        #expect(error.code == .unauthenticated && code == 1008)
        #expect(throws: HearthError.self) { try idle.listen(id: "a", target: .document(try DocumentPath("a/b")), resumeToken: nil) }
        await h.stop()
    }

    @Test func aClientThatDoesNotReadIsToldToResume() async throws {
        var configuration = ListenConfiguration()
        configuration.maxQueuedEvents = 3
        let h = try Harness(configuration: configuration)
        let connection = h.feed.connect(identity: .admin)
        // Later snapshots of a target merge into the one waiting, but first snapshots do not: four targets
        // never read overflow a queue of three.
        for k in 0..<4 {
            try connection.listen(id: "d\(k)", target: .document(try DocumentPath("a/b\(k)")), resumeToken: nil)
        }
        // The fourth first snapshot does not fit: the feed ends the connection, dropping its targets.
        for _ in 0..<1000 where connection.targetCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        // Whatever was queued is dropped: the client learns it must resume, and nothing more is buffered.
        guard case .closed(let error, let code) = try await Self.next(connection) else { Issue.record("expected a close"); return }
        #expect(error.code == .resourceExhausted && code == 1013)
        #expect(Self.isEnd(await connection.next()))
        await h.stop()
    }

    @Test func aClientThatFellBehindGetsItsSnapshotsMerged() async throws {
        let h = try Harness()
        for k in 0..<4 { try await h.set("rooms/r\(k)", #"{"n": \#(k)}"#) }
        let query = try Query(jsonText: #"{"from": "rooms", "where": [["n", ">=", 1]], "orderBy": [["n", "desc"]], "limit": 3}"#)
        let connection = h.feed.connect(identity: .admin)
        try connection.listen(id: "q", target: .query(query), resumeToken: nil)
        // Commits land while the first snapshot waits unread: it stays whole, the later ones merge into one
        // as they are queued.
        while connection.queuedEvents < 1 { try await Task.sleep(for: .milliseconds(5)) }
        try await h.set("rooms/r9", #"{"n": 9}"#)
        try await h.set("rooms/r1", #"{"n": 10}"#)
        try await h.set("rooms/r9", #"{"n": 0}"#)
        try await h.set("rooms/r5", #"{"n": 5}"#)
        // Until the feed has queued what the writes make (one snapshot each, or fewer when a limit window is
        // read again): the count stays put for a while.
        var (count, stable) = (0, 0)
        for _ in 0..<250 where stable < 10 {
            try await Task.sleep(for: .milliseconds(20))
            (count, stable) = connection.queuedEvents == count ? (count, stable + 1) : (connection.queuedEvents, 0)
        }
        #expect(count == 2)
        guard let batch = await connection.nextBatch(), batch.count == 2,
              case .snapshot(let first) = batch[0], case .snapshot(let merged) = batch[1] else {
            Issue.record("expected the first snapshot and one merged snapshot")
            return
        }
        #expect(first.initial && first.changes.allSatisfy { $0.kind == .added })
        #expect(first.changes.map(\.document.path.description) == ["rooms/r3", "rooms/r2", "rooms/r1"])
        #expect(!merged.initial && merged.changes.count > 1)
        // Firestore's docChanges of the two states: removals first, each document once.
        let paths = merged.changes.map(\.document.path)
        #expect(Set(paths).count == paths.count)
        #expect(merged.changes.drop { $0.kind == .removed }.allSatisfy { $0.kind != .removed })
        // The merged changes, applied in order, give the result at the merged snapshot's read time.
        let view = ViewChange.apply(merged.changes, to: first.changes.map(\.document))
        #expect(view?.map(\.path.description) == ["rooms/r1", "rooms/r5", "rooms/r3"])
        let changes = try JSON.parse(String(decoding: merged.changesJSON, as: UTF8.self))
        guard case .array(let items) = changes else { Issue.record("changes are not an array"); return }
        #expect(items.count == merged.changes.count)
        var w = JSONWriter()
        merged.write(to: &w)
        let frame = try JSON.parse(String(decoding: w.bytes, as: UTF8.self))
        #expect(frame["readTime"]?.stringValue == merged.readTime.rfc3339 && frame["initial"] == .bool(false))
        #expect(connection.queuedEvents == 0)
        await h.stop()
    }

    @Test func slowReadersGetMergedSnapshotsThatStayExact() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["HEARTH_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max / 2)
        var r = RandomValues(seed: seed, maxDepth: 1)
        let h = try Harness()
        let items = CollectionPath(uncheckedSegments: ["items"])
        var current: [DocumentPath: Document] = [:]
        func write(_ r: inout RandomValues) async throws {
            let path = DocumentPath(uncheckedSegments: ["items", "d\(r.int(0...9))"])
            if r.chance(0.25) {
                _ = try await h.database.commit(CommitRequest(writes: [Write(kind: .delete, path: path)]), as: .admin)
                current[path] = nil
            } else {
                let fields = r.document(in: [items], id: "x").fields
                _ = try await h.database.commit(CommitRequest(writes: [Write(kind: .set(merge: nil), path: path, fields: fields)]), as: .admin)
                current[path] = Document(path: path, fields: fields, createTime: Timestamp(microseconds: 0), updateTime: Timestamp(microseconds: 0))
            }
        }
        for _ in 0..<15 { try await write(&r) }
        let connection = h.feed.connect(identity: .admin)
        var queries: [String: Query] = [:]
        for k in 0..<6 {
            let query = r.query(over: items)
            queries["q\(k)"] = query
            try connection.listen(id: "q\(k)", target: .query(query), resumeToken: nil)
        }
        var views: [String: [Document]] = [:]
        /// Reads what is queued once the feed has been quiet for a while, applying every snapshot.
        func drain(quiet: Int) async throws {
            var (count, stable) = (-1, 0)
            while stable < quiet {
                try await Task.sleep(for: .milliseconds(10))
                (count, stable) = connection.queuedEvents == count ? (count, stable + 1) : (connection.queuedEvents, 0)
            }
            while connection.queuedEvents > 0, let batch = await connection.nextBatch() {
                for event in batch {
                    guard case .snapshot(let snapshot) = event else { Issue.record("seed \(seed): \(event)"); continue }
                    let paths = snapshot.changes.map(\.document.path)
                    #expect(Set(paths).count == paths.count, "seed \(seed): a document twice in one snapshot")
                    let base = snapshot.initial ? [] : views[snapshot.targetID] ?? []
                    guard let view = ViewChange.apply(snapshot.changes, to: base) else {
                        Issue.record("seed \(seed): \(snapshot.targetID)'s changes do not apply")
                        throw ListenClient.Failure(description: "changes do not apply")
                    }
                    views[snapshot.targetID] = view
                }
            }
        }
        // Every target's first snapshot (which never merges) is read before the rounds start.
        let deadline = ContinuousClock.now + .seconds(30)
        while views.count < queries.count, ContinuousClock.now < deadline { try await drain(quiet: 10) }
        #expect(views.count == queries.count, "seed \(seed): first snapshots of \(views.count) targets")
        for round in 0..<120 {
            for _ in 0..<r.int(1...3) { try await write(&r) }
            if round % 8 == 7 {
                try await drain(quiet: 5)
            } else if round > 8 {
                // Unread, a target's later snapshots merge into the one waiting: at most one each.
                #expect(connection.queuedEvents <= queries.count, "seed \(seed): \(connection.queuedEvents) queued")
            }
        }
        func matches(_ id: String, _ query: Query) throws -> Bool {
            let expected = try query.run(over: Array(current.values))
            let view = views[id] ?? []
            return view.map(\.path) == expected.map(\.path)
                && view.map { Value.encodeFields($0.fields) } == expected.map { Value.encodeFields($0.fields) }
        }
        // A limit window read again may still be on its way on a busy machine; a wrong view stays wrong.
        for _ in 0..<20 {
            try await drain(quiet: 20)
            if try queries.allSatisfy({ try matches($0.key, $0.value) }) { break }
        }
        for (id, query) in queries {
            let expected = try query.run(over: Array(current.values))
            let view = views[id] ?? []
            #expect(view.map(\.path) == expected.map(\.path) &&
                    view.map { Value.encodeFields($0.fields) } == expected.map { Value.encodeFields($0.fields) },
                    "seed \(seed): \(id) \(query.jsonText): view \(view.map(\.path.id)) expected \(expected.map(\.path.id))")
        }
        await h.stop()
    }

    /// Writes faster than the feed takes them: with room for one queued commit, bursts of concurrent commits
    /// are dropped while it is behind (`ListenConfiguration.maxQueuedChangeBytes`), and every view is read
    /// again once it catches up. The listener's views must still end exactly as the queries' results.
    @Test func aFeedThatFallsBehindDropsCommitsAndReadsItsViewsAgain() async throws {
        var configuration = ListenConfiguration()
        configuration.maxQueuedChangeBytes = 1
        let h = try Harness(configuration: configuration)
        let items = CollectionPath(uncheckedSegments: ["items"])
        func field(_ name: String) -> FieldPath { FieldPath(uncheckedSegments: [name]) }
        let queries: [String: Query] = [
            "all": Query(source: .collection(items)),
            "a": Query(source: .collection(items), filter: .field(FieldFilter(field: field("cat"), op: .equal, value: .string("a")))),
            "top": Query(source: .collection(items), orderBy: [Query.Order(field("n"), .descending)], limit: 5),
        ]
        for i in 0..<10 { try await h.set("items/d\(i)", #"{"n": \#(i), "cat": "a"}"#) }
        let connection = h.feed.connect(identity: .admin)
        for (id, query) in queries { try connection.listen(id: id, target: .query(query), resumeToken: nil) }
        var views: [String: [Document]] = [:]
        func drain() async throws {
            while let event = try? await Self.next(connection, within: .milliseconds(500)) {
                guard case .snapshot(let snapshot) = event else { Issue.record("\(event)"); continue }
                guard let view = ViewChange.apply(snapshot.changes, to: snapshot.initial ? [] : views[snapshot.targetID] ?? []) else {
                    Issue.record("\(snapshot.targetID)'s changes do not apply")
                    return
                }
                views[snapshot.targetID] = view
            }
        }
        try await drain()
        for round in 0..<20 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for k in 0..<25 {
                    let i = (round * 7 + k) % 40
                    group.addTask {
                        if k % 6 == 5 {
                            _ = try await h.database.commit(CommitRequest(writes: [Write(kind: .delete, path: try DocumentPath("items/d\(i)"))]),
                                                            as: .admin)
                        } else {
                            try await h.set("items/d\(i)", #"{"n": \#(round * 100 + k), "cat": "\#(k % 2 == 0 ? "a" : "b")"}"#)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        try await drain()
        #expect(h.feed.droppedCommits > 0, "the feed never fell behind; the test proves nothing")
        let stored = try await h.store.read { try $0.allDocuments(after: nil, limit: 1_000) }.map { try $0.decoded() }
        for (id, query) in queries {
            let expected = try query.run(over: stored)
            let view = views[id] ?? []
            #expect(view.map(\.path) == expected.map(\.path)
                    && view.map { Value.encodeFields($0.fields) } == expected.map { Value.encodeFields($0.fields) },
                    "\(id): view \(view.map(\.path.id)) expected \(expected.map(\.path.id))")
        }
        await h.stop()
    }

    /// While no target is open the feed keeps only the latest hand-overs of commits (`CommitHandOver`). Targets
    /// opened and closed again and again, each while a writer creates documents in its collection, must each
    /// end up with every document created.
    @Test func targetsOpenedWhileNoneIsOpenMissNoCommit() async throws {
        let h = try Harness()
        let connection = h.feed.connect(identity: .admin)
        for round in 0..<20 {
            let id = "t\(round)"
            let count = 20
            let writer = Task {
                for k in 0..<count { try await h.set("events\(round)/d\(k)", #"{"n": \#(k)}"#) }
            }
            // Opened while the writer runs: some creations are in the first result, the rest come after it.
            try await Task.sleep(for: .microseconds(Int64(round % 5) * 300))
            let query = try Query(jsonText: #"{"from": "events\#(round)"}"#)
            try connection.listen(id: id, target: .query(query), resumeToken: nil)
            var view: [Document] = []
            var first = true
            let deadline = ContinuousClock.now + .seconds(30)
            while view.count < count && ContinuousClock.now < deadline {
                let event: ListenEvent
                do { event = try await Self.next(connection, within: .seconds(30)) } catch {
                    Issue.record("round \(round): \(error) (first snapshot read: \(!first), \(view.count) documents in the view)")
                    break
                }
                guard case .snapshot(let snapshot) = event, snapshot.targetID == id else {
                    Issue.record("round \(round): expected a snapshot of \(id), got \(event)")
                    break
                }
                guard let applied = ViewChange.apply(snapshot.changes, to: first ? [] : view) else {
                    Issue.record("round \(round): the changes do not apply")
                    break
                }
                view = applied
                first = false
            }
            try await writer.value
            #expect(view.count == count, "round \(round): \(view.count) of \(count) documents reached the view")
            try connection.unlisten(id: id)
            // The feed drops the view; commits meanwhile are only kept.
            try await h.set("elsewhere/x", #"{"round": \#(round)}"#)
        }
        await h.stop()
    }

    /// What the protocol layer's channel writer is to a connection: woken by `onEventsReady`, it takes the
    /// events queued, and it holds the connection (so the wake-up call the connection keeps holds both).
    final class Consumer: Sendable {
        let connection: ListenConnection
        private let state = Mutex<(events: Int, token: String?)>((0, nil))

        init(_ connection: ListenConnection) { self.connection = connection }

        var events: Int { state.withLock { $0.events } }
        var token: String? { state.withLock { $0.token } }

        func wake() {
            while true {
                let taken = connection.takeReady().events
                if taken.isEmpty { return }
                state.withLock { state in
                    state.events += taken.count
                    for case .snapshot(let snapshot) in taken { state.token = snapshot.resumeToken }
                }
            }
        }
    }

    /// Every kind of connection, once ended, leaves nothing in the feed: no entry, target, view, shared view
    /// or index key, no connection object (held by its writer's wake-up call), and no finished load in the
    /// loop's task group.
    @Test func endedConnectionsLeaveNothingBehind() async throws {
        let h = try Harness()
        for k in 0..<5 { try await h.set("rooms/r\(k)", #"{"n": \#(k)}"#) }
        let shared = try Query(jsonText: #"{"from": "rooms", "orderBy": [["n", "asc"]]}"#)
        let group = try Query(jsonText: #"{"from": {"collectionGroup": "rooms"}, "where": [["n", ">=", 2]]}"#)
        var consumers: [Consumer] = []
        var token: String?
        for k in 0..<420 {
            let connection = h.feed.connect(identity: .admin)
            let consumer = Consumer(connection)
            // Ended by the server before its writer is woken the first time (revoked or expired at once).
            if k % 7 == 6 { connection.terminate(.unauthenticated("the session was revoked"), closeCode: 1008) }
            connection.onEventsReady { consumer.wake() }
            switch k % 7 {
            case 1:  // a query of its own: a view and a load for it alone
                let own = try Query(jsonText: #"{"from": "rooms", "where": [["n", ">=", \#(-k)]], "limit": 3}"#)
                try connection.listen(id: "q", target: .query(own), resumeToken: nil)
            case 2: try connection.listen(id: "q", target: .query(shared), resumeToken: nil)
            case 3:  // a document of its own, and a target added and removed
                try connection.listen(id: "d", target: .document(try DocumentPath("rooms/x\(k)")), resumeToken: nil)
                try connection.listen(id: "gone", target: .query(group), resumeToken: nil)
                try connection.unlisten(id: "gone")
            case 4: try connection.listen(id: "g", target: .query(group), resumeToken: nil)
            case 5:  // resumed: a private view
                if let token { try connection.listen(id: "r", target: .query(shared), resumeToken: token) }
            default: break
            }
            consumers.append(consumer)
            token = token ?? consumers.lazy.compactMap(\.token).first
            if k % 70 == 69 { try await h.set("rooms/r\(k % 5)", #"{"n": \#(k % 5), "round": \#(k)}"#) }
        }
        // Every target's first snapshot is out before the connections close, so each view went live.
        let deadline = ContinuousClock.now + .seconds(60)
        while consumers.contains(where: { $0.connection.targetCount > 0 && $0.events == 0 }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let open = await h.feed.census()
        #expect(open.connections == 420 && open.connectionObjects == 420, "\(open)")
        for consumer in consumers { consumer.connection.close() }
        consumers.removeAll()
        let census = await h.feed.settledCensus()
        #expect(census == .empty, "\(census)")
        await h.stop()
    }

    /// Connections ended by the revocation of their session leave nothing behind either, before and after the
    /// protocol layer closes them.
    @Test func revokedConnectionsLeaveNothingBehind() async throws {
        let hub = RevocationHub()
        let h = try Harness(revocations: hub)
        while hub.subscriberCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        var consumers: [Consumer] = []
        for k in 0..<60 {
            let connection = h.feed.connect(identity: .admin, session: ListenSession(uid: "u\(k % 3)", sessionID: "s\(k)"))
            let consumer = Consumer(connection)
            connection.onEventsReady { consumer.wake() }
            if k % 2 == 0 { try connection.listen(id: "d", target: .document(try DocumentPath("rooms/r\(k)")), resumeToken: nil) }
            consumers.append(consumer)
        }
        for uid in ["u0", "u1", "u2"] { hub.publish(RevocationEvent(uid: uid, sessionIDs: nil, reason: .revokedByAdmin)) }
        var expected = ChangeFeed.Census.empty
        expected.holdsTasks = true  // the subscription to the hub
        expected.connectionObjects = 60  // the test's, until it lets go of them
        var census = await h.feed.settledCensus(expecting: expected)
        #expect(census == expected, "\(census)")
        for consumer in consumers { consumer.connection.close() }
        consumers.removeAll()
        expected.connectionObjects = 0
        census = await h.feed.settledCensus(expecting: expected)
        #expect(census == expected, "\(census)")
        await h.stop()
    }
}

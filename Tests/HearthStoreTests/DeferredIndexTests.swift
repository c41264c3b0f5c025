import Foundation
import HearthCore
@testable import HearthStore
import Testing

/// Deferred field-index writes: whatever the writes, the merges and other processes do, every query sees
/// every acknowledged write, and once the held rows are merged the table holds exactly the rows the stored
/// documents imply; after an unclean stop, opening the store adds back the rows that were only in memory.
@Suite struct DeferredIndexTests {
    /// A deferring store with small merge limits, so that merges start often and run in many chunks.
    /// `whenIdleFor` nil (the default here): rows stay held below `rows` however long the writer is idle.
    static func configuration(_ directory: String, rows: Int = 24, chunk: Int = 5, directAfterWait: Double = 0,
                              whenIdleFor: Double? = nil) -> Store.Configuration {
        var c = Store.Configuration(dataDirectory: directory)
        c.defersIndexWrites = true
        c.indexMerge.rows = rows
        c.indexMerge.chunk = chunk
        // 0: rows stay held while queries come, so that they race the merges.
        c.indexMerge.directAfterWait = directAfterWait
        c.indexMerge.whenIdleFor = whenIdleFor
        return c
    }

    static func folder() -> String { NSTemporaryDirectory() + "hearth-deferred-" + makeAutoID() }

    /// The rows of the table, and the rows the stored documents imply, as sorted strings.
    static func rows(_ path: String) throws -> (table: [String], implied: [String]) {
        let raw = try SQLiteConnection(path: path)
        var table: [String] = []
        let s = try raw.prepare("SELECT scope, field, hex(key), hex(doc) FROM field_index")
        while try s.step() { table.append("\(s.text(0)) \(s.text(1)) \(s.text(2)) \(s.text(3))") }
        s.reset()
        var implied: [String] = []
        try Schema.forEachStoredDocument(on: raw) { path, fields in
            for (scope, doc) in IndexEntry.scopes(of: path) {
                for e in try IndexEntry.entries(of: fields, limit: .max) {
                    implied.append("\(scope) \(e.field) \(hex(e.key)) \(hex(doc))")
                }
            }
        }
        return (table.sorted(), implied.sorted())
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined() }

    static func pendingFrom(_ path: String) throws -> Int64? {
        try Store.pendingFrom(on: SQLiteConnection(path: path))
    }

    /// The ids a query `where f == value` on `things` returns.
    static func ids(_ store: Store, _ field: String, _ value: Int) async throws -> Set<String> {
        let query = Query(source: .collection(try CollectionPath("things")),
                          filter: .field(FieldFilter(field: try FieldPath(parsing: field), op: .equal, value: .int(Int64(value)))))
        return Set(try await store.read { try $0.runQuery(query) }.map(\.path.id))
    }

    /// Random concurrent writes (creates, updates that move a field, deletes, several writes in one commit),
    /// each round followed by queries checked against a model, then the table compared row for row. With
    /// `directAfterWait`, writes after a query put their rows in the table directly, and documents still
    /// held when that starts keep being held.
    @Test(arguments: [0, 0.05]) func queriesSeeEveryWriteAndTheMergedTableIsExact(directAfterWait: Double) async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The second case also merges whenever the writer is idle for 10 ms, so those merges race too.
        let configuration = Self.configuration(dir, directAfterWait: directAfterWait,
                                               whenIdleFor: directAfterWait > 0 ? 0.01 : nil)
        let store = try Store(configuration: configuration)
        var model: [String: Int] = [:]  // id -> value of `f`
        var rng = SystemRandomNumberGenerator()
        for round in 0..<30 {
            var writes: [(String, Int?)] = []
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                let id = "t\(Int.random(in: 0..<25, using: &rng))"
                writes.append((id, Int.random(in: 0..<10, using: &rng) == 0 ? nil : Int.random(in: 0..<4, using: &rng)))
            }
            // Each write its own job, submitted together so that batches and merge chunks interleave.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (id, value) in writes {
                    group.addTask {
                        try await store.write { context in
                            let t = context.nextCommitTime()
                            let path = try DocumentPath("things/\(id)")
                            if let value {
                                let body = #"{"f": \#(value), "g": "\#(id)-\#(value)", "tags": [\#(value), 9]}"#
                                try context.put(StoredDocument(path: path, data: Array(body.utf8), createTime: t, updateTime: t),
                                                commitTime: t)
                            } else {
                                try context.delete(path, commitTime: t)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Concurrent jobs may land in any order: the model follows the stored state.
            model = [:]
            let stored = try await store.read(usesIndex: false) { context in
                try context.allDocuments(after: nil, limit: 1_000)
            }
            for doc in stored { if case .int(let v)? = try doc.decoded().fields["f"] { model[doc.path.id] = Int(v) } }
            if round % 3 == 0 {
                for v in 0..<4 {
                    let expected = Set(model.filter { $0.value == v }.keys)
                    #expect(try await Self.ids(store, "f", v) == expected, "round \(round), f == \(v)")
                }
            }
        }
        try await store.mergeHeldIndexRows()
        #expect(store.heldIndexRows == 0)
        let (table, implied) = try Self.rows(configuration.databasePath)
        #expect(table == implied)
        #expect(!table.isEmpty)
        store.close()
        #expect(try Self.pendingFrom(configuration.databasePath) == nil)
    }

    /// Queries racing updates: every document always has `a`, so a query ordered by `a` must return all of
    /// them, whatever commits land while it starts. (A read that waited for the merge and then began its
    /// snapshot could see an update whose old row was removed and whose new row was still held.)
    @Test func queriesRacingUpdatesSeeEveryDocument() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store(configuration: Self.configuration(dir, rows: 400, chunk: 50))
        defer { store.close() }
        let n = 20
        for i in 0..<n { try await put("things/t\(i)", #"{"a": \#(i)}"#, in: store) }
        let query = Query(source: .collection(try CollectionPath("things")),
                          orderBy: [Query.Order(try FieldPath(parsing: "a"), .ascending)])
        let deadline = ContinuousClock.now + .milliseconds(1_500)
        let counts = try await withThrowingTaskGroup(of: [Int].self) { group in
            for w in 0..<4 {
                group.addTask {
                    var k = 0
                    while ContinuousClock.now < deadline {
                        try await put("things/t\((k * 7 + w) % n)", #"{"a": \#(Int.random(in: 0..<1_000))}"#, in: store)
                        k += 1
                    }
                    return []
                }
            }
            for _ in 0..<2 {
                group.addTask {
                    var seen: [Int] = []
                    while ContinuousClock.now < deadline { seen.append(try await store.read { try $0.runQuery(query) }.count) }
                    return seen
                }
            }
            var all: [Int] = []
            for try await part in group { all += part }
            return all
        }
        #expect(counts.count >= 4, "only \(counts.count) queries ran")
        #expect(counts.allSatisfy { $0 == n }, "query result sizes: \(Set(counts).sorted())")
    }

    /// Writes put their rows in the table directly after a read waited, except for documents whose rows are
    /// still held: those keep being held whole, or their held rows of the old version would reach the table.
    @Test func directWritesKeepHoldingWhatIsHeld() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let configuration = Self.configuration(dir, rows: 100_000, directAfterWait: 60)
        let store = try Store(configuration: configuration)
        defer { store.close() }
        try await put("things/p", #"{"f": 1, "g": 1}"#, in: store)
        try await put("things/q", #"{"f": 1}"#, in: store)
        #expect(store.heldIndexRows == 5)
        store.indexGate.noteWait()  // as a read that found rows held does, before it asks for the merge
        try await put("things/p", #"{"f": 2, "g": 1}"#, in: store)
        try await put("things/r", #"{"f": 2}"#, in: store)  // not held: its rows go in directly
        #expect(store.heldIndexRows == 5)
        #expect(try await Self.ids(store, "f", 1) == ["q"])
        #expect(try await Self.ids(store, "f", 2) == ["p", "r"])
        let (table, implied) = try Self.rows(configuration.databasePath)
        #expect(table == implied)
    }

    /// Rows held below the merge threshold are merged once no write has come for `whenIdleFor`, the mark
    /// cleared with them; a write during the merge stops it, and the rest is merged at the next quiet moment.
    @Test func aQuietWriterMergesWhatItHolds() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let configuration = Self.configuration(dir, rows: 100_000, chunk: 3, whenIdleFor: 0.05)
        let store = try Store(configuration: configuration)
        defer { store.close() }
        for round in 0..<3 {
            // On a slow machine the writer may already merge between these writes; nothing here depends on it.
            for i in 0..<8 { try await put("things/r\(round)-\(i)", #"{"f": \#(round)}"#, in: store) }
            let deadline = ContinuousClock.now + .seconds(10)
            while store.heldIndexRows > 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(store.heldIndexRows == 0, "round \(round)")
            #expect(try Self.pendingFrom(configuration.databasePath) == nil, "round \(round)")
            let (table, implied) = try Self.rows(configuration.databasePath)
            #expect(table == implied, "round \(round)")
        }
    }

    /// A reader asks for a merge just as an idle merge ends on its own (between its last chunk and telling the
    /// gate): the request must survive, or the reader waits for a pause that never comes (a hang seen once
    /// when idle merges were new). The gate's hook stops the writer at that moment while the query asks.
    @Test func aRequestMadeAsAnIdleMergeEndsIsServed() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store(configuration: Self.configuration(dir, rows: 100_000, whenIdleFor: 0.02))
        defer { store.close() }
        let stop = WriterStop()
        store.indexGate.onMergedAll = { stop.holdIfArmed() }
        for round in 0..<3 {
            stop.arm()
            // One commit: the writer goes idle only after it, merges the six documents' rows and stops in
            // `mergedAll`. (Nothing else calls `mergedAll` in between: the batch itself holds too few rows.)
            try await store.write { context in
                let t = context.nextCommitTime()
                for i in 0..<6 {
                    try context.put(StoredDocument(path: try DocumentPath("things/r\(round)-\(i)"),
                                                   data: Array(#"{"f": \#(round)}"#.utf8), createTime: t, updateTime: t),
                                    commitTime: t)
                }
            }
            try await stop.waitUntilHeld()
            #expect(store.indexGate.unmerged() != nil, "round \(round): rows still count as held")
            let answer = Answer()
            Task { answer.set(try? await Self.ids(store, "f", round)) }
            // The query asks for a merge and waits for the writer to pause for it.
            var deadline = ContinuousClock.now + .seconds(10)
            while !store.indexGate.hasPauseRequest && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
            #expect(store.indexGate.hasPauseRequest, "round \(round)")
            stop.release()
            deadline = ContinuousClock.now + .seconds(10)
            while answer.value == nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(answer.value == Set((0..<6).map { "r\(round)-\($0)" }), "round \(round): the query should finish")
            if answer.value == nil {
                // A reader stuck waiting for a pause: fail it, so that the store can close.
                stop.disarm()
                store.indexGate.close()
                return
            }
        }
    }

    /// A write that arrives while an idle merge's rows are being sorted does not wait for the sort. The store's
    /// sorting queue is held up here, so the sort cannot finish until the write has been answered (or the bound
    /// passed).
    @Test func aWriteDuringAnIdleMergesSortDoesNotWaitForIt() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let configuration = Self.configuration(dir, rows: 100_000, whenIdleFor: 0.02)
        let store = try Store(configuration: configuration)
        defer { store.close() }
        let sortHeld = DispatchSemaphore(value: 0)
        store.indexSortQueue.async { sortHeld.wait() }
        var released = false
        defer { if !released { sortHeld.signal() } }
        for i in 0..<6 { try await put("things/a\(i)", #"{"f": 1}"#, in: store) }
        // The writer goes idle, starts merging and waits for the sort, which cannot run yet.
        try await Task.sleep(for: .milliseconds(200))
        let answer = Answer()
        Task {
            try? await put("things/b", #"{"f": 1}"#, in: store)
            answer.set(["b"])
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while answer.value == nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        #expect(answer.value == ["b"], "the write should not wait for the held-up sort")
        sortHeld.signal()
        released = true
        while answer.value == nil { try await Task.sleep(for: .milliseconds(2)) }
        let idle = ContinuousClock.now + .seconds(10)
        while store.heldIndexRows > 0 && ContinuousClock.now < idle { try await Task.sleep(for: .milliseconds(10)) }
        #expect(store.heldIndexRows == 0)
        #expect(try await Self.ids(store, "f", 1) == Set((0..<6).map { "a\($0)" } + ["b"]))
        let (table, implied) = try Self.rows(configuration.databasePath)
        #expect(table == implied)
    }

    /// What a query task answered (nil until it has, or if it failed).
    final class Answer: @unchecked Sendable {
        private let lock = NSLock()
        private var answer: Set<String>?
        func set(_ value: Set<String>?) { lock.withLock { answer = value ?? [] } }
        var value: Set<String>? { lock.withLock { answer } }
    }

    /// Stops the writer once, in the gate's `mergedAll`, until released.
    final class WriterStop: @unchecked Sendable {
        private let condition = NSCondition()
        private var armed = false, holding = false, released = false

        func arm() { condition.withLock { armed = true; holding = false; released = false } }
        func disarm() { condition.withLock { armed = false; released = true; condition.broadcast() } }

        /// On the writer: waits for `release` if armed, once.
        func holdIfArmed() {
            condition.lock()
            defer { condition.unlock() }
            guard armed else { return }
            armed = false
            holding = true
            condition.broadcast()
            while !released { condition.wait() }
        }

        func waitUntilHeld() async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while !condition.withLock({ holding }) {
                guard ContinuousClock.now < deadline else { throw HearthError.internal("the writer never reached mergedAll") }
                try await Task.sleep(for: .milliseconds(2))
            }
        }

        func release() { condition.withLock { released = true; condition.broadcast() } }
    }

    /// A write another process makes (directly to the index) to documents whose rows this store still holds:
    /// the held rows of the replaced versions never reach the table.
    @Test func anotherProcessesWritesReplaceTheRowsThisStoreHolds() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let configuration = Self.configuration(dir, rows: 100_000)
        let store = try Store(configuration: configuration)
        defer { store.close() }
        for i in 0..<6 { try await put("things/t\(i)", #"{"f": 1}"#, in: store) }
        #expect(try Self.pendingFrom(configuration.databasePath) != nil)
        #expect(store.heldIndexRows == 12)  // `f` and the name of each
        var tool = Store.Configuration(dataDirectory: dir)
        tool.usesServedIndexDefinitions = true
        let other = try Store(configuration: tool)
        try await put("things/t0", #"{"f": 2}"#, in: other)
        try await put("things/t1", #"{"g": 1}"#, in: other)
        try await other.write { context in try context.delete(try DocumentPath("things/t2"), commitTime: context.nextCommitTime()) }
        other.close()
        // This store's next write sees the other process's changes first.
        try await put("things/t3", #"{"f": 1, "h": true}"#, in: store)
        #expect(try await Self.ids(store, "f", 1) == ["t3", "t4", "t5"])
        #expect(try await Self.ids(store, "f", 2) == ["t0"])
        let (table, implied) = try Self.rows(configuration.databasePath)
        #expect(table == implied)
    }

    /// One store that holds rows per data folder: a second fails to open, naming the holder, and changes
    /// nothing; a tool's store still opens beside it; once the first closes, the folder opens again.
    @Test func aSecondStoreThatHoldsRowsCannotOpenTheFolder() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let configuration = Self.configuration(dir, rows: 100_000)
        let store = try Store(configuration: configuration)
        for i in 0..<4 { try await put("things/t\(i)", #"{"f": 1}"#, in: store) }
        let mark = try Self.pendingFrom(configuration.databasePath)
        #expect(mark != nil && store.heldIndexRows == 8)

        #expect {
            _ = try Store(configuration: configuration)
        } throws: { error in
            guard let inUse = error as? DataFolderInUse else { return false }
            return inUse.holder == getpid() && inUse.directory == dir
                && "\(inUse)".contains("in use by another process (pid \(getpid()))")
        }
        // The failed open cleared nothing: the rows are still held and the mark still set.
        #expect(try Self.pendingFrom(configuration.databasePath) == mark)
        #expect(store.heldIndexRows == 8)

        var tool = Store.Configuration(dataDirectory: dir)
        tool.usesServedIndexDefinitions = true
        let other = try Store(configuration: tool)
        try await put("things/t9", #"{"f": 1}"#, in: other)
        other.close()

        store.close()
        let reopened = try Store(configuration: configuration)
        #expect(try await Self.ids(reopened, "f", 1) == ["t0", "t1", "t2", "t3", "t9"])
        reopened.close()
    }

    /// A crash image (the database and its WAL copied while the writer holds rows) opens with every row.
    @Test func anUncleanStopLosesNoRow() async throws {
        let dir = Self.folder(), copy = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir); try? FileManager.default.removeItem(atPath: copy) }
        let configuration = Self.configuration(dir, rows: 100_000)
        let store = try Store(configuration: configuration)
        defer { store.close() }
        for i in 0..<20 { try await put("things/t\(i)", #"{"f": \#(i % 3), "tags": [1, 2]}"#, in: store) }
        try await put("things/t0", #"{"f": 2}"#, in: store)
        try await store.write { context in try context.delete(try DocumentPath("things/t1"), commitTime: context.nextCommitTime()) }
        #expect(try Self.pendingFrom(configuration.databasePath) != nil)
        let (heldTable, _) = try Self.rows(configuration.databasePath)
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: configuration.databasePath + suffix,
                                             toPath: Store.Configuration(dataDirectory: copy).databasePath + suffix)
        }
        let (copied, implied) = try Self.rows(Store.Configuration(dataDirectory: copy).databasePath)
        #expect(copied == heldTable && copied != implied, "the copy should lack the held rows")

        let reopened = try Store(configuration: Self.configuration(copy))
        #expect(try Self.pendingFrom(Store.Configuration(dataDirectory: copy).databasePath) == nil)
        #expect(try await Self.ids(reopened, "f", 2) == ["t0", "t2", "t5", "t8", "t11", "t14", "t17"])
        reopened.close()
        let (table, restoredImplied) = try Self.rows(Store.Configuration(dataDirectory: copy).databasePath)
        #expect(table == restoredImplied)
    }
}

import Foundation
import HearthCore
import HearthSQLite
@testable import HearthStore
import HearthTesting
import Testing

/// Field-index rows are written in each write's commit: whatever the writes and other processes do, every
/// query sees every acknowledged write and the table holds exactly the rows the stored documents imply. A
/// folder an earlier version left with rows only in memory gets them back when it opens; one store owns a
/// data folder at a time.
@Suite struct IndexWriteTests {
    static func folder() -> String { TestFolders.path("hearth-index") }

    /// The server's kind of store: it owns its folder.
    static func owner(_ directory: String) -> Store.Configuration {
        var c = Store.Configuration(dataDirectory: directory)
        c.dataFolderOwner = "a test"
        return c
    }

    /// A store that opens a served folder without its lock (`hearth export` reading beside a server).
    static func tool(_ directory: String) -> Store.Configuration {
        var c = Store.Configuration(dataDirectory: directory)
        c.usesServedIndexDefinitions = true
        return c
    }

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

    /// Random concurrent writes (creates, updates that move a field, deletes, several writes in one group
    /// commit), each round followed by queries checked against a model, and the table compared row for row.
    @Test func queriesSeeEveryWriteAndTheTableIsExact() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let configuration = Self.owner(dir)
        let store = try Store(configuration: configuration)
        defer { store.close() }
        var rng = SystemRandomNumberGenerator()
        for round in 0..<30 {
            var writes: [(String, Int?)] = []
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                let id = "t\(Int.random(in: 0..<25, using: &rng))"
                writes.append((id, Int.random(in: 0..<10, using: &rng) == 0 ? nil : Int.random(in: 0..<4, using: &rng)))
            }
            // Each write its own job, submitted together so that they share batches.
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
            var model: [String: Int] = [:]
            let stored = try await store.read { context in try context.allDocuments(after: nil, limit: 1_000) }
            for doc in stored { if case .int(let v)? = try doc.decoded().fields["f"] { model[doc.path.id] = Int(v) } }
            if round % 3 == 0 {
                for v in 0..<4 {
                    let expected = Set(model.filter { $0.value == v }.keys)
                    #expect(try await Self.ids(store, "f", v) == expected, "round \(round), f == \(v)")
                }
                let (table, implied) = try Self.rows(configuration.databasePath)
                #expect(table == implied, "round \(round)")
            }
        }
        let (table, implied) = try Self.rows(configuration.databasePath)
        #expect(table == implied)
        #expect(!table.isEmpty)
    }

    /// Queries racing updates: every document always has `a`, so a query ordered by `a` must return all of
    /// them, whatever commits land while it runs (an update's old row and new row change in one commit).
    @Test func queriesRacingUpdatesSeeEveryDocument() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store(configuration: Self.owner(dir))
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

    /// A tool's writes beside the folder's owner (updates, new fields, deletes of documents the owner wrote)
    /// keep the table exact, and the owner's queries see them at once.
    @Test func anotherProcessesWritesKeepTheTableExact() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let configuration = Self.owner(dir)
        let store = try Store(configuration: configuration)
        defer { store.close() }
        for i in 0..<6 { try await put("things/t\(i)", #"{"f": 1}"#, in: store) }
        let other = try Store(configuration: Self.tool(dir))
        try await put("things/t0", #"{"f": 2}"#, in: other)
        try await put("things/t1", #"{"g": 1}"#, in: other)
        _ = try await other.write { context in try context.delete(try DocumentPath("things/t2"), commitTime: context.nextCommitTime()) }
        other.close()
        #expect(try await Self.ids(store, "f", 1) == ["t3", "t4", "t5"])
        #expect(try await Self.ids(store, "f", 2) == ["t0"])
        try await put("things/t3", #"{"f": 2, "h": true}"#, in: store)
        #expect(try await Self.ids(store, "f", 2) == ["t0", "t3"])
        let (table, implied) = try Self.rows(configuration.databasePath)
        #expect(table == implied)
    }

    /// One owner per data folder: a second fails to open, naming the holder, and changes nothing; a store
    /// without the lock still opens beside it; once the first closes, the folder opens again.
    @Test func aSecondOwnerCannotOpenTheFolder() async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store(configuration: Self.owner(dir))
        for i in 0..<4 { try await put("things/t\(i)", #"{"f": 1}"#, in: store) }
        #expect {
            _ = try Store(configuration: Self.owner(dir))
        } throws: { error in
            guard let inUse = error as? DataFolderInUse else { return false }
            return inUse.holder == getpid() && inUse.holderName == "a test" && inUse.directory == dir
                && "\(inUse)".contains("in use by another process (pid \(getpid())), a test,")
        }
        let other = try Store(configuration: Self.tool(dir))
        try await put("things/t9", #"{"f": 1}"#, in: other)
        other.close()
        store.close()
        let reopened = try Store(configuration: Self.owner(dir))
        #expect(try await Self.ids(reopened, "f", 1) == ["t0", "t1", "t2", "t3", "t9"])
        reopened.close()
    }

    /// A folder an earlier version left after an unclean stop: rows of documents changed since the mark
    /// `index_state.pending_from` are missing from the table. Opening adds them back; only the owner clears
    /// the mark (a tool may run beside such a server while it still holds rows).
    @Test(arguments: [(owner: true, clears: true), (owner: false, clears: false)])
    func rowsAnEarlierVersionHeldAreRestored(owner: Bool, clears: Bool) async throws {
        let dir = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let configuration = Self.owner(dir)
        let store = try Store(configuration: configuration)
        for i in 0..<20 { try await put("things/t\(i)", #"{"f": \#(i % 3), "tags": [1, 2]}"#, in: store) }
        store.close()
        // What such a server left: the mark at t10's change, and no rows for the documents changed from there on.
        let raw = try SQLiteConnection(path: configuration.databasePath)
        try raw.execute("UPDATE index_state SET pending_from = (SELECT seq FROM changes WHERE path = 'things/t10')")
        let delete = try raw.prepare("DELETE FROM field_index WHERE scope = ? AND doc = ?")
        for i in 10..<20 {
            for (scope, doc) in IndexEntry.scopes(of: try DocumentPath("things/t\(i)")) {
                delete.bind(1, scope); delete.bind(2, doc)
                try delete.run()
            }
        }
        let (damaged, implied) = try Self.rows(configuration.databasePath)
        #expect(damaged.count < implied.count, "the damage should remove rows")
        let reopened = try Store(configuration: owner ? Self.owner(dir) : Self.tool(dir))
        #expect(try await Self.ids(reopened, "f", 1) == ["t1", "t4", "t7", "t10", "t13", "t16", "t19"])
        #expect((try Self.pendingFrom(configuration.databasePath) == nil) == clears)
        reopened.close()
        let (table, restoredImplied) = try Self.rows(configuration.databasePath)
        #expect(table == restoredImplied)
    }
}

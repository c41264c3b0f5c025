import Foundation
import HearthCore
import HearthSQLite
import HearthStore
import HearthTesting
import Testing

/// The writer's connection gathers each commit's WAL frames into one write (`wal_buffer.c`). Whatever it
/// gathers must be in the WAL file before any other connection can learn of the commit, and the file must be
/// the one SQLite would have written itself.
@Suite struct WALGatheringTests {
    /// Commits from several tasks at once, of sizes from one frame to many, each read back on the point-read
    /// connections (which see a commit as soon as it is published) the moment it is acknowledged, and the
    /// whole database checked afterwards on a connection without the gathering layer.
    @Test func everyAcknowledgedCommitIsReadableAtOnceOnOtherConnections() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try openStore(in: directory, checkpointPages: 400, restartPages: 1_500)
        let before = SQLiteConnection.gatheredWALWrites
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    var generator = SystemRandomNumberGenerator()
                    for i in 0..<120 {
                        // 1 to 12 documents of 50 bytes to 30 KB: commits from one frame to a few hundred.
                        let count = Int.random(in: 1...12, using: &generator)
                        let docs = try (0..<count).map { j in
                            (try DocumentPath("g\(task)/d\(i)/c/e\(j)"),
                             Array(#"{"t":\#(task),"i":\#(i),"s":"\#(String(repeating: "abcdefgh", count: Int.random(in: 6...3_800, using: &generator)))"}"#.utf8))
                        }
                        try await commit(docs, to: store)
                        for (path, data) in docs {
                            let read = try store.pointRead { try $0.document(at: path) }
                            #expect(read?.data == data, "\(path) as soon as its commit was acknowledged")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let after = SQLiteConnection.gatheredWALWrites
        #expect(after.writes > before.writes && after.bytes > before.bytes, "the writer's WAL appends went through the gathering layer")
        store.close()

        let check = try SQLiteConnection(path: directory + "/hearth.sqlite", readOnly: true)
        #expect(try integrity(of: check) == "ok")
        let stored = try check.scalarInt("SELECT count(*) FROM documents WHERE path GLOB 'g*'") ?? 0
        let logged = try check.scalarInt("SELECT count(*) FROM changes WHERE path GLOB 'g*'") ?? 0
        #expect(stored > 480 && stored == logged)
    }

    /// A commit larger than the layer's 1 MiB buffer and than the 128 KiB the default file layer writes at
    /// once, between small commits, over WAL restarts: read back whole, and the file checks out.
    @Test func commitsLargerThanTheBufferAreWrittenWhole() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try openStore(in: directory, checkpointPages: 300, restartPages: 1_000)
        var expected: [DocumentPath: [UInt8]] = [:]
        for round in 0..<12 {
            var docs: [(DocumentPath, [UInt8])] = []
            for j in 0..<(round % 3 == 0 ? 400 : 2) {
                let body = String(repeating: String(UnicodeScalar(UInt8(97 + (round + j) % 26))), count: 5_000 + j)
                docs.append((try DocumentPath("big/r\(round)d\(j)"), Array(#"{"round":\#(round),"s":"\#(body)"}"#.utf8)))
            }
            try await commit(docs, to: store)
            for (path, data) in docs { expected[path] = data }
            for (path, data) in docs.prefix(3) + docs.suffix(3) {
                #expect(try store.pointRead { try $0.document(at: path) }?.data == data)
            }
        }
        let all = try await store.read { context in
            try context.documents(in: try CollectionPath("big"), after: nil, limit: 10_000)
        }
        #expect(all.count == expected.count)
        for doc in all { #expect(expected[doc.path] == doc.data, "\(doc.path)") }
        store.close()

        #expect(try integrity(of: SQLiteConnection(path: directory + "/hearth.sqlite", readOnly: true)) == "ok")
    }

    func temporaryDirectory() -> String { TestFolders.path("hearth-gather") }

    /// A store whose WAL is checkpointed and restarted early, so that a test sees several restarts.
    func openStore(in directory: String, checkpointPages: Int32, restartPages: Int32) throws -> Store {
        var configuration = Store.Configuration(dataDirectory: directory)
        configuration.walLimits.checkpointPages = checkpointPages
        configuration.walLimits.restartPages = restartPages
        return try Store(configuration: configuration)
    }

    /// Stores documents (wire JSON) in one commit.
    func commit(_ docs: [(DocumentPath, [UInt8])], to store: Store) async throws {
        try await store.write { context in
            let time = context.nextCommitTime()
            for (path, data) in docs {
                try context.put(StoredDocument(path: path, data: data, createTime: time, updateTime: time), commitTime: time)
            }
        }
    }

    /// What `PRAGMA integrity_check` says of the database: "ok" when nothing is wrong.
    func integrity(of connection: SQLiteConnection) throws -> String {
        let check = try connection.prepare("PRAGMA integrity_check")
        defer { check.reset() }
        return try check.step() ? check.text(0) : "no answer"
    }
}

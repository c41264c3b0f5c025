import Foundation
import HearthCore
import HearthTesting
import Testing

/// Durability against a real `hearth serve`: every acknowledged write survives SIGKILL, and SIGTERM shuts
/// down gracefully with the WAL checkpointed.
@Suite(.serialized) struct CrashTests {
    /// A ~300-byte document whose content can be checked after the restart.
    static func body(_ writer: Int, _ i: Int) -> String {
        #"{"title": "post \#(i) by \#(writer)", "writer": \#(writer), "i": \#(i), "ok": true, "body": "\#(String(repeating: "x", count: 200))"}"#
    }

    /// At both durability levels: `NORMAL` (the default) acknowledges at commit, `FULL` after the WAL sync.
    @Test(arguments: ["NORMAL", "FULL"]) func acknowledgedWritesSurviveSIGKILL(synchronous: String) async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try await ServerProcess.start(dataDirectory: dir, arguments: ["--synchronous", synchronous])
        let writers = 8
        let start = Date()
        let progress = AckCounter()
        // Each writer records what the server acknowledged; SIGKILL lands while they are mid-flight.
        let acknowledged = try await withThrowingTaskGroup(of: [(String, String)].self) { group in
            for w in 0..<writers {
                group.addTask {
                    let client = server.client()
                    var acked: [(String, String)] = []
                    var i = 0
                    while Date().timeIntervalSince(start) < 45 {
                        let path = "crash/w\(w)-\(i)"
                        let body = Self.body(w, i)
                        let result: HTTPResult
                        if i % 5 == 4 {
                            // Some acknowledged writes are batched commits of two documents.
                            let second = "crash/w\(w)-\(i)b"
                            let commit = #"{"writes": [{"set": "\#(path)", "data": \#(body)}, {"set": "\#(second)", "data": \#(body)}]}"#
                            guard let r = try? await client.post("/v1/commit", commit) else { break }
                            result = r
                            if r.status == 200 { acked.append((second, body)) }
                        } else {
                            guard let r = try? await client.put("/v1/docs/\(path)", body) else { break }
                            result = r
                        }
                        if result.status == 200 {
                            acked.append((path, body))
                            progress.add()
                        }
                        i += 1
                    }
                    await client.close()
                    return acked
                }
            }
            group.addTask {
                // Let the load run until a few hundred writes are acknowledged, then kill the server without warning.
                while progress.value < 300 && Date().timeIntervalSince(start) < 40 {
                    try await Task.sleep(for: .milliseconds(20))
                }
                server.signal(SIGKILL)
                return []
            }
            var all: [(String, String)] = []
            for try await part in group { all += part }
            return all
        }
        _ = try await server.waitForExit()
        #expect(acknowledged.count >= 300, "at \(synchronous), the load acknowledged only \(acknowledged.count) writes before the kill")

        let restarted = try await ServerProcess.start(dataDirectory: dir)
        let client = restarted.client()
        var missing: [String] = []
        for (path, body) in acknowledged {
            let r = try await client.get("/v1/docs/\(path)")
            let expected = try JSON.parse(body)
            if r.status != 200 || r.json?["data"] != expected { missing.append(path) }
        }
        #expect(missing.isEmpty, "at \(synchronous), \(missing.count) of \(acknowledged.count) acknowledged writes were lost: \(missing.prefix(5))")
        // Queries find them too: each write's field-index rows are committed with it.
        var unqueried: [String] = []
        for w in 0..<writers {
            let r = try await client.query(#"{"from": "crash", "where": [["writer", "==", \#(w)], ["ok", "==", true]]}"#)
            var found: Set<String> = []
            if case .array(let docs)? = r.json?["documents"] { found = Set(docs.compactMap { $0["path"]?.stringValue }) }
            unqueried += acknowledged.map(\.0).filter { $0.hasPrefix("crash/w\(w)-") && !found.contains($0) }
        }
        #expect(unqueried.isEmpty, "at \(synchronous), queries miss \(unqueried.count) acknowledged writes: \(unqueried.prefix(5))")
        await client.close()
        restarted.signal(SIGTERM)
        _ = try await restarted.waitForExit()
    }

    /// Writes that fail for lack of space (a file-size limit standing in for a full disk, hit while the WAL
    /// grows) are answered `500` and leave nothing behind; every write acknowledged before or between them
    /// survives a SIGKILL whole. The writer's WAL appends are gathered per commit, so a failed append must
    /// fail its commit before anything of it is published.
    @Test func writesFailingForLackOfSpaceLeaveNothingAndLoseNothing() async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 16,384 blocks of 512 bytes: 8 MiB per file, a few hundred of these documents.
        let server = try await ServerProcess.start(dataDirectory: dir, fileSizeBlocks: 16_384)
        let padding = String(repeating: "y", count: 3_000)
        let outcomes = try await withThrowingTaskGroup(of: [(path: String, body: String, status: Int)].self) { group in
            for w in 0..<4 {
                group.addTask {
                    let client = server.client()
                    var out: [(path: String, body: String, status: Int)] = []
                    var failures = 0
                    var i = 0
                    while failures < 10 && i < 3_000 {
                        let path = "full/w\(w)-\(i)"
                        let body = #"{"w": \#(w), "i": \#(i), "s": "\#(padding)"}"#
                        let r = try await client.put("/v1/docs/\(path)", body)
                        out.append((path, body, r.status))
                        if r.status != 200 { failures += 1 }
                        i += 1
                    }
                    await client.close()
                    return out
                }
            }
            var all: [(path: String, body: String, status: Int)] = []
            for try await part in group { all += part }
            return all
        }
        let acknowledged = outcomes.filter { $0.status == 200 }
        let failed = outcomes.filter { $0.status != 200 }
        #expect(failed.count >= 10, "the file-size limit was never reached")
        #expect(acknowledged.count >= 100, "only \(acknowledged.count) writes were acknowledged before the limit")
        #expect(Set(failed.map(\.status)) == [500], "failed writes answered \(Set(failed.map(\.status)))")
        server.signal(SIGKILL)
        _ = try await server.waitForExit()

        let restarted = try await ServerProcess.start(dataDirectory: dir)
        let client = restarted.client()
        var lost: [String] = [], left: [String] = []
        for write in acknowledged {
            let r = try await client.get("/v1/docs/\(write.path)")
            let expected = try JSON.parse(write.body)
            if r.status != 200 || r.json?["data"] != expected { lost.append(write.path) }
        }
        for write in failed where try await client.get("/v1/docs/\(write.path)").status != 404 { left.append(write.path) }
        #expect(lost.count == 0, "\(lost.count) of \(acknowledged.count) acknowledged writes were lost: \(lost.prefix(5))")
        #expect(left.count == 0, "\(left.count) of \(failed.count) failed writes left a document: \(left.prefix(5))")
        #expect(try await client.put("/v1/docs/full/after", #"{"ok": true}"#).status == 200)
        await client.close()
        restarted.signal(SIGTERM)
        _ = try await restarted.waitForExit()
    }

    /// A second server on a data folder another server holds refuses to start, naming the holder, and the
    /// first goes on serving; once the first has stopped, even by SIGKILL, the folder serves again with every
    /// acknowledged write.
    @Test func aSecondServerOnTheSameFolderRefusesToStart() async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try await ServerProcess.start(dataDirectory: dir)
        let client = first.client()
        #expect(try await client.put("/v1/docs/things/a", #"{"n": 1}"#).status == 200)

        let second = try await CommandResult.run(["serve", "--port", "0", "--data", dir], timeout: 30)
        #expect(second.status != 0)
        #expect(second.errorOutput.contains("the data folder \(dir) is in use by another process (pid \(first.pid)), hearth serve,"),
                "\(second.errorOutput)")
        #expect(!second.output.contains("listening"))
        // It says only that: nothing about rules, which it never reached.
        #expect(!second.output.contains("no rules file") && !second.errorOutput.contains("no rules file"))
        #expect(try await client.put("/v1/docs/things/b", #"{"n": 2}"#).status == 200)
        #expect(try await client.query(#"{"from": "things", "where": [["n", ">", 0]]}"#).documentIDs == ["a", "b"])

        first.signal(SIGKILL)
        _ = try await first.waitForExit()
        let third = try await ServerProcess.start(dataDirectory: dir)
        defer { third.signal(SIGKILL) }
        #expect(try await third.client().query(#"{"from": "things", "where": [["n", ">", 0]]}"#).documentIDs == ["a", "b"])
    }

    /// Stopping ends with status 0 every time, not just once.
    @Test func everySigtermStopExitsCleanly() async throws {
        for _ in 0..<6 {
            let dir = TestFolders.make()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let server = try await ServerProcess.start(dataDirectory: dir)
            server.signal(SIGTERM)
            #expect(try await server.waitForExit() == 0)
        }
    }

    @Test func sigtermShutsDownGracefully() async throws {
        let dir = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try await ServerProcess.start(dataDirectory: dir)
        let client = server.client()
        for i in 0..<50 {
            #expect(try await client.put("/v1/docs/g/\(i)", Self.body(0, i)).status == 200)
        }
        // A request in flight when SIGTERM arrives still completes.
        async let inFlight = client.put("/v1/docs/g/last", Self.body(0, 99))
        try await Task.sleep(for: .milliseconds(5))
        server.signal(SIGTERM)
        let last = try? await inFlight
        #expect(try await server.waitForExit() == 0)
        await client.close()
        // The WAL was checkpointed into the database file on shutdown.
        let wal = (try? FileManager.default.attributesOfItem(atPath: dir + "/hearth.sqlite-wal")[.size] as? Int) ?? 0
        #expect(wal == 0)

        let restarted = try await ServerProcess.start(dataDirectory: dir)
        let again = restarted.client()
        let list = try await again.get("/v1/docs/g?pageSize=100")
        guard case .array(let docs)? = list.json?["documents"] else { Issue.record("no listing"); return }
        #expect(docs.count == (last?.status == 200 ? 51 : 50))
        await again.close()
        restarted.signal(SIGTERM)
        _ = try await restarted.waitForExit()
    }
}

/// Counts acknowledged writes across the writer tasks.
final class AckCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add() {
        lock.lock()
        count += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

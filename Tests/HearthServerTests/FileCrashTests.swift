import Foundation
import HearthCore
import HearthTesting
import Testing

/// `kill -9` of a server in the middle of concurrent puts, some of the same bytes, at many points: after a
/// restart every acknowledged object reads back whole with the SHA-256 it was acknowledged with, a put in
/// flight is either whole or absent, and the folder holds exactly the blobs objects name (no temporary files).
@Suite struct FileCrashTests {
    /// Bytes shared by many puts across workers and rounds, so a kill also lands while identical bytes are
    /// being stored by more than one put.
    static let shared: [[UInt8]] = (0..<4).map { payload(seed: 1_000 + UInt64($0), size: 48 * 1024) }

    static func payload(seed: UInt64, size: Int) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        var bytes = [UInt8](repeating: 0, count: size)
        for i in stride(from: 0, to: size, by: 8) {
            let word = generator.next()
            for j in 0..<min(8, size - i) { bytes[i + j] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(j))) }
        }
        return bytes
    }

    /// What the puts of the runs so far sent, and which of them were acknowledged (with their SHA-256).
    final class Ledger: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var sent: [String: [UInt8]] = [:]
        private(set) var acknowledged: [String: String] = [:]

        func send(_ path: String, _ bytes: [UInt8]) { lock.withLock { sent[path] = bytes } }
        func acknowledge(_ path: String, _ sha256: String) -> Int {
            lock.withLock {
                acknowledged[path] = sha256
                return acknowledged.count
            }
        }
        var count: Int { lock.withLock { acknowledged.count } }
        var snapshot: (sent: [String: [UInt8]], acknowledged: [String: String]) { lock.withLock { (sent, acknowledged) } }
    }

    /// Every object under `crash/` with its SHA-256, by listing.
    static func listed(_ client: HearthClient) async throws -> [String: String] {
        var out: [String: String] = [:]
        var token: String?
        repeat {
            let uri = "/v1/files?prefix=crash/&pageSize=1000"
                + (token.map { "&pageToken=" + $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! } ?? "")
            let page = try await client.get(uri)
            #expect(page.status == 200, "\(page.text)")
            guard case .array(let files)? = page.json?["files"] else { break }
            for file in files {
                if let path = file["path"]?.stringValue, let sha = file["sha256"]?.stringValue { out[path] = sha }
            }
            token = page.json?["nextPageToken"]?.stringValue
        } while token != nil
        return out
    }

    static func blobNames(_ folder: String) -> Set<String> {
        let root = folder + "/files/blobs"
        var out = Set<String>()
        for sub in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
            out.formUnion((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + sub)) ?? [])
        }
        return out
    }

    /// Checks the folder after a restart: what was acknowledged is there, whole; what was in flight is whole
    /// or absent; every blob is named and every named blob is there.
    static func check(_ server: ServerProcess, _ folder: String, _ ledger: Ledger) async throws {
        let client = server.client()
        defer { Task { await client.close() } }
        let (sent, acknowledged) = ledger.snapshot
        let objects = try await listed(client)
        for (path, sha) in acknowledged {
            #expect(objects[path] == sha, "acknowledged \(path) is listed with its SHA-256")
        }
        for (path, bytes) in sent {
            let got = try await client.get("/v1/files/" + path)
            if acknowledged[path] != nil || objects[path] != nil {
                #expect(got.status == 200 && got.body == bytes, "\(path) reads back whole (\(got.status), \(got.body.count) bytes)")
            } else {
                #expect(got.status == 404, "\(path), in flight when killed and never listed, is absent")
            }
        }
        #expect(blobNames(folder) == Set(objects.values), "the blobs are exactly those objects name")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder + "/files/tmp")) ?? []).isEmpty)
    }

    @Test func killedDuringConcurrentPutsLeavesWholeObjectsAndNoUnnamedBytes() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let adminKey = "test-admin-key-" + UUID().uuidString
        let ledger = Ledger()
        // Each round kills the server once this many more puts are acknowledged: at the first answers, and
        // later, with puts at every stage in flight.
        let killPoints = [1, 2, 5, 9, 17, 33]
        for (round, killAt) in killPoints.enumerated() {
            let server = try await ServerProcess.start(dataDirectory: folder, adminKey: adminKey)
            defer { server.signal(SIGKILL) }
            if round > 0 { try await Self.check(server, folder, ledger) }
            let start = ledger.count
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        let client = server.client()
                        defer { Task { await client.close() } }
                        for i in 0..<1_000 {
                            let path = "crash/r\(round)/w\(worker)/\(i)"
                            let bytes = (worker + i) % 3 == 0 ? Self.shared[(worker + i) % Self.shared.count]
                                : Self.payload(seed: UInt64(round * 1_000_000 + worker * 10_000 + i), size: 16 * 1024 + i * 97)
                            ledger.send(path, bytes)
                            guard let answer = try? await FileAPITests.put(client, path, bytes), answer.status == 201,
                                  let sha = answer.json?["sha256"]?.stringValue else { return }
                            if ledger.acknowledge(path, sha) - start >= killAt { server.signal(SIGKILL) }
                        }
                    }
                }
            }
            _ = try await server.waitForExit()
        }
        let last = try await ServerProcess.start(dataDirectory: folder, adminKey: adminKey)
        defer { last.signal(SIGKILL) }
        try await Self.check(last, folder, ledger)
        #expect(ledger.count >= killPoints.reduce(0, +), "every round acknowledged puts before its kill")
        last.signal(SIGTERM)
        _ = try await last.waitForExit()
    }
}

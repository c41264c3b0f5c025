import Foundation
import HearthCore
import HearthStore
import HearthTesting
import Testing

/// The write-ahead log stays bounded under a steady stream of commits. Passive checkpoints alone never let
/// SQLite start the WAL over while writes keep coming, so without the store's restarting checkpoint the
/// WAL of this test grows past 300 MB.
@Suite struct WALTests {
    @Test func walStaysBoundedUnderSteadyWrites() async throws {
        let dir = TestFolders.path("hearth-wal")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var configuration = Store.Configuration(dataDirectory: dir)
        configuration.walLimits.restartPages = 16_000
        let store = try Store(configuration: configuration)
        let body = Array(#"{"body":"\#(String(repeating: "x", count: 2_000))"}"#.utf8)
        var largest: Int64 = 0
        for i in 0..<8_000 {
            try await store.write { context in
                let time = context.nextCommitTime()
                let path = try DocumentPath("wal/d\(i)")
                try context.put(StoredDocument(path: path, data: body, createTime: time, updateTime: time), commitTime: time)
            }
            if i % 500 == 0 { largest = max(largest, walSize(dir)) }
        }
        largest = max(largest, walSize(dir))
        store.close()
        // The writer restarts the WAL past 16,000 pages of 4 KiB (64 MiB).
        #expect(largest < 100 << 20, "the WAL grew to \(largest) bytes")
        #expect(walSize(dir) == 0, "closing checkpoints and truncates the WAL")
    }

    func walSize(_ dir: String) -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: dir + "/hearth.sqlite-wal")
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }
}

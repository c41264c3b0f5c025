import Foundation
import HearthCore
import HearthStore
import HearthTesting
import Testing

/// A listener sees the changes another process makes to the server's data folder (as `hearth fixtures
/// load` does while the server runs), in order with the server's own writes.
@Suite struct ListenForeignWriteTests {
    @Test func listenersSeeWritesFromAnotherProcess() async throws {
        try await TestServer.with { server, client in
            #expect(try await client.put("/v1/docs/rooms/r1", #"{"open": true, "n": 0}"#).status == 200)
            let listener = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            try await listener.listen("q", query: #"{"from": "rooms", "where": [["open", "==", true]], "orderBy": [{"field": "n"}]}"#)
            _ = try await listener.expect("snapshot", id: "q")
            try await listener.listen("d", doc: "rooms/r2")
            _ = try await listener.expect("snapshot", id: "d")

            // Another process on the same folder: its own store, its own connections.
            var configuration = Store.Configuration(dataDirectory: server.dataDirectory)
            configuration.synchronous = .normal
            let other = try Store(configuration: configuration)
            defer { other.close() }
            try await other.write { context in
                let t = context.nextCommitTime()
                try context.put(StoredDocument(path: try DocumentPath("rooms/r2"), data: Array(#"{"open": true, "n": 1}"#.utf8),
                                               createTime: t, updateTime: t), commitTime: t)
            }
            // Both targets see it (within the server's poll interval), then the server's own write after it.
            var seen: [String: JSON] = [:]
            for _ in 0..<2 {
                let snapshot = try await listener.expect("snapshot")
                if case .string(let id)? = snapshot["id"] { seen[id] = snapshot }
            }
            for id in ["q", "d"] {
                guard case .array(let changes)? = seen[id]?["changes"] else {
                    Issue.record("no snapshot of \(id): \(seen)")
                    continue
                }
                #expect(changes.count == 1 && changes[0]["type"] == .string("added") && changes[0]["doc"]?["path"] == .string("rooms/r2"))
            }
            #expect(try await client.patch("/v1/docs/rooms/r2", #"{"n": 2}"#).status == 200)
            let after = try await listener.expect("snapshot")
            let changes: [JSON]
            if case .array(let items)? = after["changes"] { changes = items } else { changes = [] }
            #expect(changes.first?["type"] == .string("modified"), "\(after)")
            #expect(changes.first?["doc"]?["data"]?["n"] == .int(2))
            await listener.close()
        }
    }
}

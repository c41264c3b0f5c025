import Foundation
import HearthCore
import HearthEngine
import HearthStore
import HearthTesting
import Testing
import HearthServer

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

    /// Another process that logs more changes than the log keeps between two looks trims some before the
    /// server reads them. The server cannot tell which documents they changed, so every view reads its result
    /// again and its listeners get the difference as an ordinary snapshot: their views still equal the data.
    @Test func listenersCatchUpWhenAnotherProcessOutrunsTheLog() async throws {
        try await TestServer.with(configure: { $0.storage.changeLogRetention = 3 }) { server, client in
            for k in 0..<3 {
                #expect(try await client.put("/v1/docs/rooms/r\(k)", #"{"open": true, "n": \#(k)}"#).status == 200)
            }
            let listener = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            let query = #"{"from": "rooms", "where": [["open", "==", true]], "orderBy": [{"field": "n"}]}"#
            try await listener.listen("q", query: query)
            _ = try await listener.expect("snapshot", id: "q")
            try await listener.listen("d", doc: "rooms/r1")
            _ = try await listener.expect("snapshot", id: "d")

            // One commit of another process's store that keeps only the last 3 log rows: the server can never
            // read the other 20, whose changes take r1 out of the query, delete r2 and add r3…r17.
            var configuration = Store.Configuration(dataDirectory: server.dataDirectory)
            configuration.synchronous = .normal
            configuration.changeLogRetention = 3
            configuration.changeLogTrimInterval = 1
            let other = try Store(configuration: configuration)
            defer { other.close() }
            try await other.write { context in
                let t = context.nextCommitTime()
                func put(_ id: String, _ json: String) throws {
                    try context.put(StoredDocument(path: try DocumentPath("rooms/\(id)"), data: Array(json.utf8),
                                                   createTime: t, updateTime: t), commitTime: t)
                }
                try put("r1", #"{"open": false, "n": 1}"#)
                try context.delete(try DocumentPath("rooms/r2"), commitTime: t)
                for k in 3..<18 { try put("r\(k)", #"{"open": true, "n": \#(k)}"#) }
                for k in 0..<5 { try put("x\(k)", #"{"open": false, "n": -1}"#) }  // the 3 rows left: nothing the views show
            }

            var expected: [String] = []
            if case .array(let docs)? = try await client.query(query).json?["documents"] {
                expected = docs.compactMap { $0["path"]?.stringValue }
            }
            #expect(expected.count == 16)
            let deadline = ContinuousClock.now + .seconds(10)
            while listener.views["q"]?.map(\.path.description) != expected || listener.views["d"]?.first?.fields["open"] != .bool(false) {
                guard ContinuousClock.now < deadline else { break }
                _ = try? await listener.next(timeout: .seconds(1))
            }
            #expect(listener.views["q"]?.map(\.path.description) == expected)
            #expect(listener.views["d"]?.first?.fields["open"] == .bool(false))

            // The feed goes on from there: a later write reaches the listener as one change.
            #expect(try await client.patch("/v1/docs/rooms/r0", #"{"n": 100}"#).status == 200)
            let after = try await listener.expect("snapshot", id: "q")
            #expect(after["changes"]?.arrayCount == 1)
            #expect(listener.views["q"]?.last?.path.description == "rooms/r0")
            await listener.close()
        }
    }
}

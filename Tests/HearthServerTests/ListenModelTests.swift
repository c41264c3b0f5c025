import Foundation
import HearthCore
import HearthEngine
import HearthTesting
import Testing
import HearthStore
import HearthServer

/// The model test of live updates: seeded random writes (creates, updates that move documents in and out
/// of filters and limit windows, deletes) while listeners with random queries are open. After every
/// snapshot, each listener's view equals its query run over the model's state at the snapshot's readTime;
/// a listener that disconnects and resumes mid-stream ends in the same state, with no change twice or missing.
@Suite struct ListenModelTests {
    static let collections = [CollectionPath(uncheckedSegments: ["items"]), CollectionPath(uncheckedSegments: ["items", "a", "items"])]

    /// Every committed change, in commit order.
    final class Model: @unchecked Sendable {
        var history: [(time: Timestamp, path: DocumentPath, doc: Document?)] = []
        var current: [DocumentPath: Document] = [:]

        func state(at time: Timestamp) -> [Document] {
            var out: [DocumentPath: Document] = [:]
            for entry in history where entry.time <= time { out[entry.path] = entry.doc }
            return Array(out.values)
        }
    }

    enum Target {
        case query(Query)
        case doc(DocumentPath)

        var json: String {
            switch self {
            case .query(let q): return q.jsonText
            case .doc(let p): return p.description
            }
        }

        func expected(over docs: [Document]) throws -> [Document] {
            switch self {
            case .query(let q): return try q.run(over: docs)
            case .doc(let p): return docs.filter { $0.path == p }
            }
        }
    }

    @Test func listenersMatchTheirQueriesAtEveryReadTime() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["HEARTH_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max / 2)
        var r = RandomValues(seed: seed, maxDepth: 1)
        try await TestServer.with(configure: { $0.storage.synchronous = .normal }) { server, client in
            let model = Model()
            func write(_ r: inout RandomValues) async throws {
                let collection = Self.collections[r.chance(0.8) ? 0 : 1]
                let path = DocumentPath(uncheckedSegments: collection.segments + ["d\(r.int(0...9))"])
                let body: String
                if r.chance(0.25) {
                    body = #"{"writes": [{"delete": "\#(path)"}]}"#
                } else {
                    let fields = r.document(in: Self.collections, id: "x").fields
                    body = #"{"writes": [{"set": "\#(path)", "data": \#(String(decoding: Value.encodeFields(fields), as: UTF8.self))}]}"#
                }
                let result = try await client.post("/v1/commit", body)
                guard result.status == 200, let time = result.json?["commitTime"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) else {
                    throw ListenClient.Failure(description: "commit failed: \(result.text)")
                }
                var doc: Document?
                if body.contains("\"set\"") {
                    let fields = try Value.decodeFields(JSON.parse(body)["writes"]![0]!["data"]!)
                    // A set that changes nothing keeps the document's update time, as Firestore's does.
                    if let old = model.current[path], old.fields == fields { doc = old } else {
                        doc = Document(path: path, fields: fields, createTime: model.current[path]?.createTime ?? time, updateTime: time)
                    }
                }
                model.current[path] = doc
                model.history.append((time, path, doc))
            }
            for _ in 0..<15 { try await write(&r) }

            var targets: [String: Target] = [:]
            for k in 0..<8 { targets["q\(k)"] = .query(r.query(over: Self.collections[0])) }
            targets["d0"] = .doc(DocumentPath(uncheckedSegments: ["items", "d1"]))
            targets["d1"] = .doc(DocumentPath(uncheckedSegments: ["items", "a", "items", "d2"]))
            let groups = [["q0", "q1", "q2", "q3", "d0"], ["q4", "q5", "q6", "q7", "d1"]]
            var clients: [ListenClient?] = []
            for group in groups {
                let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
                for id in group {
                    switch targets[id]! {
                    case .query(let q): try await ws.listen(id, query: q.jsonText)
                    case .doc(let p): try await ws.listen(id, doc: p.description)
                    }
                }
                clients.append(ws)
            }

            var checked = 0
            func drain(_ ws: ListenClient, quiet: Duration) async throws {
                while true {
                    let frame: JSON
                    do { frame = try await ws.next(timeout: quiet) } catch { return }
                    guard frame["type"]?.stringValue == "snapshot", let id = frame["id"]?.stringValue,
                          let readTime = ws.positions[id]?.readTime else {
                        Issue.record("seed \(seed): unexpected frame \(String(decoding: frame.serialized(), as: UTF8.self))")
                        return
                    }
                    let expected = try targets[id]!.expected(over: model.state(at: readTime))
                    let view = ws.views[id] ?? []
                    checked += 1
                    if view.map(\.wireBytes) != expected.map(\.wireBytes) {
                        // The first document that differs, whole: paths alone can agree while fields or times do not.
                        let k = zip(view, expected).enumerated().first { $0.element.0.wireBytes != $0.element.1.wireBytes }?.offset ?? min(view.count, expected.count)
                        let shown = { (docs: [Document]) in k < docs.count ? String(decoding: docs[k].wireBytes, as: UTF8.self) : "none" }
                        Issue.record("""
                            seed \(seed): \(id) \(targets[id]!.json) at \(readTime): view \(view.map(\.path.description)) \
                            expected \(expected.map(\.path.description)); at \(k): view \(shown(view)) expected \(shown(expected))
                            """)
                        throw ListenClient.Failure(description: "view mismatch")
                    }
                }
            }

            var saved: [String: (view: [Document], token: String)] = [:]
            for round in 0..<150 {
                try await write(&r)
                if round % 10 == 9 {
                    for ws in clients.compactMap({ $0 }) { try await drain(ws, quiet: .milliseconds(20)) }
                }
                if round == 60, let ws = clients[1] {
                    try await drain(ws, quiet: .milliseconds(200))
                    for id in groups[1] { saved[id] = (ws.views[id] ?? [], ws.positions[id]!.resumeToken) }
                    await ws.close()
                    clients[1] = nil
                }
                if round == 100 {
                    let ws = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
                    for id in groups[1] {
                        ws.restore(id, view: saved[id]!.view)
                        switch targets[id]! {
                        case .query(let q): try await ws.listen(id, query: q.jsonText, resumeToken: saved[id]!.token)
                        case .doc(let p): try await ws.listen(id, doc: p.description, resumeToken: saved[id]!.token)
                        }
                    }
                    clients[1] = ws
                }
            }
            let final = model.state(at: .max)
            for (k, ws) in clients.enumerated() {
                guard let ws else { continue }
                try await drain(ws, quiet: .milliseconds(400))
                for id in groups[k] {
                    let expected = try targets[id]!.expected(over: final)
                    #expect(ws.views[id]?.map(\.wireBytes) == expected.map(\.wireBytes), "seed \(seed): final view of \(id)")
                }
                await ws.close()
            }
            // A server that falls behind merges a target's waiting snapshots, so a loaded machine checks fewer.
            #expect(checked > 15, "seed \(seed): \(checked) snapshots checked")
        }
    }
}

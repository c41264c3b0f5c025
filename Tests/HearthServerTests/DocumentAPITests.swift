import HearthCore
import HearthTesting
import Testing
import HTTPTypes
import Foundation

/// The document API over real HTTP on loopback.
@Suite struct DocumentAPITests {
    @Test func setGetAndETag() async throws {
        try await TestServer.with { _, client in
            let put = try await client.put("/v1/docs/users/alice", #"{"name": "Alice", "age": 30, "score": 1.0, "tags": ["a"]}"#)
            #expect(put.status == 200)
            let doc = try #require(put.json)
            #expect(doc["path"] == .string("users/alice"))
            #expect(doc["id"] == .string("alice"))
            #expect(doc["data"]?["score"] == .double(1.0))
            #expect(doc["data"]?["age"] == .int(30))
            let updateTime = try #require(doc["updateTime"]?.stringValue)
            #expect(put.header("ETag") == "\"\(updateTime)\"")

            let get = try await client.get("/v1/docs/users/alice")
            #expect(get.status == 200)
            #expect(get.json?["data"] == doc["data"])
            #expect(get.text.contains(#""score":1.0"#))

            let missing = try await client.get("/v1/docs/users/bob")
            #expect(missing.status == 404)
            #expect(missing.errorCode == "not-found")
        }
    }

    /// Ids are their UTF-8 bytes: `café` with a precomposed `é` and with `e` and a combining accent are two
    /// documents, each read, listed and deleted on its own, as in Firestore.
    @Test func idsAreToldApartByTheirBytes() async throws {
        try await TestServer.with { _, client in
            #expect(try await client.put("/v1/docs/places/caf%C3%A9", #"{"n": 1}"#).status == 200)
            #expect(try await client.put("/v1/docs/places/cafe%CC%81", #"{"n": 2}"#).status == 200)
            #expect(try await client.get("/v1/docs/places/caf%C3%A9").json?["data"]?["n"] == .int(1))
            #expect(try await client.get("/v1/docs/places/cafe%CC%81").json?["data"]?["n"] == .int(2))
            let list = try await client.get("/v1/docs/places?pageSize=10")
            guard case .array(let listed)? = list.json?["documents"] else { Issue.record("no documents: \(list.text)"); return }
            #expect(listed.count == 2, "\(list.text)")
            #expect(try await client.delete("/v1/docs/places/cafe%CC%81").status == 204)
            #expect(try await client.get("/v1/docs/places/cafe%CC%81").status == 404)
            #expect(try await client.get("/v1/docs/places/caf%C3%A9").json?["data"]?["n"] == .int(1))
        }
    }

    @Test func createWithAutoAndChosenIDs() async throws {
        try await TestServer.with { _, client in
            let auto = try await client.post("/v1/docs/posts", #"{"title": "first"}"#)
            #expect(auto.status == 201)
            let id = try #require(auto.json?["id"]?.stringValue)
            #expect(id.count == 20)
            #expect(id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })

            let chosen = try await client.post("/v1/docs/posts?id=p1", #"{"title": "chosen"}"#)
            #expect(chosen.status == 201)
            #expect(chosen.json?["path"] == .string("posts/p1"))
            let again = try await client.post("/v1/docs/posts?id=p1", #"{"title": "again"}"#)
            #expect(again.status == 409)
            #expect(again.errorCode == "already-exists")
            #expect(try await client.get("/v1/docs/posts/p1").json?["data"]?["title"] == .string("chosen"))

            let empty = try await client.request(.post, "/v1/docs/posts?id=empty")
            #expect(empty.status == 201)
            #expect(empty.json?["data"] == .object([]))
        }
    }

    @Test func listPaginatesByID() async throws {
        try await TestServer.with { _, client in
            for i in 0..<25 {
                _ = try await client.put("/v1/docs/items/i\(String(format: "%02d", i))", #"{"n": \#(i)}"#)
            }
            _ = try await client.put("/v1/docs/items/i00/sub/x", #"{"deep": true}"#)
            var ids: [String] = []
            var token: String?
            var pages = 0
            repeat {
                let uri = "/v1/docs/items?pageSize=10" + (token.map { "&pageToken=\($0)" } ?? "")
                let page = try await client.get(uri)
                #expect(page.status == 200)
                guard case .array(let docs)? = page.json?["documents"] else { Issue.record("no documents"); return }
                ids += docs.compactMap { $0["id"]?.stringValue }
                token = page.json?["nextPageToken"]?.stringValue
                pages += 1
            } while token != nil && pages < 10
            #expect(pages == 3)
            #expect(ids == (0..<25).map { "i" + String(format: "%02d", $0) })

            #expect(try await client.get("/v1/docs/items?pageSize=0").status == 400)
            #expect(try await client.get("/v1/docs/items?pageSize=abc").status == 400)
            #expect(try await client.get("/v1/docs/items?pageToken=%25%25").status == 400)
            #expect(try await client.get("/v1/docs/items?color=red").errorCode == "invalid-argument")
        }
    }

    @Test func mergeAndUpdateWithFieldPaths() async throws {
        try await TestServer.with { _, client in
            _ = try await client.put("/v1/docs/p/1", #"{"a": {"x": 1, "y": 2}, "b": 1, "c": "keep"}"#)
            let merged = try await client.put("/v1/docs/p/1?merge=true", #"{"a": {"x": 10}, "b": {"$delete": true}, "d": true}"#)
            #expect(merged.status == 200)
            #expect(merged.json?["data"] == (try JSON.parse(#"{"a": {"x": 10, "y": 2}, "c": "keep", "d": true}"#)))

            let updated = try await client.patch("/v1/docs/p/1", #"{"a.y": 3, "`weird.key`": "w", "c": {"$delete": true}}"#)
            #expect(updated.status == 200)
            #expect(updated.json?["data"] == (try JSON.parse(#"{"a": {"x": 10, "y": 3}, "d": true, "weird.key": "w"}"#)))

            let replaced = try await client.patch("/v1/docs/p/1", #"{"a": {"z": 0}}"#)
            #expect(replaced.json?["data"]?["a"] == (try JSON.parse(#"{"z": 0}"#)))

            let missing = try await client.patch("/v1/docs/p/none", #"{"a": 1}"#)
            #expect(missing.status == 404)
            #expect(try await client.get("/v1/docs/p/none").status == 404)

            let overlap = try await client.patch("/v1/docs/p/1", #"{"a": 1, "a.b": 2}"#)
            #expect(overlap.status == 400)
        }
    }

    @Test func fieldTransforms() async throws {
        try await TestServer.with { _, client in
            _ = try await client.put("/v1/docs/t/1", #"{"n": 1, "f": 1.5, "big": 9223372036854775800, "arr": [1, 2, 2, "x"], "m": 5}"#)
            let r = try await client.patch("/v1/docs/t/1", """
                {"n": {"$increment": 2}, "f": {"$increment": 1}, "big": {"$increment": 100},
                 "arr": {"$arrayRemove": [2.0]}, "u": {"$arrayUnion": [1, 1, null]}, "m": {"$maximum": 5.0},
                 "lo": {"$minimum": 3}, "ts": {"$serverTimestamp": true}, "new": {"$increment": 4}}
                """)
            #expect(r.status == 200)
            let data = try #require(r.json?["data"])
            #expect(data["n"] == .int(3))
            #expect(data["f"] == .double(2.5))
            #expect(data["big"] == .int(Int64.max))
            #expect(data["arr"] == .array([.int(1), .string("x")]))
            #expect(data["u"] == .array([.int(1), .null]))
            #expect(data["m"] == .int(5))
            #expect(data["lo"] == .int(3))
            #expect(data["new"] == .int(4))
            #expect(data["ts"]?["$timestamp"] == r.json?["updateTime"])
        }
    }

    @Test func deleteAndRecursiveDelete() async throws {
        try await TestServer.with { _, client in
            _ = try await client.put("/v1/docs/events/e1", #"{"title": "party"}"#)
            _ = try await client.put("/v1/docs/events/e1/invitations/i1", #"{"to": "bob"}"#)
            _ = try await client.put("/v1/docs/events/e1/invitations/i1/notes/n1", #"{"x": 1}"#)
            _ = try await client.put("/v1/docs/events/e10/invitations/i1", #"{"to": "carol"}"#)

            #expect(try await client.delete("/v1/docs/events/missing").status == 204)
            #expect(try await client.delete("/v1/docs/events/e1").status == 204)
            #expect(try await client.get("/v1/docs/events/e1").status == 404)
            // Firestore's rule: a plain delete leaves subcollections.
            #expect(try await client.get("/v1/docs/events/e1/invitations/i1").status == 200)
            #expect(try await client.get("/v1/collections/events/e1").json?["collectionIds"] == .array([.string("invitations")]))

            #expect(try await client.delete("/v1/docs/events/e1?recursive=true").status == 204)
            #expect(try await client.get("/v1/docs/events/e1/invitations/i1").status == 404)
            #expect(try await client.get("/v1/docs/events/e1/invitations/i1/notes/n1").status == 404)
            #expect(try await client.get("/v1/docs/events/e10/invitations/i1").status == 200)
        }
    }

    @Test func collectionIDs() async throws {
        try await TestServer.with { _, client in
            for path in ["a/1", "b/1", "b-x/1", "b/1/c/1", "b/1/d/1/e/1", "b/1/c-d/2", "b/2/z/1"] {
                _ = try await client.put("/v1/docs/\(path)", "{}")
            }
            #expect(try await client.get("/v1/collections").json?["collectionIds"] == (try JSON.parse(#"["a", "b", "b-x"]"#)))
            #expect(try await client.get("/v1/collections/b/1").json?["collectionIds"] == (try JSON.parse(#"["c", "c-d", "d"]"#)))
            #expect(try await client.get("/v1/collections/b/9").json?["collectionIds"] == .array([]))
            #expect(try await client.get("/v1/collections/b").status == 400)
        }
    }

    @Test func preconditionHeaders() async throws {
        try await TestServer.with { _, client in
            let first = try await client.put("/v1/docs/c/1", #"{"v": 1}"#)
            let etag = try #require(first.header("ETag"))
            let ok = try await client.put("/v1/docs/c/1", #"{"v": 2}"#, headers: ["If-Match": etag])
            #expect(ok.status == 200)
            let stale = try await client.put("/v1/docs/c/1", #"{"v": 3}"#, headers: ["If-Match": etag])
            #expect(stale.status == 412)
            #expect(stale.errorCode == "failed-precondition")
            #expect(try await client.patch("/v1/docs/c/1", #"{"v": 4}"#, headers: ["If-Match": etag]).status == 412)
            #expect(try await client.delete("/v1/docs/c/1", headers: ["If-Match": etag]).status == 412)
            #expect(try await client.get("/v1/docs/c/1").json?["data"]?["v"] == .int(2))
            #expect(try await client.put("/v1/docs/c/1", "{}", headers: ["If-Match": "yesterday"]).status == 400)

            let createOnly = try await client.put("/v1/docs/c/1", #"{"v": 5}"#, headers: ["If-None-Match": "*"])
            #expect(createOnly.status == 409)
            #expect(try await client.put("/v1/docs/c/2", #"{"v": 5}"#, headers: ["If-None-Match": "*"]).status == 200)
        }
    }

    @Test func unchangedWriteKeepsUpdateTime() async throws {
        try await TestServer.with { _, client in
            let a = try await client.put("/v1/docs/u/1", #"{"v": 1}"#)
            let b = try await client.put("/v1/docs/u/1", #"{"v": 1}"#)
            #expect(a.json?["updateTime"] == b.json?["updateTime"])
            let c = try await client.put("/v1/docs/u/1", #"{"v": 2}"#)
            #expect(c.json?["updateTime"] != a.json?["updateTime"])
            #expect(c.json?["createTime"] == a.json?["createTime"])
        }
    }

    @Test func identities() async throws {
        try await TestServer.with { server, client in
            _ = try await client.put("/v1/docs/s/1", "{}")
            let nobody = try await client.get("/v1/docs/s/1", as: .nobody)
            #expect(nobody.status == 403)
            #expect(nobody.errorCode == "permission-denied")
            let wrong = try await client.get("/v1/docs/s/1", as: .token("not-a-key"))
            #expect(wrong.status == 401)
            #expect(wrong.errorCode == "unauthenticated")
            #expect(!wrong.text.contains("not-a-key"))
            let garbage = try await client.get("/v1/docs/s/1", as: .authorization("Basic Zm9vOmJhcg=="))
            #expect(garbage.status == 401)
            #expect(try await client.put("/v1/docs/s/2", "{}", as: .nobody).status == 403)
            #expect(try await client.get("/v1/docs/s/2").status == 404)
            _ = server
        }
    }

    @Test func healthAndMetrics() async throws {
        try await TestServer.with { _, client in
            let health = try await client.get("/healthz", as: .nobody)
            #expect(health.status == 200)
            _ = try await client.get("/v1/docs/m/1")
            let metrics = try await client.get("/metrics", as: .nobody)
            #expect(metrics.status == 200)
            #expect(metrics.text.contains(#"hearth_http_requests_total{route="/v1/docs/**",method="GET",status="404"} 1"#))
            #expect(metrics.text.contains("hearth_http_request_duration_seconds_bucket"))
            #expect(metrics.text.contains("hearth_database_size_bytes"))
        }
    }
}

import Foundation
import HearthClient
import HearthCore
import HearthTesting
import Testing

/// The client's document calls against a real server on loopback, acting with the admin key.
@Suite struct DocumentTests {
    struct Post: Codable, Equatable {
        @DocumentID var id: String?
        var title: String
        var likes: Int
        var tags: [String]
        var published: Date
    }

    static func hearth(_ server: TestServer) -> Hearth {
        Hearth(url: URL(string: "http://127.0.0.1:\(server.port)")!, adminKey: server.adminKey)
    }

    @Test func setGetUpdateAndDeleteACodableDocument() async throws {
        try await TestServer.with { server, _ in
            let db = Self.hearth(server)
            let ref = db.collection("posts").document("p1")
            let post = Post(title: "Hello", likes: 0, tags: ["intro"], published: Date(timeIntervalSince1970: 1_764_000_000.5))
            try await ref.setData(from: post)
            var read = try await ref.getDocument(as: Post.self)
            #expect(read.id == "p1")
            #expect(read.title == "Hello" && read.likes == 0 && read.tags == ["intro"])
            #expect(read.published == post.published)

            try await ref.updateData(["likes": FieldValue.increment(Int64(2)), "tags": FieldValue.arrayUnion([.string("news"), .string("intro")])])
            read = try await ref.getDocument(as: Post.self)
            #expect(read.likes == 2 && read.tags == ["intro", "news"])
            try await ref.updateData(["tags": FieldValue.arrayRemove([.string("intro")]), "likes": FieldValue.maximum(Int64(10))])
            read = try await ref.getDocument(as: Post.self)
            #expect(read.likes == 10 && read.tags == ["news"])

            let snapshot = try await ref.getDocument()
            #expect(snapshot.exists && snapshot.documentID == "p1")
            #expect(snapshot.get("likes") == .int(10))
            #expect(snapshot.createTime != nil && snapshot.updateTime != nil)

            try await ref.delete()
            let gone = try await ref.getDocument()
            #expect(!gone.exists && gone.data() == nil)
            let error = await #expect(throws: HearthClientError.self) { try await ref.getDocument(as: Post.self) }
            #expect(error?.code == .notFound)
        }
    }

    @Test func dictionariesMergeAndTransforms() async throws {
        try await TestServer.with { server, _ in
            let db = Self.hearth(server)
            let ref = db.document("users/alice")
            try await ref.setData(["name": "Alice", "age": 30, "address": ["city": "Paris", "zip": "75001"],
                                   "joined": FieldValue.serverTimestamp(), "score": 1.5, "avatar": Data([1, 2]),
                                   "home": GeoPoint(latitude: 1, longitude: 2), "friend": db.document("users/bob"), "nothing": NSNull()])
            var data = try #require(try await ref.getDocument().data())
            #expect(data["name"] == .string("Alice") && data["age"] == .int(30) && data["score"] == .double(1.5))
            #expect(data["avatar"] == .bytes([1, 2]) && data["nothing"] == .null)
            #expect(data["friend"] == .reference(try DocumentPath("users/bob")))
            guard case .timestamp = data["joined"] else { Issue.record("joined is \(String(describing: data["joined"]))"); return }

            try await ref.setData(["address": ["city": "Lyon"], "age": FieldValue.delete()], merge: true)
            data = try #require(try await ref.getDocument().data())
            #expect(data["address"] == .map(["city": .string("Lyon"), "zip": .string("75001")]), "merge is leaf-wise")
            #expect(data["age"] == nil && data["name"] == .string("Alice"))

            try await ref.setData(["name": "Al", "age": 99], mergeFields: ["name"])
            data = try #require(try await ref.getDocument().data())
            #expect(data["name"] == .string("Al") && data["age"] == nil, "only the named fields are merged")

            try await ref.updateData(["address.city": "Nice"])
            #expect(try await ref.getDocument().get("address.city") == .string("Nice"))

            try await ref.setData(["plain": true])
            #expect(try await ref.getDocument().data() == ["plain": .bool(true)], "a set without merge replaces the document")
        }
    }

    @Test func addDocumentAndSubcollections() async throws {
        try await TestServer.with { server, _ in
            let db = Self.hearth(server)
            let added = try await db.collection("posts").addDocument(data: ["title": "auto"])
            #expect(added.documentID.count == 20 && added.parent.path == "posts")
            let fromModel = try await db.collection("posts").addDocument(from: Post(title: "m", likes: 1, tags: [], published: Date()))
            #expect(try await fromModel.getDocument(as: Post.self).title == "m")
            let comment = added.collection("comments").document("c1")
            try await comment.setData(["text": "first"])
            #expect(comment.path == "posts/\(added.documentID)/comments/c1")
            #expect(comment.parent.parent == added)
            let local = db.collection("posts").document()
            #expect(local.documentID.count == 20)
            #expect(!(try await local.getDocument().exists))
            // Ids are encoded segment by segment in URLs.
            let odd = db.collection("people").document("Jürgen & Co?")
            try await odd.setData(["ok": true])
            #expect(try await odd.getDocument().get("ok") == .bool(true))
        }
    }

    @Test func aBatchCommitsAtomically() async throws {
        try await TestServer.with { server, _ in
            let db = Self.hearth(server)
            let a = db.document("accounts/a"), b = db.document("accounts/b"), c = db.document("accounts/c")
            try await a.setData(["balance": 10])
            let result = try await db.batch()
                .updateData(["balance": FieldValue.increment(Int64(-5))], forDocument: a)
                .setData(["balance": 5], forDocument: b)
                .setData(from: ["balance": 0], forDocument: c)
                .commit()
            #expect(result.writeResults.count == 3)
            #expect(result.writeResults[0].transformResults == [.int(5)])
            #expect(try await b.getDocument().get("balance") == .int(5))

            // One write that fails (an update of a missing document) fails them all.
            let failed = await #expect(throws: HearthClientError.self) {
                try await db.batch()
                    .deleteDocument(b)
                    .updateData(["balance": 1], forDocument: db.document("accounts/missing"))
                    .commit()
            }
            #expect(failed?.code == .notFound && failed?.status == 404)
            #expect(failed?.message.contains("writes[1]") == true, "\(failed?.message ?? "")")
            #expect(try await b.getDocument().exists, "nothing of the failed batch applied")
        }
    }

    /// The server's errors arrive as `HearthClientError` with the API's status, code and message.
    @Test func serverErrorsMapToTheTypedError() async throws {
        try await TestServer.with { server, _ in
            let db = Self.hearth(server)
            let missing = await #expect(throws: HearthClientError.self) { try await db.document("posts/none").updateData(["a": 1]) }
            #expect(missing?.status == 404 && missing?.code == .notFound)

            let sentinelInArray = await #expect(throws: HearthClientError.self) {
                try await db.document("posts/p").setData(["list": [FieldValue.serverTimestamp()]])
            }
            #expect(sentinelInArray?.status == 400 && sentinelInArray?.code == .invalidArgument)

            let anonymous = Hearth(url: db.url)
            let denied = await #expect(throws: HearthClientError.self) { try await anonymous.document("posts/p").getDocument() }
            #expect(denied?.status == 403 && denied?.code == .permissionDenied)
            #expect(denied?.message == "Missing or insufficient permissions.")

            let badKey = Hearth(url: db.url, token: "hat_not_a_token")
            let unauthenticated = await #expect(throws: HearthClientError.self) { try await badKey.document("posts/p").getDocument() }
            #expect(unauthenticated?.status == 401 && unauthenticated?.code == .unauthenticated)

            let unsupported = await #expect(throws: HearthClientError.self) {
                try await db.document("posts/p").setData(["when": NSObject()])
            }
            #expect(unsupported?.code == .invalidArgument && unsupported?.status == nil, "refused before any request")
            #expect(unsupported?.message.contains("'when'") == true, "\(unsupported?.message ?? "")")

            // A port nothing listens on: the call gives up at its timeout.
            let closed = Hearth(url: URL(string: "http://127.0.0.1:\(try LoopbackPort.unused())")!, adminKey: server.adminKey,
                                timeout: .seconds(1))
            let unreachable = await #expect(throws: HearthClientError.self) { try await closed.document("posts/p").getDocument() }
            #expect(unreachable?.code == .unavailable && unreachable?.status == nil)
        }
    }
}

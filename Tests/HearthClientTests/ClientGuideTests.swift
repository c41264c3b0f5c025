import Foundation
import HearthClient
import HearthCore
import HearthTesting
import Testing

/// The examples of docs/client.md, run as printed: each `swift example` block of the page is in this file
/// word for word (checked below), in the page's order, against a server holding the data they assume.
@Suite struct ClientGuideTests {
    @Test func theGuidesExamplesRun() async throws {
        try await TestServer.with(configure: { $0.useTestAccounts() }) { server, _ in
            let db = Hearth(url: URL(string: "http://127.0.0.1:\(server.port)")!, adminKey: server.adminKey)
            try await QueryTests.seed(db)
            try await db.document("accounts/a").setData(["balance": 10])

            struct Post: Codable {
                @DocumentID var id: String?
                var title: String
                var likes: Int
                var tags: [String]
                @ServerTimestamp var createdAt: Date?
            }

            let posts = db.collection("posts")
            let ref = posts.document("p1")
            try await ref.setData(from: Post(title: "Hello", likes: 0, tags: ["intro"]))
            let post = try await ref.getDocument(as: Post.self)          // post.id == "p1", post.createdAt set by the server
            try await ref.updateData(["likes": FieldValue.increment(1),
                                      "tags": FieldValue.arrayUnion([.string("news")])])
            let snapshot = try await ref.getDocument()                   // snapshot.exists, .data(), .get("likes"), .updateTime
            let added = try await posts.addDocument(from: Post(title: "Second", likes: 0, tags: []))   // an id the server chose
            try await added.delete()

            let alice = db.document("users/alice")
            try await alice.setData(["name": "Alice", "age": 30, "home": GeoPoint(latitude: 48.85, longitude: 2.35),
                                     "joined": FieldValue.serverTimestamp(), "manager": db.document("users/bob")])
            try await alice.setData(["address": ["city": "Paris"]], merge: true)       // merges leaf by leaf
            try await alice.setData(["age": 31, "nickname": "Al"], mergeFields: ["age"]) // only `age`
            try await alice.updateData(["address.city": "Lyon", "nickname": FieldValue.delete()])
            let city = try await alice.getDocument().get("address.city")                  // .string("Lyon")

            let cities = db.collection("cities")
            let big = try await cities
                .whereField("country", isEqualTo: "USA")
                .whereField("population", isGreaterThan: 1_000_000)
                .order(by: "population", descending: true)
                .limit(to: 10)
                .getDocuments()
            for city in big.documents { print(city.documentID, city.get("name") ?? .null) }

            let coastal = try await cities.whereField("regions", arrayContainsAny: ["west_coast", "east_coast"]).getDocuments()
            let either = try await cities.whereFilter(.orFilter([.whereField("state", isEqualTo: "CA"),
                                                                 .whereField("country", in: ["Japan"])])).getDocuments()
            let page2 = try await cities.order(by: "population").start(after: [860_000]).limit(to: 2).getDocuments()
            let bridges = try await db.collectionGroup("landmarks").whereField("type", isEqualTo: "bridge").getDocuments()
            let stats = try await cities.whereField("country", isEqualTo: "USA")
                .aggregate([.count(), .sum("population"), .average("population")]).getAggregation()
            let total = stats.get(.sum("population"))      // .int(6850000); stats.count == 4

            let batch = db.batch()
            batch.updateData(["balance": FieldValue.increment(-5)], forDocument: db.document("accounts/a"))
            batch.setData(["balance": 5], forDocument: db.document("accounts/b"), merge: true)
            batch.deleteDocument(db.document("ledger/t0"))
            try await batch.commit()                            // all or nothing, in order

            struct Account: Codable { var balance: Int }
            let newBalance = try await db.runTransaction { tx in
                let balance = try await tx.getDocument(db.document("accounts/a")).data(as: Account.self).balance
                tx.updateData(["balance": balance + 1], forDocument: db.document("accounts/a"))
                return balance + 1
            }

            let app = Hearth(url: db.url)
            let user = try await app.auth.createUser(withEmail: "ann@example.com", password: "a long password", displayName: "Ann")
            try await app.auth.signOut()
            try await app.auth.signIn(withEmail: "ann@example.com", password: "a long password")
            let me = try await app.auth.fetchUser()               // the account as the server has it (me.uid == user.uid)
            let token = try await app.auth.idToken()              // the current access token, e.g. to hand to another service
            let guest = try await Hearth(url: db.url).auth.signInAnonymously()

            let emails = try await db.sendEmail(to: ["ann@example.com"], subject: "Your invitation", text: "Come over on Friday!")
            let pushes = try await db.sendPush(to: .user("alice"), notification: PushNotification(title: "New reply", body: "Someone replied"),
                                               data: ["letter": "l1"])   // [] when alice has no device

            let listening = Task {
                for try await snapshot in db.collection("cities").whereField("state", isEqualTo: "CA").snapshots() {
                    for change in snapshot.documentChanges {
                        print(change.type, change.document.documentID, change.newIndex)
                    }
                    if snapshot.documents.count > 3 { break }
                }
            }
            try await db.document("cities/SJ").setData(["name": "San Jose", "state": "CA"])
            try await listening.value

            for try await doc in db.document("cities/SJ").snapshots() {
                print(doc.exists, doc.get("name") ?? .null)
                break                                           // leaving the loop (or cancelling the task) closes the listener
            }

            do {
                try await db.document("posts/missing").updateData(["likes": 1])
            } catch let error as HearthClientError where error.code == .notFound {
                print(error.status ?? 0, error.message)         // 404 and the server's words: no document to update at posts/missing
            }

            #expect(post.id == "p1" && post.createdAt != nil && snapshot.exists)
            #expect(city == .string("Lyon"))
            #expect(big.documents.map(\.documentID) == ["LA", "SD"] && coastal.count == 4 && either.count == 4)
            #expect(page2.documents.map(\.documentID) == ["SD", "LA"] && bridges.count == 1)
            #expect(total == .int(6_850_000) && stats.count == 4)
            #expect(newBalance == 6)
            #expect(me.uid == user.uid && token != nil && guest.isAnonymous)
            #expect(emails.count == 1 && pushes.isEmpty)
            _ = added
        }
    }

    /// Every `swift example` block of docs/client.md appears in this file as printed (indentation aside), so
    /// the page shows only code the test above runs.
    @Test func everyExampleOfThePageIsRunHere() throws {
        let page = try String(contentsOfFile: DocExamples.projectRoot + "/docs/client.md", encoding: .utf8)
        let source = try String(contentsOfFile: DocExamples.projectRoot + "/Tests/HearthClientTests/ClientGuideTests.swift", encoding: .utf8)
        let sourceLines = source.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let blocks = page.components(separatedBy: "```swift example\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count >= 6)
        for block in blocks {
            let lines = block.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let found = sourceLines.indices.contains { start in
                var k = start
                for line in lines {
                    while k < sourceLines.count && sourceLines[k].isEmpty { k += 1 }
                    guard k < sourceLines.count, sourceLines[k] == line else { return false }
                    k += 1
                }
                return true
            }
            #expect(found, "docs/client.md: this example is not run by ClientGuideTests:\n\(block)")
        }
    }
}

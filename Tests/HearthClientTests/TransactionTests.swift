import Foundation
import HearthClient
import HearthCore
import HearthTesting
import Testing

/// `runTransaction`: reads recorded, writes committed together, and the whole body run again when a document
/// it read changed before the commit (`aborted`), as Firestore's clients do.
@Suite struct TransactionTests {
    final class Attempts: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func next() -> Int { lock.withLock { n += 1; return n } }
        var count: Int { lock.withLock { n } }
    }

    @Test func aConflictingWriteMakesTheTransactionRunAgain() async throws {
        try await TestServer.with { server, _ in
            let db = Hearth(url: URL(string: "http://127.0.0.1:\(server.port)")!, adminKey: server.adminKey)
            let other = Hearth(url: db.url, adminKey: server.adminKey)
            let account = db.document("accounts/a")
            try await account.setData(["balance": 10])
            let attempts = Attempts()
            let seen = try await db.runTransaction { tx in
                let attempt = attempts.next()
                let balance = try await tx.getDocument(account).data(as: [String: Int].self)["balance"]!
                if attempt == 1 {
                    // Another client changes the document after this transaction read it.
                    try await other.document("accounts/a").updateData(["balance": FieldValue.increment(Int64(100))])
                }
                tx.updateData(["balance": balance - 5], forDocument: account)
                tx.setData(["from": balance], forDocument: db.document("ledger/t1"))
                return balance
            }
            #expect(attempts.count == 2)
            #expect(seen == 110, "the second run read the other client's write")
            #expect(try await account.getDocument().get("balance") == .int(105), "no write was lost")
            #expect(try await db.document("ledger/t1").getDocument().get("from") == .int(110))
        }
    }

    @Test func retriesStopAfterMaxAttemptsWithAborted() async throws {
        try await TestServer.with { server, _ in
            let db = Hearth(url: URL(string: "http://127.0.0.1:\(server.port)")!, adminKey: server.adminKey)
            let counter = db.document("counters/c")
            try await counter.setData(["n": 0])
            let attempts = Attempts()
            let error = await #expect(throws: HearthClientError.self) {
                try await db.runTransaction(maxAttempts: 2) { tx in
                    _ = attempts.next()
                    _ = try await tx.getDocument(counter)
                    try await Hearth(url: db.url, adminKey: server.adminKey).document("counters/c").updateData(["n": FieldValue.increment(Int64(1))])
                    tx.updateData(["n": -1], forDocument: counter)
                }
            }
            #expect(error?.code == .aborted && error?.status == 409)
            #expect(attempts.count == 2)
            #expect(try await counter.getDocument().get("n") == .int(2))
        }
    }

    struct Stop: Error {}

    @Test func anErrorInTheBodyRollsBackAndIsRethrown() async throws {
        try await TestServer.with { server, _ in
            let db = Hearth(url: URL(string: "http://127.0.0.1:\(server.port)")!, adminKey: server.adminKey)
            let doc = db.document("things/x")
            await #expect(throws: Stop.self) {
                try await db.runTransaction { tx in
                    _ = try await tx.getDocument(doc)
                    tx.setData(["written": true], forDocument: doc)
                    throw Stop()
                }
            }
            #expect(!(try await doc.getDocument().exists))
            // Queries read inside a transaction count as reads too.
            try await doc.setData(["v": 1])
            let count = try await db.runTransaction { tx in
                try await tx.getDocuments(db.collection("things")).count
            }
            #expect(count == 1)
        }
    }
}

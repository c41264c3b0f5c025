import Foundation
import HearthCore
import HearthServer
import HearthTesting
import Testing
import HearthAuth

/// A listener acts with the access token it connected (or authenticated) with, and that token expires: as in
/// Firestore, whose listen streams end with `unauthenticated` when their token does, the connection then ends
/// (`unauthenticated`, close code 1008) unless the client sent a fresh token of the same account first.
@Suite struct ListenExpiryTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /notes/{id} {
              allow get, list: if request.auth != null;
            }
          }
        }
        """

    /// Seconds an access token works in these tests: long enough for every step before an expiry to finish
    /// on a loaded machine.
    static let lifetime: Int64 = 20

    static func configure(_ file: String, lifetime: Int64 = lifetime) -> (inout ServerConfiguration) -> Void {
        { $0.rulesFile = file; $0.useTestAccounts(); $0.auth.accessTokenLifetime = .seconds(lifetime) }
    }

    /// Waits for the connection to end and answers its close code.
    static func closeCode(of ws: ListenClient, within seconds: Double = 10) async throws -> Int? {
        let deadline = Date().addingTimeInterval(seconds)
        while !ws.isClosed && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return ws.closeCode
    }

    @Test func listenersEndWhenTheirAccessTokenExpires() async throws {
        let file = try RulesHTTPTests.writeRules(Self.rules)
        try await TestServer.with(configure: Self.configure(file)) { server, client in
            _ = try await client.put("/v1/docs/notes/n1", #"{"text": "hi"}"#)
            // Before the token is issued, so that its expiry is at least `lifetime` later.
            let started = Date()
            let ann = try await client.signedUp("ann@example.com", "a long enough password")
            // One connection with the token in the upgrade request, one that sends it as its first message,
            // and one with the admin key, whose credentials do not expire.
            let viaHeader = try await ListenClient.connect(port: server.port, credentials: .header(ann.token))
            let viaMessage = try await ListenClient.connect(port: server.port)
            try await viaMessage.send(#"{"type": "auth", "token": "\#(ann.token)"}"#)
            let admin = try await ListenClient.connect(port: server.port, credentials: .header(server.adminKey))
            for ws in [viaHeader, viaMessage, admin] {
                try await ws.listen("n1", doc: "notes/n1")
                try await ws.expect("snapshot", id: "n1")
            }
            // Until the token expires, changes arrive.
            _ = try await client.patch("/v1/docs/notes/n1", #"{"text": "before"}"#)
            for ws in [viaHeader, viaMessage, admin] { try await ws.expect("snapshot", id: "n1") }

            for ws in [viaHeader, viaMessage] {
                let error = try await ws.expect("error", timeout: .seconds(Self.lifetime + 10))
                #expect(error["code"] == .string("unauthenticated"))
                #expect(error["message"]?.stringValue?.contains("expired") == true)
                #expect(try await Self.closeCode(of: ws) == 1008)
            }
            // Not before the token expired (the server's clock may round down by a few milliseconds).
            #expect(Date().timeIntervalSince(started) > Double(Self.lifetime) - 0.2)
            // The admin's connection carries on.
            _ = try await client.patch("/v1/docs/notes/n1", #"{"text": "after"}"#)
            try await admin.expect("snapshot", id: "n1")
            #expect(admin.views["n1"]?.first?.fields["text"] == .string("after"))
            for ws in [viaHeader, viaMessage, admin] { await ws.close() }
        }
    }

    @Test func aFreshTokenOfTheSameAccountKeepsTheListenerGoing() async throws {
        let file = try RulesHTTPTests.writeRules(Self.rules)
        // Longer-lived tokens than the other tests': the refresh must reach the server before the first token
        // expires, and the connection must show a change between the two expiries, each with seconds to spare
        // on a machine running the whole suite (shorter tokens left too little while heavy tests ran beside them).
        let lifetime: Int64 = 24
        try await TestServer.with(configure: Self.configure(file, lifetime: lifetime)) { server, client in
            _ = try await client.put("/v1/docs/notes/n1", #"{"text": "hi"}"#)
            let ann = try await client.signedUp("ann@example.com", "a long enough password")
            let firstExpiry = Date().addingTimeInterval(Double(lifetime))  // at the latest
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(ann.token))
            try await ws.listen("n1", doc: "notes/n1")
            try await ws.expect("snapshot", id: "n1")

            // Refresh well before the first token expires and hand the new token to the connection.
            try await Task.sleep(for: .seconds(Double(lifetime) / 3))
            let secondExpiry = Date().addingTimeInterval(Double(lifetime))  // at the earliest
            guard let fresh = SignedIn(try await client.refresh(ann.refreshToken)) else {
                Issue.record("refresh failed")
                return
            }
            try await ws.send(#"{"type": "auth", "token": "\#(fresh.token)"}"#)

            // Past the first token's expiry the connection still delivers changes.
            try await Task.sleep(for: .seconds(max(0, firstExpiry.timeIntervalSinceNow) + 0.3))
            #expect(!ws.isClosed)
            _ = try await client.patch("/v1/docs/notes/n1", #"{"text": "later"}"#)
            try await ws.expect("snapshot", id: "n1")
            #expect(ws.views["n1"]?.first?.fields["text"] == .string("later"))

            // The fresh token expires in its turn.
            let error = try await ws.expect("error", timeout: .seconds(lifetime + 10))
            #expect(error["code"] == .string("unauthenticated"))
            #expect(Date() > secondExpiry.addingTimeInterval(-0.2))
            #expect(try await Self.closeCode(of: ws) == 1008)
        }
    }

    @Test func onlyAValidTokenOfTheSameAccountReplacesTheConnectionsToken() async throws {
        let file = try RulesHTTPTests.writeRules(Self.rules)
        try await TestServer.with(configure: Self.configure(file)) { server, client in
            _ = try await client.put("/v1/docs/notes/n1", #"{"text": "hi"}"#)
            let ann = try await client.signedUp("ann@example.com", "a long enough password")
            let bob = try await client.signedUp("bob@example.com", "another long password")
            let ws = try await ListenClient.connect(port: server.port, credentials: .header(ann.token))
            try await ws.listen("n1", doc: "notes/n1")
            try await ws.expect("snapshot", id: "n1")

            // Each refused: another account's token, the admin key, a malformed token, an unknown one.
            let refused: [(String, String)] = [
                (bob.token, "failed-precondition"), (server.adminKey, "failed-precondition"),
                ("not a token", "unauthenticated"), ("hat_" + String(repeating: "A", count: 43), "unauthenticated"),
            ]
            for (token, code) in refused {
                try await ws.send(#"{"type": "auth", "token": "\#(token)"}"#)
                let error = try await ws.expect("error")
                #expect(error["code"] == .string(code), "token \(token.prefix(8))…")
                #expect(error["id"] == nil)
            }
            // The connection still works, as ann, and still ends when ann's token expires.
            _ = try await client.patch("/v1/docs/notes/n1", #"{"text": "still ann"}"#)
            try await ws.expect("snapshot", id: "n1")
            let error = try await ws.expect("error", timeout: .seconds(Self.lifetime + 10))
            #expect(error["code"] == .string("unauthenticated"))
            #expect(try await Self.closeCode(of: ws) == 1008)
        }
    }
}

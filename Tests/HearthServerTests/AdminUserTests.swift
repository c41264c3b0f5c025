import Foundation
import HearthCore
import HearthServer
import HearthTesting
import Testing

/// Account administration with the admin key, over HTTP and from `hearth users`.
@Suite struct AdminUserTests {
    @Test func createListReadClaimsRevokeDelete() async throws {
        try await TestServer.with(configure: { $0.useTestAccounts() }) { _, client in
            let created = try await client.post("/v1/admin/users", """
                {"uid": "ann", "email": "Ann@Example.com", "password": "long enough password", "displayName": "Ann",
                 "emailVerified": true, "claims": {"role": "editor", "since": {"$timestamp": "2026-01-01T00:00:00Z"}}}
                """)
            #expect(created.status == 201, "\(created.text)")
            #expect(created.json?["uid"] == .string("ann"))
            #expect(created.json?["claims"]?["role"] == .string("editor"))
            #expect(created.json?["disabled"] == .bool(false))
            #expect(!created.text.contains("argon2"), "the password hash never leaves the server")
            for uid in ["bob", "cat", "dan"] {
                #expect(try await client.post("/v1/admin/users", #"{"uid": "\#(uid)"}"#).status == 201)
            }

            let page1 = try await client.get("/v1/admin/users?pageSize=2")
            #expect(Self.uids(page1) == ["ann", "bob"])
            let next = try #require(page1.json?["nextPageToken"]?.stringValue)
            let page2 = try await client.get("/v1/admin/users?pageSize=2&pageToken=\(next)")
            #expect(Self.uids(page2) == ["cat", "dan"])
            #expect(page2.json?["nextPageToken"] == nil)

            let session = try await client.loggedIn("ann@example.com", "long enough password")
            #expect(session.user["emailVerified"] == .bool(true))
            let claims = try await client.put("/v1/admin/users/ann/claims", #"{"claims": {"admin": true}}"#)
            let expected = try JSON.parse(#"{"admin": true}"#)
            #expect(claims.status == 200 && claims.json?["claims"] == expected)
            #expect(try await client.get("/v1/admin/users/ann").json?["claims"]?["admin"] == .bool(true))

            let revoked = try await client.post("/v1/admin/users/ann/revoke")
            #expect(revoked.status == 200 && revoked.json?["revokedSessions"] == .int(1), "\(revoked.text)")
            #expect(try await client.get("/v1/auth/me", as: .token(session.token)).status == 401)

            let again = try await client.loggedIn("ann@example.com", "long enough password")
            #expect(try await client.delete("/v1/admin/users/ann").status == 204)
            #expect(try await client.get("/v1/auth/me", as: .token(again.token)).status == 401)
            #expect(try await client.get("/v1/admin/users/ann").status == 404)
        }
    }

    /// `hearth users` on a folder a server holds acts through that server (with the admin key it is given in
    /// `HEARTH_ADMIN_KEY`), so the server's answers show each change at once.
    @Test func commandLineActsThroughARunningServer() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await TestServer.start(dataDirectory: folder, configure: { $0.useTestAccounts() })
        let client = server.client()
        let key = ["HEARTH_ADMIN_KEY": server.adminKey]
        do {
            let create = try await HearthCLI.run(["users", "create", "--data", folder, "--uid", "ann", "--email", "ann@example.com",
                                          "--password-stdin", "--claims", #"{"role": "owner"}"#],
                                         input: "long enough password\n", environment: key)
            #expect(create.status == 0, "\(create.output)")
            #expect(create.output.contains(#""uid":"ann""#))
            let session = try await client.loggedIn("ann@example.com", "long enough password")

            let list = try await HearthCLI.run(["users", "list", "--data", folder], environment: key)
            #expect(list.status == 0 && list.output.contains("ann@example.com"), "\(list.output)")
            let claims = try await HearthCLI.run(["users", "set-claims", "--data", folder, "ann", #"{"admin": true}"#], environment: key)
            #expect(claims.status == 0, "\(claims.output)")
            #expect(try await client.get("/v1/admin/users/ann").json?["claims"]?["admin"] == .bool(true))

            let delete = try await HearthCLI.run(["users", "delete", "--data", folder, "ann"], environment: key)
            #expect(delete.status == 0, "\(delete.output)")
            #expect(try await client.get("/v1/auth/me", as: .token(session.token)).status == 401)
            let missing = try await HearthCLI.run(["users", "delete", "--data", folder, "ann"], environment: key)
            #expect(missing.status != 0 && missing.output.contains("No account"), "\(missing.output)")
        } catch {
            Issue.record(error)
        }
        await client.close()
        await server.stop()
    }

    /// `hearth users revoke` and `delete`, run while `hearth serve` holds the data folder, act through the
    /// server: requests with the revoked tokens fail, and the live listeners those sessions opened are told
    /// (`unauthenticated`) and closed by the revocation itself, as for one made over HTTP (the server looks for
    /// no other process's revocations), while other accounts' listeners carry on.
    @Test func commandLineRevocationsEndListenersOfARunningServer() async throws {
        try await Self.withNotesServer { folder, server, client in
            let key = ["HEARTH_ADMIN_KEY": server.adminKey]
            let ann = try await client.signedUp("ann@example.com", "long enough password")
            let annAgain = try await client.loggedIn("ann@example.com", "long enough password")
            let bob = try await client.signedUp("bob@example.com", "long enough password")
            let annListeners = [
                try await ListenClient.watching("notes/n1", port: server.port, token: ann.token),
                try await ListenClient.watching("notes/n1", port: server.port, token: annAgain.token),
            ]
            let bobListener = try await ListenClient.watching("notes/n1", port: server.port, token: bob.token)

            let revoke = try await HearthCLI.run(["users", "revoke", "--data", folder, ann.uid], environment: key)
            #expect(revoke.status == 0 && revoke.output.contains("revoked 2 sessions"), "\(revoke.output)")
            // Requests look the session up every time: the revocation applies to the very next one.
            #expect(try await client.get("/v1/auth/me", as: .token(ann.token)).status == 401)
            for listener in annListeners {
                let frame = try await listener.expect("error", timeout: .seconds(10))
                #expect(frame["code"] == .string("unauthenticated"))
                while !listener.isClosed { try await Task.sleep(for: .milliseconds(10)) }
                #expect(listener.closeCode == 1008)
            }
            #expect(!bobListener.isClosed)

            _ = try await client.put("/v1/docs/notes/n1", #"{"v": 1}"#)
            _ = try await bobListener.expectChange("added", of: "notes/n1")
            let delete = try await HearthCLI.run(["users", "delete", "--data", folder, bob.uid], environment: key)
            #expect(delete.status == 0, "\(delete.output)")
            #expect(try await client.get("/v1/auth/me", as: .token(bob.token)).status == 401)
            #expect(try await bobListener.expect("error", timeout: .seconds(10))["code"] == .string("unauthenticated"))
        }
    }

    /// Runs `body` against a real `hearth serve` on a fresh data folder whose rules let signed-in users read
    /// `notes`, then stops the server.
    static func withNotesServer(_ body: (_ folder: String, _ server: ServerProcess, _ client: HearthClient) async throws -> Void)
        async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let rules = try RulesHTTPTests.writeRules("""
            rules_version = '2';
            service cloud.firestore { match /databases/{d}/documents { match /notes/{id} { allow read: if request.auth != null; } } }
            """)
        let server = try await ServerProcess.start(dataDirectory: folder, arguments: ["--rules", rules])
        let client = server.client()
        do {
            try await body(folder, server, client)
        } catch {
            Issue.record(error)
        }
        await client.close()
        server.signal(SIGTERM)
        _ = try await server.waitForExit()
    }

    static func uids(_ result: HTTPResult) -> [String] {
        guard case .array(let users)? = result.json?["users"] else { return [] }
        return users.compactMap { $0["uid"]?.stringValue }
    }
}

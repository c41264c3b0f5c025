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

    /// `hearth users` works on the data folder, and a running server sees its changes at once.
    @Test func commandLineBesideARunningServer() async throws {
        let folder = TestServer.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await TestServer.start(dataDirectory: folder, configure: { $0.useTestAccounts() })
        let client = server.client()
        do {
            let create = try HearthCLI.run(["users", "create", "--data", folder, "--uid", "ann", "--email", "ann@example.com",
                                          "--password-stdin", "--claims", #"{"role": "owner"}"#],
                                         input: "long enough password\n")
            #expect(create.status == 0, "\(create.output)")
            #expect(create.output.contains(#""uid":"ann""#))
            let session = try await client.loggedIn("ann@example.com", "long enough password")

            let list = try HearthCLI.run(["users", "list", "--data", folder])
            #expect(list.status == 0 && list.output.contains("ann@example.com"), "\(list.output)")
            let claims = try HearthCLI.run(["users", "set-claims", "--data", folder, "ann", #"{"admin": true}"#])
            #expect(claims.status == 0, "\(claims.output)")
            #expect(try await client.get("/v1/admin/users/ann").json?["claims"]?["admin"] == .bool(true))

            let delete = try HearthCLI.run(["users", "delete", "--data", folder, "ann"])
            #expect(delete.status == 0, "\(delete.output)")
            #expect(try await client.get("/v1/auth/me", as: .token(session.token)).status == 401)
            let missing = try HearthCLI.run(["users", "delete", "--data", folder, "ann"])
            #expect(missing.status != 0 && missing.output.contains("No account"), "\(missing.output)")
        } catch {
            Issue.record(error)
        }
        await client.close()
        await server.stop()
    }

    static func uids(_ result: HTTPResult) -> [String] {
        guard case .array(let users)? = result.json?["users"] else { return [] }
        return users.compactMap { $0["uid"]?.stringValue }
    }
}

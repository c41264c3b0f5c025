import Foundation
import HearthCore
import HearthServer
import HearthTesting
import Testing
import Logging
import HearthAuth

/// Secrets stay secret: no password or token in the logs of a whole account session, none in clear in the
/// database file, and passwords stored as Argon2id PHC strings with the configured parameters.
@Suite struct AccountSecretsTests {
    /// Runs sign-up, login, refresh (and a reuse), a wrong password, a password change, a reset and its
    /// confirmation, verification and logout; answers every password and token that went over the wire.
    static func fullSession(_ server: TestServer, _ client: HearthClient) async throws -> [String] {
        var secrets = ["first password 1234", "second password 5678", "third password 9012", "wrong password 3456"]
        let s = try await client.signedUp("ann@example.com", secrets[0])
        let login = try await client.loggedIn("ann@example.com", secrets[0])
        let rotated = try #require(SignedIn(try await client.refresh(login.refreshToken)))
        _ = try await client.refresh(login.refreshToken)  // reuse: revokes that session
        _ = try await client.logIn("ann@example.com", secrets[3])
        _ = try await client.post("/v1/auth/password", HearthClient.body([
            ("currentPassword", secrets[0]), ("newPassword", secrets[1])]), as: .token(s.token))
        _ = try await client.post("/v1/auth/verify-email", as: .token(s.token))
        let verify = try await server.waitForOutboxToken(to: "ann@example.com", purpose: "email-verification")
        _ = try await client.post("/v1/auth/verify-email/confirm", HearthClient.body([("token", verify)]), as: .nobody)
        _ = try await client.post("/v1/auth/password-reset", HearthClient.body([("email", "ann@example.com")]))
        let reset = try await server.waitForOutboxToken(to: "ann@example.com", purpose: "password-reset")
        let confirmed = try await client.post("/v1/auth/password-reset/confirm",
                                              HearthClient.body([("token", reset), ("newPassword", secrets[2])]), as: .nobody)
        #expect(confirmed.status == 200, "\(confirmed.text)")
        let last = try await client.loggedIn("ann@example.com", secrets[2])
        _ = try await client.get("/v1/docs/col/doc", as: .token(last.token))
        _ = try await client.get("/v1/auth/me", as: .authorization("Bearer hat_" + String(repeating: "Z", count: 43)))
        _ = try await client.post("/v1/auth/logout", as: .token(last.token))
        secrets += [s.token, s.refreshToken, login.token, login.refreshToken, rotated.token, rotated.refreshToken,
                    verify, reset, last.token, last.refreshToken, server.adminKey]
        return secrets
    }

    @Test func logsHoldNoPasswordOrToken() async throws {
        let logs = LogCapture()
        try await TestServer.with(configure: {
            $0.useTestAccounts()
            $0.logHandlerFactory = logs.factory
            $0.logLevel = .trace
            $0.requestLogLevel = .info
        }) { server, client in
            let secrets = try await Self.fullSession(server, client)
            let text = logs.text
            #expect(text.contains("outbox message delivered"), "the capture sees the server's lines")
            #expect(text.contains("/v1/auth/login"), "the capture sees request lines")
            // Whole secrets, and for tokens even a recognisable part of one. (Failures name the kind only,
            // so a failing run does not print the secrets either.)
            let leaked = secrets.filter { secret in
                text.contains(secret) || (secret.count > 20 && text.contains(String(secret.dropFirst(4).prefix(16))))
            }
            #expect(leaked.isEmpty, "secrets in the logs: \(leaked.map { $0.prefix(4) + "…" })")
        }
    }

    @Test func databaseFileHoldsNoTokenInClear() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await TestServer.start(dataDirectory: folder, configure: { $0.useTestAccounts() })
        let client = server.client()
        var secrets: [String] = []
        do {
            secrets = try await Self.fullSession(server, client)
            // A message that went through the outbox table (sealed there) leaves no token behind either.
            _ = try await client.post("/v1/auth/password-reset", HearthClient.body([("email", "ann@example.com")]))
            secrets.append(try await server.waitForOutboxToken(to: "ann@example.com", purpose: "password-reset", after: 1))
        } catch {
            Issue.record(error)
        }
        var files = Data()
        for suffix in ["", "-wal"] {
            files += FileManager.default.contents(atPath: folder + "/hearth.sqlite" + suffix) ?? Data()
        }
        await client.close()
        await server.stop()
        for suffix in ["", "-wal"] {
            files += FileManager.default.contents(atPath: folder + "/hearth.sqlite" + suffix) ?? Data()
        }
        #expect(files.count > 8_192)
        #expect(files.range(of: Data("ann@example.com".utf8)) != nil, "the scan reads the accounts' pages")
        let leaked = secrets.filter { files.range(of: Data($0.utf8)) != nil }
        #expect(leaked.isEmpty, "secrets in the database file: \(leaked.map { $0.prefix(4) + "…" })")
        // The development mailbox holds the links, for its owner only.
        let mode = try FileManager.default.attributesOfItem(atPath: folder + "/outbox.ndjson")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func passwordsUseTheDefaultParametersAndAreRehashedWhenTheyChange() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Default parameters: OWASP's m=19 MiB, t=2, p=1.
        do {
            let server = try await TestServer.start(dataDirectory: folder)
            let client = server.client()
            _ = try await client.signedUp("ann@example.com", "long enough password")
            let hash = try await server.services.auth.storage.user(emailNormalized: "ann@example.com")?.passwordHash
            #expect(hash?.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$") == true, "\(hash?.prefix(32) ?? "")")
            await client.close()
            await server.stop()
        }
        // Restarted with other parameters: the next login stores a hash made with them.
        let server = try await TestServer.start(dataDirectory: folder, configure: { $0.useTestAccounts() })
        let client = server.client()
        _ = try await client.loggedIn("ann@example.com", "long enough password")
        let hash = try await server.services.auth.storage.user(emailNormalized: "ann@example.com")?.passwordHash
        #expect(hash?.hasPrefix("$argon2id$v=19$m=64,t=1,p=1$") == true, "\(hash?.prefix(32) ?? "")")
        #expect(try await client.logIn("ann@example.com", "long enough password").status == 200)
        #expect(try await client.logIn("ann@example.com", "wrong password").status == 401)
        await client.close()
        await server.stop()
    }
}

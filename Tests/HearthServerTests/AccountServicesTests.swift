import HearthCore
import HearthServer
import HearthTesting
import Testing
import HearthAuth

/// The accounts' background work and client-address handling: the session sweeper, and throttling by
/// connection address or, when configured, by `X-Forwarded-For`.
@Suite struct AccountServicesTests {
    static let password = "correct horse battery"

    @Test func theSweeperDeletesEndedSessions() async throws {
        let clock = ManualClock()
        try await TestServer.with(configure: {
            $0.useTestAccounts(clock: clock)
            $0.sweepInterval = .milliseconds(20)
        }) { server, client in
            let a = try await client.signedUp("ann@example.com", Self.password)
            let b = try await client.loggedIn("ann@example.com", Self.password)
            #expect(try await server.services.auth.storage.sessions(uid: a.uid).count == 2)
            #expect(try await client.post("/v1/auth/logout", as: .token(a.token)).status == 204)
            clock.advance(seconds: 1)
            var remaining = 2
            for _ in 0..<500 where remaining != 1 {
                try await Task.sleep(for: .milliseconds(10))
                remaining = try await server.services.auth.storage.sessions(uid: a.uid).count
            }
            #expect(remaining == 1, "the revoked session is swept, the live one kept")
            #expect(try await client.get("/v1/auth/me", as: .token(b.token)).status == 200)
        }
    }

    /// Failed logins from one address are limited across accounts; `X-Forwarded-For` is ignored unless
    /// the server is told to trust it.
    @Test func clientAddressThrottling() async throws {
        func failures(_ client: HearthClient, count: Int, forwardedFor: String?) async throws -> HTTPResult {
            var last: HTTPResult?
            for i in 0..<count {
                let headers = forwardedFor.map { ["X-Forwarded-For": "203.0.113.9, \($0)"] } ?? [:]
                last = try await client.post("/v1/auth/login", HearthClient.body([
                    ("email", "guess\(i)-\(forwardedFor ?? "")@example.com"), ("password", "wrong password")]),
                    headers: headers, as: .nobody)
            }
            return last!
        }
        try await TestServer.with(configure: { $0.useTestAccounts(clock: ManualClock()) }) { _, client in
            #expect(try await failures(client, count: 21, forwardedFor: "198.51.100.1").status == 401)
            // A forged header does not buy a fresh budget: the connection's address is what counts.
            let blocked = try await failures(client, count: 1, forwardedFor: "198.51.100.2")
            #expect(blocked.status == 429 && blocked.header("Retry-After") != nil, "\(blocked.text)")
        }
        try await TestServer.with(configure: {
            $0.useTestAccounts(clock: ManualClock())
            $0.trustForwardedFor = true
        }) { _, client in
            let spent = try await failures(client, count: 21, forwardedFor: "198.51.100.1")
            let blocked = try await failures(client, count: 1, forwardedFor: "198.51.100.1")
            // Behind a trusted proxy, another client (the proxy's last entry) has its own budget.
            let other = try await failures(client, count: 1, forwardedFor: "198.51.100.2")
            #expect(spent.status == 401 && blocked.status == 429 && other.status == 401)
        }
    }
}

import HearthTesting
import Testing
import HearthServer

/// `/metrics` is open unless a metrics key is configured; then it takes that key or the admin key, and
/// nothing else (a user's token included).
@Suite struct MetricsAccessTests {
    @Test func aMetricsKeyGuardsTheMetrics() async throws {
        let key = "metrics-" + String(repeating: "k", count: 40)
        try await TestServer.with(configure: { $0.metricsKey = key; $0.useTestAccounts() }) { server, client in
            let user = try await client.signedUp("m@example.com", "a-long-password-1")
            let rows: [(Caller, Int)] = [
                (.nobody, 401), (.token("wrong-" + key), 401), (.token(user.token), 401), (.authorization("Basic \(key)"), 401),
                (.token(key), 200), (.admin, 200),
            ]
            for (caller, status) in rows {
                let r = try await client.get("/metrics", as: caller)
                #expect(r.status == status, "\(caller): \(r.status) \(r.text.prefix(200))")
                if status == 401 { #expect(r.errorCode == "unauthenticated") } else { #expect(r.text.contains("hearth_")) }
            }
        }
        let open = try await TestServer.with { _, client in try await client.get("/metrics", as: .nobody).status }
        #expect(open == 200)
    }
}

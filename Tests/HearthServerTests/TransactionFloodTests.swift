import HearthCore
import HearthEngine
import HearthTesting
import Testing
import HearthServer

/// Anyone may begin a transaction, so nobody may take them all: a flood of begins from one address without
/// credentials fills that address's share and no more, and every other caller still begins.
@Suite struct TransactionFloodTests {
    static func begin(from address: String) -> String {
        "POST /v1/transactions HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: \(address)\r\nContent-Type: application/json\r\n"
            + "Content-Length: 2\r\n\r\n{}"
    }

    @Test func aFloodOfBeginsTakesOneShareOnly() async throws {
        let flood = 2_000
        try await Harness.with(rules: "rules/letter.rules", fixtures: "fixtures/letter.json", configure: { $0.trustForwardedFor = true }) { hearth in
            let connection = try RawHTTPConnection(port: hearth.port, timeout: 60)
            try await connection.send(String(repeating: Self.begin(from: "203.0.113.7"), count: flood))
            var statuses: [Int: Int] = [:]
            for _ in 0..<flood {
                let answer = try await connection.readResponse()
                statuses[answer.status, default: 0] += 1
                if answer.status == 429 { #expect(answer.errorCode == "resource-exhausted") }
            }
            let share = TransactionRegistry.Configuration().maxOpenPerCaller
            #expect(statuses == [201: share, 429: flood - share], "\(statuses)")

            // Others are served: a caller without a token from another address, and a signed-in user.
            let other = try RawHTTPConnection(port: hearth.port)
            try await other.send(Self.begin(from: "198.51.100.1"))
            #expect(try await other.readResponse().status == 201)
            let (bob, _) = try await hearth.signIn("bob")
            #expect(try await bob.post("/v1/transactions", "{}", headers: ["X-Forwarded-For": "203.0.113.7"]).status == 201)
            await bob.close()
        }
    }
}

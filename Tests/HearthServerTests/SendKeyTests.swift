import Foundation
import HearthCore
import HearthServer
import HearthTesting
import Testing

/// `Idempotency-Key` on app email and push: the same key and request again queues nothing and answers the
/// first ids, also after a restart; the same key with another request is `422`; a malformed key `400`.
@Suite(.serialized) struct SendKeyTests {
    static func email(_ to: String, key: String?) -> (String, [String: String]) {
        (JSON.object([("to", .array([.string(to)])), ("subject", .string("Your invitation")), ("text", .string("Hi!"))]).text,
         key.map { ["Idempotency-Key": $0] } ?? [:])
    }

    static func queued(_ answer: HTTPResult) -> [String] {
        guard case .array(let ids)? = answer.json?["queued"] else { return [] }
        return ids.compactMap(\.stringValue)
    }

    @Test func anEmailSentTwiceUnderOneKeyIsQueuedOnceAlsoAfterARestart() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (body, headers) = Self.email("ann@example.com", key: "invite-42")
        let server = try await TestServer.start(dataDirectory: folder, keepData: true, configure: { $0.useTestAccounts() })
        let client = server.client()
        let first = try await client.post("/v1/messages/email", body, headers: headers)
        #expect(first.status == 202 && Self.queued(first).count == 1, "\(first.text)")
        let again = try await client.post("/v1/messages/email", body, headers: headers)
        #expect(again.status == 202 && Self.queued(again) == Self.queued(first), "\(again.text)")
        // Another key (or none) is another send.
        let unkeyed = try await client.post("/v1/messages/email", body)
        #expect(unkeyed.status == 202 && Self.queued(unkeyed) != Self.queued(first))
        _ = try await MailDeliveryTests.waitForOutbox(client) { MailDeliveryTests.count($0, "pending") == 0 }
        #expect(server.outboxMessages().count == 2, "one message for the keyed sends, one for the other")
        await client.close()
        await server.stop()

        let restarted = try await TestServer.start(dataDirectory: folder, keepData: true, configure: { $0.useTestAccounts() })
        let after = restarted.client()
        let afterRestart = try await after.post("/v1/messages/email", body, headers: headers)
        #expect(afterRestart.status == 202 && Self.queued(afterRestart) == Self.queued(first), "\(afterRestart.text)")
        _ = try await MailDeliveryTests.waitForOutbox(after) { MailDeliveryTests.count($0, "pending") == 0 }
        #expect(restarted.outboxMessages().count == 2)
        await after.close()
        await restarted.stop()
    }

    static let refused: [(key: String, body: String, status: Int, message: String)] = [
        ("invite-42", email("bob@example.com", key: nil).0, 422, "Idempotency-Key 'invite-42' was used with a different request"),
        ("", email("ann@example.com", key: nil).0, 400, "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces"),
        ("two words", email("ann@example.com", key: nil).0, 400, "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces"),
        (String(repeating: "k", count: 256), email("ann@example.com", key: nil).0, 400,
         "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces"),
    ]

    @Test func aKeyReusedForAnotherRequestOrMalformedIsRefusedAndQueuesNothing() async throws {
        try await TestServer.with(configure: { $0.useTestAccounts() }) { server, client in
            let (body, headers) = Self.email("ann@example.com", key: "invite-42")
            #expect(try await client.post("/v1/messages/email", body, headers: headers).status == 202)
            for row in Self.refused {
                let answer = try await client.post("/v1/messages/email", row.body, headers: ["Idempotency-Key": row.key])
                #expect(answer.status == row.status && answer.errorMessage == row.message, "\(row.key.prefix(20)): \(answer.text)")
            }
            _ = try await MailDeliveryTests.waitForOutbox(client) { MailDeliveryTests.count($0, "pending") == 0 }
            #expect(server.outboxMessages().count == 1, "only the first send queued a message")
        }
    }

    @Test func aPushSentTwiceUnderOneKeyReachesTheDeviceOnce() async throws {
        try await PushDeliveryTests.withRig { rig in
            try await TestServer.with(configure: rig.configure(try rig.settings())) { _, client in
                let user = try await client.signedUp("ann@example.com", PushDeliveryTests.password)
                let token = PushTestRig.apnsToken()
                _ = try await PushDeliveryTests.register(client, user, token: token, platform: "apns")
                let body = #"{"to": {"uid": "\#(user.uid)"}, "notification": {"title": "Time to post"}}"#
                let headers = ["Idempotency-Key": "run-1:\(user.uid)"]
                let first = try await client.post("/v1/push/send", body, headers: headers)
                #expect(first.status == 202 && Self.queued(first).count == 1, "\(first.text)")
                try await PushDeliveryTests.eventually("the first push delivered") { rig.apns.received.count == 1 }
                let again = try await client.post("/v1/push/send", body, headers: headers)
                #expect(again.status == 202 && Self.queued(again) == Self.queued(first), "\(again.text)")
                let other = try await client.post("/v1/push/send", #"{"to": {"uid": "\#(user.uid)"}, "data": {"a": "b"}}"#,
                                                  headers: headers)
                #expect(other.status == 422 && other.errorMessage == "Idempotency-Key 'run-1:\(user.uid)' was used with a different request")
                try await PushDeliveryTests.eventually("the queue empty") {
                    try await client.get("/v1/admin/push").json?["pending"] == .array([])
                }
                #expect(rig.apns.received.count == 1 && rig.apns.received.allSatisfy { $0.token == token })
            }
        }
    }
}

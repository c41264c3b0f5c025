import Foundation
import HearthCore
import HearthFunctions
import HearthTesting
import Testing

/// The verifier against the `standardwebhooks` library (PyPI): what the library signs is accepted, and any
/// change to the id, timestamp, body, signature or secret is refused, as is a timestamp 5 minutes off.
@Suite struct WebhookVerifierTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYqr"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let body = #"{"id": "evt_1", "type": "document.written", "name": "roundWritten", "params": {"t": "é✓"}}"#

    @Test func signaturesMadeByTheLibraryAreAcceptedAndChangesRefused() async throws {
        let t = Int64(Self.now.timeIntervalSince1970)
        let messages: [StandardWebhooksPeer.Message] = [
            .init(id: "msg_1", timestamp: t, body: Self.body),
            .init(id: "msg_2", timestamp: t - 299, body: ""),
            .init(id: "msg_3", timestamp: t + 299, body: "{}"),
        ]
        let signatures = try await StandardWebhooksPeer.sign(secret: Self.secret, messages)
        let verifier = try WebhookVerifier(secret: Self.secret)
        for (message, signature) in zip(messages, signatures) {
            #expect(throws: Never.self) {
                try verifier.verify(id: message.id, timestamp: "\(message.timestamp)", signature: signature,
                                    body: Array(message.body.utf8), now: Self.now)
            }
            // The library and the verifier's own signer agree, byte for byte.
            #expect(verifier.sign(id: message.id, timestamp: message.timestamp, body: Array(message.body.utf8)) == signature)
        }

        let good = signatures[0]
        let mac = try #require(Base64.decode(String(good.dropFirst(3))))
        var flipped = mac
        flipped[0] ^= 1
        let other = try WebhookVerifier(secret: "whsec_" + Base64.encode([UInt8](repeating: 7, count: 32)))
        // (what is changed, id, timestamp, signature, body, the verifier, the message expected)
        let cases: [(String, String?, String?, String?, String, WebhookVerifier, String)] = [
            ("the body", "msg_1", "\(t)", good, Self.body + " ", verifier, "no webhook-signature matches"),
            ("the id", "msg_2", "\(t)", good, Self.body, verifier, "no webhook-signature matches"),
            ("the timestamp", "msg_1", "\(t + 1)", good, Self.body, verifier, "no webhook-signature matches"),
            ("a bit of the signature", "msg_1", "\(t)", "v1," + Base64.encode(flipped), Self.body, verifier, "no webhook-signature matches"),
            ("a shorter signature", "msg_1", "\(t)", "v1," + Base64.encode(Array(mac.prefix(16))), Self.body, verifier, "no webhook-signature matches"),
            ("the version", "msg_1", "\(t)", "v2," + good.dropFirst(3), Self.body, verifier, "no webhook-signature matches"),
            ("the secret", "msg_1", "\(t)", good, Self.body, other, "no webhook-signature matches"),
            ("no id", nil, "\(t)", good, Self.body, verifier, "missing webhook-id"),
            ("no timestamp", "msg_1", nil, good, Self.body, verifier, "missing webhook-timestamp"),
            ("no signature", "msg_1", "\(t)", nil, Self.body, verifier, "missing webhook-signature"),
            ("a timestamp not in seconds", "msg_1", "\(t).5", good, Self.body, verifier, "is not whole seconds"),
        ]
        for (change, id, timestamp, signature, body, verifier, expected) in cases {
            let error = #expect(throws: FunctionsError.self, "changed \(change)") {
                try verifier.verify(id: id, timestamp: timestamp, signature: signature, body: Array(body.utf8), now: Self.now)
            }
            #expect(error?.message.contains(expected) == true, "changed \(change): \(error?.message ?? "")")
        }
    }

    @Test func aStaleOrFutureTimestampIsRefusedEvenWhenSignedByTheLibrary() async throws {
        let t = Int64(Self.now.timeIntervalSince1970)
        let messages: [StandardWebhooksPeer.Message] = [.init(id: "old", timestamp: t - 301, body: Self.body),
                                                        .init(id: "new", timestamp: t + 301, body: Self.body)]
        let signatures = try await StandardWebhooksPeer.sign(secret: Self.secret, messages)
        let verifier = try WebhookVerifier(secret: Self.secret)
        for ((message, signature), expected) in zip(zip(messages, signatures), ["too old", "too new"]) {
            let error = #expect(throws: FunctionsError.self) {
                try verifier.verify(id: message.id, timestamp: "\(message.timestamp)", signature: signature,
                                    body: Array(message.body.utf8), now: Self.now)
            }
            #expect(error?.message.contains(expected) == true)
        }
    }

    @Test func oneMatchingSignatureAmongSeveralIsEnough() async throws {
        let t = Int64(Self.now.timeIntervalSince1970)
        let oldSecret = "whsec_" + Base64.encode([UInt8](repeating: 1, count: 32))
        let signatures = try await StandardWebhooksPeer.sign(secret: oldSecret, [.init(id: "m", timestamp: t, body: "{}")])
            + StandardWebhooksPeer.sign(secret: Self.secret, [.init(id: "m", timestamp: t, body: "{}")])
        // While a secret is rotated, a sender signs with both; unknown versions are skipped.
        let header = "v1a,c29tZXRoaW5n " + signatures.joined(separator: " ")
        let verifier = try WebhookVerifier(secret: Self.secret)
        #expect(throws: Never.self) {
            try verifier.verify(id: "m", timestamp: "\(t)", signature: header, body: Array("{}".utf8), now: Self.now)
        }
    }

    @Test func aSecretIsReadAsTheReferenceLibrariesReadIt() throws {
        // With or without the prefix, with or without padding: the same key.
        let bytes = [UInt8](repeating: 9, count: 25)
        let padded = Base64.encode(bytes)
        let unpadded = String(padded.drop { _ in false }.prefix { $0 != "=" })
        let signatures = try ["whsec_" + padded, padded, "whsec_" + unpadded].map {
            try WebhookVerifier(secret: $0).sign(id: "m", timestamp: 1, body: Array("x".utf8))
        }
        #expect(Set(signatures).count == 1)
        for bad in ["whsec_", "whsec_!!!", ""] {
            #expect(throws: FunctionsError.self, "\(bad)") { try WebhookVerifier(secret: bad) }
        }
    }
}

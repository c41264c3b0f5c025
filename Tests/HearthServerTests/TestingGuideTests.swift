// The complete example of docs/testing.md, compiled and run with the suite: keep the two identical.
import HearthCore
import HearthTesting
import Testing

@Suite(.serialized) struct LetterPrivacyTests {
    static let letter = "/v1/docs/letters/0W6GIBR4tYqrU1DnouZf"
    static let reply = "/v1/docs/letters/0W6GIBR4tYqrU1DnouZf/replies/DyeunM0OdCO35XYMnkoF"
    static let alicesIndex = "/v1/docs/users/alice/letters/DLVSoeqMDgYAjp2wSPfg"

    @Test func readersNeverLearnWhoWroteALetter() async throws {
        try await Harness.with(rules: "rules/letter.rules", fixtures: "fixtures/letter.json") { hearth in
            // The admin key bypasses the rules; a caller with no credentials is denied.
            let admin = hearth.client(as: .admin)
            let nobody = hearth.client(as: .nobody)
            try hearth.expectAllowed(try await admin.get(Self.letter))
            try hearth.expectDenied(try await nobody.get(Self.letter))

            // Fixture users sign in with their email and password, as the app would.
            let (bob, _) = try await hearth.signIn("bob")
            let (alice, _) = try await hearth.signIn("alice")
            let read = try hearth.expectAllowed(try await bob.get(Self.letter), "bob reads a letter")
            #expect(read.json?["data"]?["author"] == nil)  // no trace of who wrote it
            try hearth.expectDenied(try await bob.get(Self.alicesIndex), "bob reads alice's private index")
            try hearth.expectAllowed(try await alice.get(Self.alicesIndex), "alice reads her own index")
            for client in [admin, nobody, bob, alice] { await client.close() }
        }
    }

    @Test func aReaderMayOnlyFlagAReply() async throws {
        try await Harness.with(rules: "rules/letter.rules", fixtures: "fixtures/letter.json") { hearth in
            let (bob, _) = try await hearth.signIn("bob")
            // A user with custom claims, made through the admin endpoint and signed in.
            let (moderator, _) = try await hearth.user("mod2", claims: ["moderator": .bool(true)])

            try hearth.expectDenied(try await bob.patch(Self.reply, #"{"content": "spam"}"#), "bob rewrites a reply")
            try hearth.expectDenied(try await moderator.delete(Self.reply), "deleting an unreported reply")
            try hearth.expectAllowed(try await bob.patch(Self.reply, #"{"report": true}"#), "bob flags a reply")
            try hearth.expectAllowed(try await moderator.delete(Self.reply), "deleting a reported reply")

            // Between tests (or cases), put documents and accounts back as the fixture file has them.
            try await hearth.reset()
            let admin = hearth.client()
            let restored = try hearth.expectAllowed(try await admin.get(Self.reply))
            #expect(restored.json?["data"]?["report"] == .bool(false))
            for client in [bob, moderator, admin] { await client.close() }
        }
    }

    @Test func theEngineAndTheRulesTestFile() async throws {
        try await Harness.with(rules: "rules/letter.rules", fixtures: "fixtures/letter.json") { hearth in
            // Without HTTP (in-process backend): any identity, claims included, straight to the engine.
            let carol = Identity.testUser("carol", claims: ["moderator": .bool(false)])
            try await hearth.expectDenied(as: carol, "carol reads alice's private index") { db, me in
                _ = try await db.get(DocumentPath("users/alice/letters/DLVSoeqMDgYAjp2wSPfg"), as: me)
            }
        }
        // The runner of `hearth rules test`, from Swift.
        let cases = try await Harness.runRulesTests([Harness.projectFile("rules/letter.test.json")])
        #expect(cases >= 25)
    }
}

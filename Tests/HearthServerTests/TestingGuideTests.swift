// The complete example of docs/testing.md, compiled and run with the suite: keep the two identical.
import HearthCore
import HearthTesting
import Testing

@Suite(.serialized) struct LetterPrivacyTests {
    static let letter = "letters/0W6GIBR4tYqrU1DnouZf"
    static let reply = "letters/0W6GIBR4tYqrU1DnouZf/replies/DyeunM0OdCO35XYMnkoF"
    static let alicesIndex = "users/alice/letters/DLVSoeqMDgYAjp2wSPfg"

    @Test func readersNeverLearnWhoWroteALetter() async throws {
        try await Harness.with(rules: "rules/letter.rules", fixtures: "fixtures/letter.json") { hearth in
            // Over HTTP: the admin key bypasses the rules; a caller with no credentials is denied.
            let admin = hearth.client(as: .admin)
            let nobody = hearth.client(as: .nobody)
            try hearth.expectAllowed(try await admin.get("/v1/docs/\(Self.letter)"))
            try hearth.expectDenied(try await nobody.get("/v1/docs/\(Self.letter)"))

            // As signed-in users with claims, through the engine the server runs.
            let bob = Identity.testUser("bob")
            let alice = Identity.testUser("alice")
            try await hearth.expectAllowed(as: bob, "bob reads a letter") { db, me in
                let doc = try await db.get(DocumentPath(Self.letter), as: me)
                #expect(try doc?.decoded().fields["author"] == nil)  // no trace of the author
            }
            try await hearth.expectDenied(as: bob, "bob reads alice's private index") { db, me in
                _ = try await db.get(DocumentPath(Self.alicesIndex), as: me)
            }
            try await hearth.expectAllowed(as: alice, "alice reads her own index") { db, me in
                _ = try await db.get(DocumentPath(Self.alicesIndex), as: me)
            }
            await admin.close()
            await nobody.close()
        }
    }

    @Test func aReaderMayOnlyFlagAReply() async throws {
        try await Harness.with(rules: "rules/letter.rules", fixtures: "fixtures/letter.json") { hearth in
            let bob = Identity.testUser("bob")
            let moderator = Identity.testUser("mod", claims: ["moderator": .bool(true)])
            func update(_ data: String) -> CommitRequest {
                CommitRequest(writes: [try! Write(kind: "update", path: DocumentPath(Self.reply), data: JSON.parse(data))])
            }
            try await hearth.expectDenied(as: bob, "bob rewrites a reply") { db, me in
                _ = try await db.commit(update(#"{"content": "spam"}"#), as: me)
            }
            try await hearth.expectDenied(as: moderator, "a moderator deletes an unreported reply") { db, me in
                _ = try await db.commit(CommitRequest(writes: [Write(kind: .delete, path: DocumentPath(Self.reply))]), as: me)
            }
            try await hearth.expectAllowed(as: bob, "bob flags a reply") { db, me in
                _ = try await db.commit(update(#"{"report": true}"#), as: me)
            }
            try await hearth.expectAllowed(as: moderator, "a moderator deletes a reported reply") { db, me in
                _ = try await db.commit(CommitRequest(writes: [Write(kind: .delete, path: DocumentPath(Self.reply))]), as: me)
            }

            // Between tests (or cases), put the dataset back as the fixture file has it.
            try await hearth.reset()
            let admin = hearth.client()
            let restored = try hearth.expectAllowed(try await admin.get("/v1/docs/\(Self.reply)"))
            #expect(restored.json?["data"]?["report"] == .bool(false))
            await admin.close()
        }
    }

    @Test func theRulesTestFilePasses() async throws {
        // The runner of `hearth rules test`, from Swift.
        let cases = try await Harness.runRulesTests([Harness.projectFile("rules/letter.test.json")])
        #expect(cases >= 25)
    }
}

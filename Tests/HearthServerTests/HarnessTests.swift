import Foundation
import HearthCore
import HearthTesting
import Testing

/// The harness itself: its expectations fail when they should, and the process backend runs a real
/// `hearth serve --rules --fixtures` that `reset()` restarts over the dataset.
@Suite(.serialized) struct HarnessTests {
    static let project = "projects/00s7VySftXJRPdnbVgCx"

    @Test func expectationsFailWhenTheOutcomeDiffers() async throws {
        try await Harness.with(rules: "rules/prolific.rules", fixtures: "fixtures/prolific.json") { hearth in
            let admin = hearth.client()
            let nobody = hearth.client(as: .nobody)
            let allowed = try await admin.get("/v1/docs/\(Self.project)")
            let denied = try await nobody.get("/v1/docs/\(Self.project)")
            #expect(throws: ExpectationFailure.self) { try hearth.expectDenied(allowed) }
            #expect(throws: ExpectationFailure.self) { try hearth.expectAllowed(denied) }
            let missing = try await admin.get("/v1/docs/projects/none")
            #expect(throws: ExpectationFailure.self) { try hearth.expectDenied(missing) }
            await #expect(throws: ExpectationFailure.self) {
                try await hearth.expectDenied(as: .testUser("nobody-in-particular")) { _, _ in }
            }
            await #expect(throws: ExpectationFailure.self) {
                try await hearth.expectAllowed(as: .unauthenticated) { db, me in
                    _ = try await db.get(DocumentPath(Self.project), as: me)
                }
            }
            await admin.close()
            await nobody.close()
        }
        await #expect(throws: ExpectationFailure.self) {
            try await Harness.start(rules: "rules/no-such-app.rules")
        }
        await #expect(throws: ExpectationFailure.self) {
            try await Harness.start(indexes: "indexes/no-such-app.json")
        }
    }

    @Test func theTestingGuideShowsTheExampleThatRuns() throws {
        let guide = try String(contentsOfFile: Harness.projectFile("docs/testing.md"), encoding: .utf8)
        let example = try String(contentsOfFile: Harness.projectFile("Tests/HearthServerTests/TestingGuideTests.swift"), encoding: .utf8)
        #expect(guide.contains("```swift\n" + example + "```"), "docs/testing.md and TestingGuideTests.swift differ")
    }

    @Test func theProcessBackendServesTheDatasetAndResets() async throws {
        try await Harness.with(rules: "rules/prolific.rules", fixtures: "fixtures/prolific.json", indexes: "indexes/prolific.json",
                               backend: .process) { hearth in
            #expect(hearth.database == nil)
            var admin = hearth.client()
            try hearth.expectAllowed(try await admin.get("/v1/docs/\(Self.project)"))
            // The index file reached the child: the story it exempts cannot be queried.
            let story = try await admin.query(#"{"from": "projects", "where": [["story", "==", ""]]}"#)
            #expect(story.status == 412 && story.errorCode == "failed-precondition", "\(story.text)")
            try hearth.expectDenied(try await hearth.client(as: .nobody).get("/v1/docs/\(Self.project)"))
            try hearth.expectAllowed(try await admin.delete("/v1/docs/\(Self.project)"))
            #expect(try await admin.get("/v1/docs/\(Self.project)").status == 404)
            await admin.close()

            try await hearth.reset()
            admin = hearth.client()
            try hearth.expectAllowed(try await admin.get("/v1/docs/\(Self.project)"))
            await admin.close()
            await #expect(throws: ExpectationFailure.self) {
                try await hearth.expectAllowed(as: .testUser("alice")) { _, _ in }
            }
        }
    }
}

/// Accounts in the harness: `reset()` makes them anew.
@Suite(.serialized) struct HarnessUserTests {
    @Test func resetRemakesTheAccounts() async throws {
        try await Harness.with(rules: "rules/letter.rules", fixtures: "fixtures/letter.json") { hearth in
            let (bob, _) = try await hearth.signIn("bob")
            let (extra, session) = try await hearth.user("extra", claims: ["moderator": .bool(true)])
            #expect(session.uid == "extra")
            try hearth.expectAllowed(try await extra.get("/v1/docs/categories/love"))
            try hearth.expectAllowed(try await bob.get("/v1/docs/categories/love"))
            await #expect(throws: ExpectationFailure.self) { try await hearth.signIn("nosuchuser") }

            try await hearth.reset()
            let admin = hearth.client()
            #expect(try await admin.get("/v1/admin/users/extra").status == 404)
            // Old sessions are gone with their accounts; the fixture's users sign in again.
            #expect(try await bob.get("/v1/docs/categories/love").status == 401)
            let (bobAgain, _) = try await hearth.signIn("bob")
            try hearth.expectAllowed(try await bobAgain.get("/v1/docs/categories/love"))
            for client in [bob, extra, admin, bobAgain] { await client.close() }
        }
    }
}

import HearthCore
import HearthTesting
import Testing

/// A string interpolated into a rules path is one segment. Letter checks a letter's category with
/// `exists(/databases/$(database)/documents/categories/$(d.category))`; when an interpolated string was split
/// on its slashes (empty pieces dropped), `love/`, `/love` and `love//` passed for `love`, and those letters
/// never appeared under their category.
@Suite struct RulesPathInterpolationTests {
    static let now = #"{"$serverTimestamp": true}"#

    /// Bob composes a letter with its private index entry in one commit, as the app does.
    static func compose(_ bob: HearthClient, category: String) async throws -> HTTPResult {
        let id = makeAutoID()
        let quoted = JSON.string(category).text
        return try await bob.post("/v1/commit", """
            {"writes": [
              {"create": "letters/\(id)", "data": {"category": \(quoted), "title": "Hello", "content": "Hi", "createdAt": \(now)}},
              {"create": "users/bob/letters/\(id)", "data": {"title": "Hello", "category": \(quoted), "createdAt": \(now)}}]}
            """)
    }

    @Test func aCategoryWithSlashesIsNoCategory() async throws {
        try await Harness.with(rules: "rules/letter.rules", fixtures: "fixtures/letter.json") { hearth in
            let (bob, _) = try await hearth.signIn("bob")
            try hearth.expectAllowed(try await Self.compose(bob, category: "love"), "category love")
            for category in ["love/", "/love", "love//", "//love", "categories/love", "love/x", ""] {
                try hearth.expectDenied(try await Self.compose(bob, category: category), "category '\(category)'")
            }
            let query = try await hearth.client().query(#"{"from": "letters", "where": [["category", ">=", "lov"], ["category", "<", "lp"]]}"#)
            guard case .array(let letters)? = query.json?["documents"] else { throw ExpectationFailure("query failed: \(query.text)") }
            #expect(letters.allSatisfy { $0["data"]?["category"]?.stringValue == "love" })
            await bob.close()
        }
    }
}

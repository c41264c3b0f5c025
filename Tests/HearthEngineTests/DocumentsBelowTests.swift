import HearthCore
import HearthEngine
import HearthTesting
import Testing

/// `documentsBelow`, the read of Firestore's kindless queries: every document under a path at any depth, in
/// path order, paged, and only for the admin key.
@Suite struct DocumentsBelowTests {
    static let documents = [
        "a/1": "{}", "a/1/sub/x": "{}", "a/2": "{}", "a/missing/deep/y": "{}",
        "a-b/1": "{}", "a0/1": "{}", "b/1": "{}",
    ]

    struct Case: CustomTestStringConvertible, Sendable {
        let prefix: [String]
        let after: String?
        let limit: Int
        let paths: [String]
        var testDescription: String { "\(prefix) after \(after ?? "-") limit \(limit)" }
    }

    static let cases: [Case] = [
        // Siblings whose ids start alike ("a-b", "a0") are not below "a".
        Case(prefix: ["a"], after: nil, limit: 100, paths: ["a/1", "a/1/sub/x", "a/2", "a/missing/deep/y"]),
        Case(prefix: ["a"], after: "a/1/sub/x", limit: 100, paths: ["a/2", "a/missing/deep/y"]),
        Case(prefix: ["a"], after: nil, limit: 2, paths: ["a/1", "a/1/sub/x"]),
        Case(prefix: ["a", "1"], after: nil, limit: 100, paths: ["a/1/sub/x"]),
        Case(prefix: [], after: "a0/1", limit: 100, paths: ["b/1"]),
        Case(prefix: ["c"], after: nil, limit: 100, paths: []),
    ]

    @Test(arguments: cases)
    func readsWhatIsBelowThePrefix(_ c: Case) async throws {
        try await TestDatabase.with(documents: Self.documents) { db in
            let after = try c.after.map { try DocumentPath($0) }
            #expect(try await db.documentsBelow(c.prefix, after: after, limit: c.limit, as: .admin) == c.paths)
        }
    }

    @Test func takesTheAdminKey() async throws {
        try await TestDatabase.with(rules: "rules_version = '2'; service cloud.firestore { match /databases/{d}/documents { match /{doc=**} { allow read; } } }",
                                    documents: Self.documents) { db in
            for identity in [Identity.unauthenticated, .testUser("ada")] {
                await #expect(throws: HearthError.self) { _ = try await db.documentsBelow(["a"], limit: 10, as: identity) }
            }
        }
    }
}

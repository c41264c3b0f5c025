import HearthCore
import HearthEngine
import HearthTesting
import Testing
import HearthStore

/// A query's `==` matches `5` and `5.0` alike, while the rules tell them apart (`is int`): a `list` is
/// decided for every form a pinned number may take in a document, so a query never returns a document its
/// `get` would deny.
@Suite struct RulesNumberPinTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /typed/{id} { allow read: if resource.data.level is int && resource.data.level == 5; }
            match /loose/{id} { allow read: if resource.data.level == 5; }
            match /nested/{id} { allow read: if resource.data.m.n is int; }
          }
        }
        """
    static let documents = [
        "typed/a": #"{"level": 5}"#, "typed/b": #"{"level": 5.0}"#, "loose/a": #"{"level": 5}"#, "loose/b": #"{"level": 5.0}"#,
        "nested/a": #"{"m": {"n": 5}}"#, "nested/b": #"{"m": {"n": 5.0}}"#,
    ]

    /// (query, whether the rules allow it).
    static let rows: [(String, Bool)] = [
        (#"{"from": "typed", "where": [["level", "==", 5]]}"#, false),
        (#"{"from": "typed", "where": [["level", "==", 5.0]]}"#, false),
        (#"{"from": "typed", "where": [["level", "in", [5]]]}"#, false),
        (#"{"from": "typed", "where": {"or": [{"field": "level", "op": "==", "value": 5}, {"field": "level", "op": "==", "value": 6}]}}"#, false),
        (#"{"from": "loose", "where": [["level", "==", 5]]}"#, true),
        (#"{"from": "loose", "where": [["level", "in", [5.0]]]}"#, true),
        (#"{"from": "nested", "where": [["m", "==", {"n": 5}]]}"#, false),
        (#"{"from": "nested", "where": [["m.n", "==", 5]]}"#, false),
    ]

    @Test(arguments: rows.indices)
    func aPinnedNumberIsDecidedInEachForm(_ row: Int) async throws {
        let (text, allowed) = Self.rows[row]
        try await TestDatabase.with(rules: Self.rules, documents: Self.documents) { db in
            let query = try Query(json: JSON.parse(text))
            let user = Identity.user(uid: "u", token: [:])
            do {
                let result = try await db.runQuery(query, as: user)
                #expect(allowed, "\(text) was allowed: \(result.documents.map(\.path))")
                // Whatever it returns, each document's own get allows.
                for doc in result.documents { _ = try await db.get(doc.path, as: user) }
            } catch let error as HearthError where error.code == .permissionDenied {
                #expect(!allowed, "\(text) was denied: \(error.message)")
            }
        }
    }
}

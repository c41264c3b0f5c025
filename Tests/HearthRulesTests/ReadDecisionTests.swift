import HearthCore
@testable import HearthRules
import HearthTesting
import Testing

/// Reads decided again from a kept decision (`evaluateRead`) decide exactly as a fresh evaluation does: a kept
/// decision is reused only while the caller, the document and every document the rules read are unchanged.
@Suite struct ReadDecisionTests {
    static let guarded = rules("""
        function settings() { return get(/databases/$(database)/documents/settings/app).data; }
        match /posts/{id} {
          allow get: if settings().open == true && (resource.data.public == true || resource.data.owner == request.auth.uid);
        }
        match /timed/{id} {
          allow get: if request.time < timestamp.date(2100, 1, 1) && resource.data.public == true;
        }
        match /whole/{id} {
          allow get: if request.keys().size() > 0 && resource.data.public == true;
        }
        match /open/{id} {
          allow get;
        }
        """)

    static func read(_ path: String, _ fields: [String: Value]?, auth: RulesAuth? = nil) -> RulesRequest {
        var request = RulesRequest(method: .get, path: docPath(path), auth: auth, time: testTime)
        request.storedResource = fields.map { StoredFields(path: docPath(path), data: Value.encodeFields($0)) }
        return request
    }

    static let open = FixtureLookup(["settings/app": ["open": .bool(true)]])
    static let closed = FixtureLookup(["settings/app": ["open": .bool(false)]])

    @Test func aDecisionIsReusedWhileNothingItReadChanges() throws {
        let program = try compile(Self.guarded)
        let post: [String: Value] = ["public": .bool(true)]
        #expect(program.evaluateRead(Self.read("posts/p1", post), lookup: Self.open) == .allow)
        #expect(program.readDecisionStatistics == .init(held: 1, kept: 1, reused: 0))
        #expect(program.evaluateRead(Self.read("posts/p1", post), lookup: Self.open) == .allow)
        #expect(program.readDecisionStatistics.reused == 1)

        // The settings document the rule reads changes: decided again, at once.
        #expect(!program.evaluateRead(Self.read("posts/p1", post), lookup: Self.closed).isAllowed)
        #expect(program.readDecisionStatistics == .init(held: 1, kept: 2, reused: 1))
        #expect(!program.evaluateRead(Self.read("posts/p1", post), lookup: Self.closed).isAllowed)
        #expect(program.readDecisionStatistics.reused == 2)
        // ... and gone: decided again (the kept denial read it as present).
        #expect(!program.evaluateRead(Self.read("posts/p1", post), lookup: FixtureLookup()).isAllowed)
        #expect(program.readDecisionStatistics.reused == 2)
        // Back as it was: the kept denial no longer holds either.
        #expect(program.evaluateRead(Self.read("posts/p1", post), lookup: Self.open) == .allow)
        #expect(program.readDecisionStatistics.reused == 2)
    }

    @Test func theDocumentReadIsComparedByItsStoredBytes() throws {
        let program = try compile(Self.guarded)
        #expect(program.evaluateRead(Self.read("posts/p1", ["public": .bool(true)]), lookup: Self.open) == .allow)
        #expect(!program.evaluateRead(Self.read("posts/p1", ["public": .bool(false)]), lookup: Self.open).isAllowed)
        #expect(!program.evaluateRead(Self.read("posts/p1", nil), lookup: Self.open).isAllowed)
        #expect(program.evaluateRead(Self.read("posts/p1", ["public": .bool(true)]), lookup: Self.open) == .allow)
        #expect(program.readDecisionStatistics.reused == 0)
        // Another document at another path is its own entry.
        #expect(program.evaluateRead(Self.read("posts/p2", ["public": .bool(true)]), lookup: Self.open) == .allow)
        #expect(program.readDecisionStatistics == .init(held: 2, kept: 5, reused: 0))
    }

    @Test func callersAreKeptApartByUidAndEveryClaim() throws {
        let program = try compile(Self.guarded)
        let owned: [String: Value] = ["public": .bool(false), "owner": .string("alice")]
        let alice = RulesAuth(uid: "alice", token: ["email_verified": .bool(true)])
        #expect(program.evaluateRead(Self.read("posts/p1", owned, auth: alice), lookup: Self.open) == .allow)
        #expect(!program.evaluateRead(Self.read("posts/p1", owned), lookup: Self.open).isAllowed)
        #expect(!program.evaluateRead(Self.read("posts/p1", owned, auth: RulesAuth(uid: "bob")), lookup: Self.open).isAllowed)
        // The same uid with other claims is another caller.
        let aliceUnverified = RulesAuth(uid: "alice", token: ["email_verified": .bool(false)])
        #expect(program.evaluateRead(Self.read("posts/p1", owned, auth: aliceUnverified), lookup: Self.open) == .allow)
        #expect(program.readDecisionStatistics == .init(held: 4, kept: 4, reused: 0))
        #expect(program.evaluateRead(Self.read("posts/p1", owned, auth: alice), lookup: Self.open) == .allow)
        #expect(!program.evaluateRead(Self.read("posts/p1", owned, auth: RulesAuth(uid: "bob")), lookup: Self.open).isAllowed)
        #expect(program.readDecisionStatistics.reused == 2)
    }

    @Test func decisionsThatReadTheClockAreNeverKept() throws {
        let program = try compile(Self.guarded)
        let post: [String: Value] = ["public": .bool(true)]
        for _ in 0..<3 {
            #expect(program.evaluateRead(Self.read("timed/t1", post), lookup: Self.open) == .allow)
            // The whole `request` map holds `request.time` too.
            #expect(program.evaluateRead(Self.read("whole/w1", post), lookup: Self.open) == .allow)
        }
        #expect(program.readDecisionStatistics == .init(held: 0, kept: 0, reused: 0))
        // A rule that reads nothing at all is kept and reused.
        #expect(program.evaluateRead(Self.read("open/o1", nil), lookup: Self.open) == .allow)
        #expect(program.evaluateRead(Self.read("open/o1", nil), lookup: Self.open) == .allow)
        #expect(program.readDecisionStatistics == .init(held: 1, kept: 1, reused: 1))
    }

    @Test func failedReadsAreNeverKeptAndFailOnReuse() throws {
        let program = try compile(Self.guarded)
        let post: [String: Value] = ["public": .bool(true)]
        #expect(!program.evaluateRead(Self.read("posts/p1", post), lookup: FailingLookup()).isAllowed)
        #expect(program.readDecisionStatistics.kept == 0)
        #expect(program.evaluateRead(Self.read("posts/p1", post), lookup: Self.open) == .allow)
        // A kept decision whose document can no longer be read is decided again, and the read's error denies.
        #expect(!program.evaluateRead(Self.read("posts/p1", post), lookup: FailingLookup()).isAllowed)
        #expect(program.readDecisionStatistics.reused == 0)
    }

    /// Paths whose ids Swift's `==` holds equal but whose bytes differ are different documents to rules:
    /// matched, compared and kept apart by their bytes.
    @Test func equivalentButDifferentIdsAreKeptApart() throws {
        let program = try compile(rules("""
            match /places/{id} { allow get: if id == 'caf\u{E9}'; }
            match /caf\u{E9}/{id} { allow get; }
            """))
        let composed = Self.read("places/caf\u{E9}", nil), decomposed = Self.read("places/cafe\u{301}", nil)
        for _ in 0..<2 {
            #expect(program.evaluateRead(composed, lookup: Self.open) == .allow)
            #expect(!program.evaluateRead(decomposed, lookup: Self.open).isAllowed)
        }
        #expect(program.evaluateRead(Self.read("caf\u{E9}/x", nil), lookup: Self.open) == .allow)
        #expect(!program.evaluateRead(Self.read("cafe\u{301}/x", nil), lookup: Self.open).isAllowed)
    }

    @Test func otherRequestsAreDecidedAfresh() throws {
        let program = try compile(rules("match /things/{id} { allow read, write: if true; }"))
        let list = RulesRequest(method: .list, path: docPath("things/x"), time: testTime,
                                query: ListConstraints(target: .collection(CollectionPath(uncheckedSegments: ["things"]))))
        let create = RulesRequest(method: .create, path: docPath("things/x"), time: testTime,
                                  requestResource: doc("things/x", [:]))
        let decoded = RulesRequest(method: .get, path: docPath("things/x"), time: testTime, resource: doc("things/x", [:]))
        for request in [list, create, decoded, list, create, decoded] {
            #expect(program.evaluateRead(request, lookup: EmptyDocumentLookup()) == .allow)
        }
        #expect(program.readDecisionStatistics == .init(held: 0, kept: 0, reused: 0))
    }

    /// Random callers read random documents while the documents the rules read change underneath: each
    /// decision of one long-lived program equals a fresh evaluation of the same request.
    @Test func keptDecisionsDecideAsFreshEvaluations() throws {
        let conditions = StoredResourceTests.conditions + [
            "get(/databases/$(database)/documents/settings/app).data.open == true",
            "exists(/databases/$(database)/documents/members/$(request.auth.uid))",
            "get(/databases/$(database)/documents/members/$(request.auth.uid)).data.role == resource.data.a",
            "request.auth.token.admin == true || resource.data.a == 1",
            "request.auth.uid == id || getAfter(/databases/$(database)/documents/settings/app).data.open == false",
        ]
        let source = rules(conditions.enumerated().map { "match /c\($0.offset)/{id} { allow get: if \($0.element); }" }
            .joined(separator: "\n"))
        let program = try compile(source)
        var r = RandomValues(seed: 0x5245_4144)
        let callers: [RulesAuth?] = [nil, RulesAuth(uid: "alice"), RulesAuth(uid: "d1"),
                                     RulesAuth(uid: "alice", token: ["admin": .bool(true)])]
        var documents: [String: Document] = [:]
        var allowed = 0, denied = 0
        for round in 0..<4_000 {
            let k = r.int(0...(conditions.count - 1))
            let collection = CollectionPath(uncheckedSegments: ["c\(k)"])
            let id = r.pick(["d1", "d2"])
            let key = "c\(k)/\(id)"
            if documents[key] == nil || r.chance(0.2) {
                var document = r.document(in: [collection], id: id)
                if r.chance(0.4) { document.fields["a"] = .int(1) }
                documents[key] = r.chance(0.1) ? nil : document
            }
            var state: [String: [String: Value]] = [:]
            if r.chance(0.8) { state["settings/app"] = ["open": .bool(r.chance(0.5))] }
            if r.chance(0.5) { state["members/alice"] = ["role": r.pick([.int(1), .string("x")])] }
            if r.chance(0.3) { state["members/d1"] = [:] }
            let lookup = FixtureLookup(state)
            var request = RulesRequest(method: .get, path: docPath(key), auth: r.pick(callers), time: testTime)
            request.storedResource = documents[key].map { StoredFields(path: $0.path, data: Value.encodeFields($0.fields)) }
            let expected = program.evaluate(request, lookup: lookup)
            let actual = program.evaluateRead(request, lookup: lookup)
            #expect(actual == expected, "round \(round) `\(conditions[k])` as \(String(describing: request.auth))")
            if expected.isAllowed { allowed += 1 } else { denied += 1 }
        }
        let statistics = program.readDecisionStatistics
        // Both outcomes, and enough reuse to have tested it.
        #expect(allowed > 800 && denied > 800)
        #expect(statistics.reused > 1_000)
    }
}

/// The kept decisions stay within their bounds, and replacing a decision frees what the old one held.
@Suite struct ReadDecisionBoundsTests {
    static func entry(_ key: ReadDecisions.Key, bytes: Int) -> ReadDecisions.Entry {
        .init(key: key, resource: [UInt8](repeating: 7, count: bytes), reads: [], decision: .allow)
    }

    @Test func replacingADecisionDoesNotCountItTwice() {
        let decisions = ReadDecisions(capacity: 64, maxBytes: 16 * 1_200, maxResourceBytes: 1_000, stripes: 1)
        let key = ReadDecisions.Key(path: docPath("posts/p1"), auth: nil)
        let other = ReadDecisions.Key(path: docPath("posts/p2"), auth: nil)
        decisions.keep(Self.entry(other, bytes: 1_000), fingerprint: other.fingerprint)
        // Each entry holds about 1,128 bytes against a budget of 19,200: replacing one 100 times must not
        // fill it, or the stripe would start over and lose the other decision.
        for _ in 0..<100 { decisions.keep(Self.entry(key, bytes: 1_000), fingerprint: key.fingerprint) }
        #expect(decisions.entry(key, fingerprint: key.fingerprint) != nil)
        #expect(decisions.entry(other, fingerprint: other.fingerprint) != nil)
        #expect(decisions.statistics == .init(held: 2, kept: 101, reused: 2))
    }

    @Test func aFullStripeStartsOver() {
        let decisions = ReadDecisions(capacity: 8, maxBytes: 1 << 20, maxResourceBytes: 1_000, stripes: 1)
        let keys = (0..<20).map { ReadDecisions.Key(path: docPath("posts/p\($0)"), auth: nil) }
        for key in keys { decisions.keep(Self.entry(key, bytes: 10), fingerprint: key.fingerprint) }
        #expect(decisions.statistics.held <= 8)
        #expect(decisions.entry(keys[19], fingerprint: keys[19].fingerprint) != nil)
        // A fingerprint that belongs to another key finds nothing.
        #expect(decisions.entry(keys[0], fingerprint: keys[19].fingerprint) == nil)
    }
}

/// A lookup whose every read fails.
struct FailingLookup: RulesDocumentLookup {
    struct Failure: Error {}
    func get(_ path: DocumentPath) throws -> Document? { throw Failure() }
    func getAfter(_ path: DocumentPath) throws -> Document? { throw Failure() }
}

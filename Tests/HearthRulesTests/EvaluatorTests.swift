import HearthCore
import HearthRules
import Testing

@Suite struct EvaluatorTests {
    static let projectRules = rules("""
        function signedIn() { return request.auth != null; }
        match /projects/{projectId} {
          function isOwner() {
            return signedIn() && get(/databases/$(database)/documents/projects/$(projectId)).data.owner == request.auth.uid;
          }
          allow get: if resource.data.public == true || isOwner();
          allow create: if signedIn() && request.resource.data.owner == request.auth.uid
                        && request.resource.data.createdAt == request.time;
          allow update: if isOwner()
                        && request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title', 'updatedAt']);
          allow delete: if isOwner();
          match /rounds/{roundId} {
            allow read: if isOwner();
            allow write: if getAfter(/databases/$(database)/documents/projects/$(projectId)).data.open == true;
          }
        }
    """)

    static let lookup = FixtureLookup([
        "projects/p1": ["owner": .string("alice"), "public": .bool(false), "title": .string("t")],
        "projects/p2": ["owner": .string("bob"), "public": .bool(true)],
    ], after: [
        "projects/p1": ["owner": .string("alice"), "open": .bool(true)],
    ])

    static func request(_ method: RulesMethod, _ path: String, uid: String?, resource: [String: Value]? = nil,
                        after: [String: Value]? = nil) -> RulesRequest {
        RulesRequest(method: method, path: docPath(path), auth: uid.map { RulesAuth(uid: $0) }, time: testTime,
                     resource: resource.map { doc(path, $0) }, requestResource: after.map { doc(path, $0) })
    }

    @Test func ownerCheckWithGet() throws {
        let program = try compile(Self.projectRules)
        let stored: [String: Value] = ["owner": .string("alice"), "public": .bool(false), "title": .string("t")]
        #expect(program.evaluate(Self.request(.get, "projects/p1", uid: "alice", resource: stored), lookup: Self.lookup) == .allow)
        #expect(!program.evaluate(Self.request(.get, "projects/p1", uid: "bob", resource: stored), lookup: Self.lookup).isAllowed)
        #expect(!program.evaluate(Self.request(.get, "projects/p1", uid: nil, resource: stored), lookup: Self.lookup).isAllowed)
        #expect(program.evaluate(Self.request(.get, "projects/p2", uid: nil, resource: ["public": .bool(true)]),
                                 lookup: Self.lookup) == .allow)
        #expect(program.evaluate(Self.request(.delete, "projects/p1", uid: "alice", resource: stored), lookup: Self.lookup) == .allow)
    }

    @Test func updateMayOnlyTouchSomeKeys() throws {
        let program = try compile(Self.projectRules)
        let stored: [String: Value] = ["owner": .string("alice"), "public": .bool(false), "title": .string("t")]
        var retitled = stored
        retitled["title"] = .string("new")
        retitled["updatedAt"] = .timestamp(testTime)
        #expect(program.evaluate(Self.request(.update, "projects/p1", uid: "alice", resource: stored, after: retitled),
                                 lookup: Self.lookup) == .allow)
        var takeover = retitled
        takeover["owner"] = .string("mallory")
        let decision = program.evaluate(Self.request(.update, "projects/p1", uid: "alice", resource: stored, after: takeover),
                                        lookup: Self.lookup)
        guard case .deny(let denial) = decision else { Issue.record("takeover allowed"); return }
        #expect(denial.reason == "condition is false")
        #expect(denial.expression?.contains("affectedKeys") == true)
    }

    @Test func serverTimestampEqualsRequestTime() throws {
        let program = try compile(Self.projectRules)
        let ok = program.evaluate(Self.request(.create, "projects/p9", uid: "carol",
                                               after: ["owner": .string("carol"), "createdAt": .timestamp(testTime)]),
                                  lookup: Self.lookup)
        #expect(ok == .allow)
        let early = Timestamp(microseconds: testTime.microseconds - 1)
        let bad = program.evaluate(Self.request(.create, "projects/p9", uid: "carol",
                                                after: ["owner": .string("carol"), "createdAt": .timestamp(early)]),
                                   lookup: Self.lookup)
        #expect(!bad.isAllowed)
    }

    @Test func getAfterSeesPendingWrites() throws {
        let program = try compile(Self.projectRules)
        #expect(program.evaluate(Self.request(.create, "projects/p1/rounds/r1", uid: "x", after: ["n": .int(1)]),
                                 lookup: Self.lookup) == .allow)
        #expect(!program.evaluate(Self.request(.create, "projects/p2/rounds/r1", uid: "x", after: ["n": .int(1)]),
                                  lookup: Self.lookup).isAllowed)
    }

    @Test func readCoversGetAndListWriteCoversCreateUpdateDelete() throws {
        let program = try compile(rules("match /a/{id} { allow read: if true; } match /b/{id} { allow write: if true; }"))
        for m in [RulesMethod.get, .list] {
            #expect(program.evaluate(RulesRequest(method: m, path: docPath("a/x"), time: testTime), lookup: FixtureLookup()) == .allow)
            #expect(!program.evaluate(RulesRequest(method: m, path: docPath("b/x"), time: testTime), lookup: FixtureLookup()).isAllowed)
        }
        for m in [RulesMethod.create, .update, .delete] {
            #expect(program.evaluate(RulesRequest(method: m, path: docPath("b/x"), time: testTime), lookup: FixtureLookup()) == .allow)
            #expect(!program.evaluate(RulesRequest(method: m, path: docPath("a/x"), time: testTime), lookup: FixtureLookup()).isAllowed)
        }
    }

    @Test func defaultDenyAndAnyAllowGrants() throws {
        let program = try compile(rules("""
            match /a/{id} { allow get: if false; }
            match /a/{other} { allow get: if other == 'open'; }
        """))
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("a/open"), time: testTime), lookup: FixtureLookup()) == .allow)
        #expect(!program.evaluate(RulesRequest(method: .get, path: docPath("a/shut"), time: testTime), lookup: FixtureLookup()).isAllowed)
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("z/z"), time: testTime), lookup: FixtureLookup())
                == .deny(.noRuleMatched))
    }

    // MARK: Wildcards

    @Test func recursiveWildcardVersion1MatchesOneOrMore() throws {
        let program = try compile(rules("""
            match /users/{uid}/{rest=**} { allow get: if rest == path('posts/p1') || rest == path('posts'); }
        """, version: 1))
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("users/a/posts/p1"), time: testTime),
                                 lookup: FixtureLookup()) == .allow)
        // Version 1: `{rest=**}` needs at least one segment, so the user document itself does not match.
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("users/a"), time: testTime),
                                 lookup: FixtureLookup()) == .deny(.noRuleMatched))
    }

    @Test func recursiveWildcardVersion2MatchesZeroOrMore() throws {
        let program = try compile(rules("""
            match /users/{uid}/{rest=**} { allow get: if uid == 'a'; }
            match /{path=**}/comments/{c} { allow get: if c == 'c1' && path is path; }
        """))
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("users/a"), time: testTime),
                                 lookup: FixtureLookup()) == .allow)
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("users/a/x/y/z/w"), time: testTime),
                                 lookup: FixtureLookup()) == .allow)
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("comments/c1"), time: testTime),
                                 lookup: FixtureLookup()) == .allow)
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("p/1/q/2/comments/c1"), time: testTime),
                                 lookup: FixtureLookup()) == .allow)
        #expect(!program.evaluate(RulesRequest(method: .get, path: docPath("p/1/comments/c2"), time: testTime),
                                  lookup: FixtureLookup()).isAllowed)
    }

    @Test func singleWildcardsBindStrings() throws {
        let program = try compile(rules("""
            match /rooms/{room} {
              match /messages/{msg} { allow get: if room == 'r1' && msg is string && msg.size() == 2; }
            }
        """))
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("rooms/r1/messages/m1"), time: testTime),
                                 lookup: FixtureLookup()) == .allow)
        #expect(!program.evaluate(RulesRequest(method: .get, path: docPath("rooms/r2/messages/m1"), time: testTime),
                                  lookup: FixtureLookup()).isAllowed)
        // A nested match does not apply to its parent's documents.
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("rooms/r1"), time: testTime),
                                 lookup: FixtureLookup()) == .deny(.noRuleMatched))
    }

    // MARK: Limits

    static func accessRules(_ count: Int, distinct: Bool) -> String {
        let calls = (0..<count).map { i in
            "exists(/databases/$(database)/documents/d/\(distinct ? "x\(i)" : "same"))"
        }.joined(separator: " || ")
        return rules("match /t/{id} { allow get: if (\(calls)) || true; }")
    }

    @Test func tenDistinctDocumentReadsAreAllowedEleventhFails() throws {
        let ten = try compile(Self.accessRules(10, distinct: true))
        let eleven = try compile(Self.accessRules(11, distinct: true))
        let repeated = try compile(Self.accessRules(30, distinct: false))
        let req = RulesRequest(method: .get, path: docPath("t/1"), time: testTime)
        #expect(ten.evaluate(req, lookup: FixtureLookup()) == .allow)
        // `error || true` is true, so probe the limit with a rule that needs every call.
        let strict = try compile(rules("match /t/{id} { allow get: if " + (0..<11).map {
            "!exists(/databases/$(database)/documents/d/x\($0))"
        }.joined(separator: " && ") + "; }"))
        guard case .deny(let denial) = strict.evaluate(req, lookup: FixtureLookup()) else {
            Issue.record("11 reads allowed"); return
        }
        #expect(denial.reason.contains("more than 10 get/exists calls"))
        #expect(eleven.evaluate(req, lookup: FixtureLookup()) == .allow)
        // Reads of one document are cached and count once.
        #expect(repeated.evaluate(req, lookup: FixtureLookup()) == .allow)
        var batchReq = req
        batchReq.accessCallLimit = RulesLimits.maxAccessCallsBatch
        #expect(strict.evaluate(batchReq, lookup: FixtureLookup()) == .allow)
    }

    @Test func batchSharesTwentyReads() throws {
        let program = try compile(rules("match /t/{id} { allow create: if " + (0..<8).map {
            "!exists(/databases/$(database)/documents/d/$(id + '-\($0)'))"
        }.joined(separator: " && ") + "; }"))
        let writes = (0..<3).map { RulesRequest(method: .create, path: docPath("t/w\($0)"), time: testTime) }
        let decisions = program.evaluateBatch(writes, lookup: FixtureLookup())
        // 8 + 8 reads fit in 20; the third write needs 24 in all.
        #expect(decisions[0] == .allow)
        #expect(decisions[1] == .allow)
        #expect(!decisions[2].isAllowed)
    }

    /// Functions `c1` ... `c25`, each returning `prefix` and a call of the next, `c25` true: functions may not
    /// recurse, so depth comes from a chain.
    static func chain(_ prefix: String = "") -> String {
        (1..<25).map { "function c\($0)() { return \(prefix)c\($0 + 1)(); }" }
            .joined(separator: "\n") + "\nfunction c25() { return true; }"
    }

    @Test func functionCallDepthIsLimited() throws {
        let program = try compile(rules("""
            \(Self.chain())
            match /t/{id} { allow get: if id == 'shallow' ? c21() : c1(); }
        """))
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("t/shallow"), time: testTime), lookup: FixtureLookup()) == .allow)
        guard case .deny(let denial) = program.evaluate(RulesRequest(method: .get, path: docPath("t/deep"), time: testTime),
                                                        lookup: FixtureLookup()) else {
            Issue.record("deep calls allowed"); return
        }
        #expect(denial.reason.contains("nested more than 20 deep"))
    }

    /// Deep evaluation (a dozen calls, each nearly as deep as the parser accepts) runs on an ordinary
    /// thread stack; the 1,000-expression budget bounds the recursion of any evaluation. Each call also spends
    /// budget beside its nesting (the list), so that the budget ends a long chain before a debug build's stack.
    @Test func deepestEvaluationFitsTheStack() throws {
        let nots = String(repeating: "!", count: 58)
        let program = try compile(rules("""
            \(Self.chain("[1, 2, 3, 4, 5].size() > 0 && " + nots))
            match /t/{id} { allow get: if id == '12' ? c14() : c1(); }
        """))
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("t/12"), time: testTime), lookup: FixtureLookup()) == .allow)
        #expect(!program.evaluate(RulesRequest(method: .get, path: docPath("t/25"), time: testTime), lookup: FixtureLookup()).isAllowed)
    }

    @Test func expressionBudgetIsLimitedAndFatal() throws {
        let big = "[" + Array(repeating: "1", count: 1_200).joined(separator: ", ") + "]"
        let program = try compile(rules("match /t/{id} { allow get: if \(big).size() > 0 || true; }"))
        guard case .deny(let denial) = program.evaluate(RulesRequest(method: .get, path: docPath("t/1"), time: testTime),
                                                        lookup: FixtureLookup()) else {
            Issue.record("budget not enforced"); return
        }
        #expect(denial.reason.contains("more than 1000 expressions"))
    }

    @Test func pathologicalRegexFinishes() throws {
        let program = try compile(rules("""
            match /t/{id} { allow get: if !(id + id + id + id).matches('(a*)*(a|aa)*b') && 'a'.matches('(a|a?)+'); }
        """))
        let id = String(repeating: "a", count: 200)
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("t/\(id)"), time: testTime), lookup: FixtureLookup()) == .allow)
    }

    // MARK: Rules are not filters

    static let listRules = rules("""
        match /posts/{postId} {
          allow list: if request.query.limit <= 50 && resource.data.owner == request.auth.uid;
        }
        match /public/{id} {
          allow list: if resource.data.visibility in ['public', 'team'];
        }
        match /{path=**}/snippets/{snippetId} {
          allow list: if resource.data.shared == true;
        }
        match /projects/{p}/snippets/{snippetId} {
          allow list: if true;
        }
    """)

    static func list(_ target: ListConstraints.Target, uid: String? = "alice", limit: Int? = nil,
                     _ disjuncts: [[String: Value]] = []) -> RulesRequest {
        let q = ListConstraints(target: target, limit: limit, disjuncts: disjuncts.map { d in
            Dictionary(uniqueKeysWithValues: d.map { (try! FieldPath(parsing: $0.key), $0.value) })
        })
        return RulesRequest(method: .list, path: docPath("placeholder/x"), auth: uid.map { RulesAuth(uid: $0) },
                            time: testTime, query: q)
    }

    @Test func listNeedsTheQueryToPinTheCheckedField() throws {
        let program = try compile(Self.listRules)
        let posts = ListConstraints.Target.collection(try CollectionPath("posts"))
        #expect(program.evaluate(Self.list(posts, limit: 20, [["owner": .string("alice")]]), lookup: FixtureLookup()) == .allow)
        // No filter: some returned post could belong to someone else.
        guard case .deny(let denial) = program.evaluate(Self.list(posts, limit: 20), lookup: FixtureLookup()) else {
            Issue.record("unfiltered list allowed"); return
        }
        #expect(denial.reason.contains("rules are not filters"))
        // Pinned to another user: definitely false.
        #expect(!program.evaluate(Self.list(posts, limit: 20, [["owner": .string("bob")]]), lookup: FixtureLookup()).isAllowed)
        // The limit check: over 50, or absent.
        #expect(!program.evaluate(Self.list(posts, limit: 51, [["owner": .string("alice")]]), lookup: FixtureLookup()).isAllowed)
        #expect(!program.evaluate(Self.list(posts, [["owner": .string("alice")]]), lookup: FixtureLookup()).isAllowed)
        // Every disjunct must satisfy the rule (an `in` or `or` query).
        #expect(!program.evaluate(Self.list(posts, limit: 5, [["owner": .string("alice")], ["owner": .string("bob")]]),
                                  lookup: FixtureLookup()).isAllowed)
        #expect(program.evaluate(Self.list(posts, limit: 5, [["owner": .string("alice"), "x": .int(1)], ["owner": .string("alice")]]),
                                 lookup: FixtureLookup()) == .allow)
    }

    @Test func listWithInOperatorOnPinnedValues() throws {
        let program = try compile(Self.listRules)
        let target = ListConstraints.Target.collection(try CollectionPath("public"))
        #expect(program.evaluate(Self.list(target, [["visibility": .string("public")], ["visibility": .string("team")]]),
                                 lookup: FixtureLookup()) == .allow)
        #expect(!program.evaluate(Self.list(target, [["visibility": .string("public")], ["visibility": .string("private")]]),
                                  lookup: FixtureLookup()).isAllowed)
        #expect(!program.evaluate(Self.list(target), lookup: FixtureLookup()).isAllowed)
    }

    @Test func collectionGroupsOnlyUseRecursiveMatches() throws {
        let program = try compile(Self.listRules)
        let group = ListConstraints.Target.collectionGroup(id: "snippets", under: nil)
        #expect(program.evaluate(Self.list(group, [["shared": .bool(true)]]), lookup: FixtureLookup()) == .allow)
        // `match /projects/{p}/snippets/{id}` allows everything, but covers only some snippets collections.
        #expect(!program.evaluate(Self.list(group), lookup: FixtureLookup()).isAllowed)
        // A plain collection list under a project does use it.
        let one = ListConstraints.Target.collection(try CollectionPath("projects/p1/snippets"))
        #expect(program.evaluate(Self.list(one), lookup: FixtureLookup()) == .allow)
    }

    @Test func nestedPinnedFieldsAndShortCircuitOverUnknowns() throws {
        let program = try compile(rules("""
            match /c/{id} {
              allow list: if resource.data.meta.owner == request.auth.uid && resource.data.get('kind', 'x') == 'note';
            }
            match /d/{id} {
              allow list: if request.auth.uid == 'admin' || resource.data.public == true;
            }
            match /e/{id} {
              allow list: if resource.data.size() > 0 && false;
            }
        """))
        let c = ListConstraints.Target.collection(try CollectionPath("c"))
        #expect(program.evaluate(Self.list(c, [["meta.owner": .string("alice"), "kind": .string("note")]]),
                                 lookup: FixtureLookup()) == .allow)
        #expect(!program.evaluate(Self.list(c, [["meta.owner": .string("alice")]]), lookup: FixtureLookup()).isAllowed)
        let d = ListConstraints.Target.collection(try CollectionPath("d"))
        // `true || unknown` is true: the admin may list everything.
        #expect(program.evaluate(Self.list(d, uid: "admin"), lookup: FixtureLookup()) == .allow)
        #expect(!program.evaluate(Self.list(d, uid: "alice"), lookup: FixtureLookup()).isAllowed)
        // `unknown && false` is false, not unknown: the denial says the condition is false.
        let e = ListConstraints.Target.collection(try CollectionPath("e"))
        guard case .deny(let denial) = program.evaluate(Self.list(e), lookup: FixtureLookup()) else {
            Issue.record("allowed"); return
        }
        #expect(denial.reason == "condition is false")
    }

    @Test func listQueryFieldsAreVisible() throws {
        let program = try compile(rules("""
            match /c/{id} {
              allow list: if request.query.orderBy.createdAt == 'DESC' && request.query.offset == null
                          && request.path == /databases/$(database)/documents/c;
            }
        """))
        let q = ListConstraints(target: .collection(try CollectionPath("c")),
                                orderBy: [.init(field: try FieldPath(parsing: "createdAt"), descending: true)])
        let req = RulesRequest(method: .list, path: docPath("c/x"), time: testTime, query: q)
        #expect(program.evaluate(req, lookup: FixtureLookup()) == .allow)
    }
}

@Suite struct AuthTests {
    @Test func identityMapsToAuth() {
        #expect(RulesAuth(Identity.unauthenticated) == nil)
        #expect(RulesAuth(Identity.admin) == nil)
        #expect(RulesAuth(Identity.user(uid: "u", token: ["a": .int(1)])) == RulesAuth(uid: "u", token: ["a": .int(1)]))
    }

    @Test func defaultClaimsAreVisibleToRules() throws {
        let token = RulesAuth.defaultClaims(uid: "u1", signInProvider: "password", claims: ["admin": .bool(true)])
        let program = try compile(rules("""
            match /t/{id} {
              allow get: if request.auth.token.sub == 'u1' && request.auth.token.user_id == request.auth.uid
                         && request.auth.token.firebase.sign_in_provider == 'password' && request.auth.token.admin;
            }
        """))
        let req = RulesRequest(method: .get, path: docPath("t/1"), auth: RulesAuth(uid: "u1", token: token), time: testTime)
        #expect(program.evaluate(req, lookup: FixtureLookup()) == .allow)
    }

    /// Names resolve innermost first: a function's `let`s and parameters, then the wildcards of the `allow`
    /// being decided, then `request` and `resource`. A function sees its own locals and the wildcards, never
    /// its caller's locals.
    @Test func namesResolveFromLocalsToWildcardsToRequestAndResource() throws {
        let program = try compile(rules("""
            match /things/{id} {
              function paramShadowsResource(resource) { return resource == 'param'; }
              function letShadowsWildcard(x) { let id = 'let'; return id == 'let' && x == 'x'; }
              function seesWildcard() { return id; }
              function callerLocalsStayPut(a) { return readsA(); }
              function readsA() { return a == 1; }
              allow get: if paramShadowsResource('param') && letShadowsWildcard('x') && seesWildcard() == 'doc1'
                         && id == 'doc1' && resource.data.v == 1 && request.method == 'get';
              allow list: if callerLocalsStayPut(1);
            }
            match /rooms/{request} {
              allow get: if request == 'r1';
            }
            match /boxes/{resource} {
              allow get: if resource == 'b1';
            }
            """))
        let get = RulesRequest(method: .get, path: docPath("things/doc1"), auth: nil, time: testTime,
                               resource: doc("things/doc1", ["v": .int(1)]))
        #expect(program.evaluate(get, lookup: FixtureLookup()) == .allow)
        var other = get
        other.resource = doc("things/doc1", ["v": .int(2)])
        #expect(!program.evaluate(other, lookup: FixtureLookup()).isAllowed)
        let list = RulesRequest(method: .list, path: docPath("things/x"), auth: nil, time: testTime,
                                query: ListConstraints(target: .collection(docPath("things/x").parent)))
        #expect(!program.evaluate(list, lookup: FixtureLookup()).isAllowed)
        // Wildcards named like the globals hide them.
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("rooms/r1"), time: testTime),
                                 lookup: FixtureLookup()) == .allow)
        #expect(program.evaluate(RulesRequest(method: .get, path: docPath("boxes/b1"), time: testTime,
                                              resource: doc("boxes/b1", [:])), lookup: FixtureLookup()) == .allow)
    }

    /// A call names the innermost function of that name in scope, then a built-in: in blocks with a few
    /// functions and in blocks with many (looked up differently), a function declared in an inner block hides
    /// an outer one, a block sees its enclosing blocks' functions, and a function may hide a built-in.
    @Test func functionNamesResolveInnermostFirstInShortAndLongScopes() throws {
        let many = (1...10).map { "function f\($0)() { return \($0); }" }.joined(separator: "\n")
        let program = try compile(rules("""
            function pick() { return 'outer'; }
            match /short/{id} {
              function pick() { return 'short'; }
              allow get: if pick() == 'short' && exists(/databases/$(database)/documents/short/$(id)) == false;
            }
            match /plain/{id} {
              allow get: if pick() == 'outer';
            }
            match /long/{id} {
              function pick() { return 'long'; }
              \(many)
              allow get: if pick() == 'long' && f1() + f10() == 11 && int('3') == 3;
              match /inner/{sub} {
                function f10() { return 100; }
                function int(x) { return 'mine'; }
                allow get: if pick() == 'long' && f1() + f10() == 101 && int('3') == 'mine';
              }
            }
            """))
        for path in ["short/a", "plain/a", "long/a", "long/a/inner/b"] {
            let request = RulesRequest(method: .get, path: docPath(path), time: testTime)
            #expect(program.evaluate(request, lookup: FixtureLookup()) == .allow, "\(path)")
        }
    }
}

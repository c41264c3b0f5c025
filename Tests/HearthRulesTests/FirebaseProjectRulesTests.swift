import HearthCore
import HearthRules
import Testing

/// What rules files from Firebase projects use: functions at the top level of the file, `let` bindings that
/// matter only where they are read, and the constructs found in public Firebase projects' rules files
/// (docs/rules.md, "Rules files from Firebase projects"). Each row is a small rules file of our own.
@Suite struct FirebaseProjectRulesTests {
    /// What a request should come to: allowed, denied by a false condition, or denied by an evaluation error.
    enum Outcome: String, Sendable { case allow, deny, error }

    /// Decides `get` of `t/doc1` (stored `{owner: "alice", n: 1}`) for `uid` (nil: a guest) with `claims`.
    static func decide(_ source: String, uid: String? = "alice", claims: [String: Value] = [:],
                       lookup: FixtureLookup = FixtureLookup()) -> Outcome {
        let program: RulesProgram
        do { program = try compile(source) } catch {
            Issue.record("does not compile: \(error)")
            return .error
        }
        let request = RulesRequest(
            method: .get, path: docPath("t/doc1"), auth: uid.map { RulesAuth(uid: $0, token: claims) }, time: testTime,
            resource: doc("t/doc1", ["owner": .string("alice"), "n": .int(1)]))
        switch program.evaluate(request, lookup: lookup) {
        case .allow: return .allow
        case .deny(let denial): return denial.reason.hasPrefix("error:") ? .error : .deny
        }
    }

    // MARK: Top-level functions

    struct Placement: Sendable, CustomTestStringConvertible {
        let name: String
        let source: String
        let uid: String?
        let claims: [String: Value]
        let expected: Outcome
        var testDescription: String { name }
    }

    static func service(_ condition: String) -> String {
        """
        service cloud.firestore {
          match /databases/{database}/documents {
            function isAdmin() { return request.auth.token.admin == true; }
            match /t/{id} {
              allow get: if \(condition);
            }
          }
        }
        """
    }

    static func file(before: String = "", condition: String, after: String = "") -> String {
        "rules_version = '2';\n" + before + "\n" + service(condition) + "\n" + after
    }

    static let placements: [Placement] = [
        Placement(name: "declared before the service block", source: file(
            before: "function signedIn() { return request.auth != null; }", condition: "signedIn()"),
            uid: "alice", claims: [:], expected: .allow),
        Placement(name: "declared before the service block, guest", source: file(
            before: "function signedIn() { return request.auth != null; }", condition: "signedIn()"),
            uid: nil, claims: [:], expected: .deny),
        Placement(name: "declared after the service block", source: file(
            condition: "isOwner()", after: "function isOwner() { return request.auth.uid == resource.data.owner; }"),
            uid: "alice", claims: [:], expected: .allow),
        Placement(name: "declared after the service block, another user", source: file(
            condition: "isOwner()", after: "function isOwner() { return request.auth.uid == resource.data.owner; }"),
            uid: "bob", claims: [:], expected: .deny),
        Placement(name: "declared before the service block of a file without rules_version", source: "function yes() { return true; }\n" + service("yes()"), uid: nil, claims: [:], expected: .allow),
        Placement(name: "a top-level function reads the allow's wildcards", source: file(
            before: "function here() { return database == '(default)' && id == 'doc1'; }", condition: "here()"),
            uid: "alice", claims: [:], expected: .allow),
        Placement(name: "a top-level function calls the service block's", source: """
            function staff() { return isAdmin() || request.auth.token.staff == true; }
            service cloud.firestore {
              function isAdmin() { return request.auth.token.admin == true; }
              match /databases/{database}/documents {
                match /t/{id} { allow get: if staff(); }
              }
            }
            """, uid: "bob", claims: ["admin": .bool(true)], expected: .allow),
        Placement(name: "the service block's function calls a top-level one", source: """
            service cloud.firestore {
              function viaTop() { return top(); }
              match /databases/{database}/documents {
                match /t/{id} { allow get: if viaTop(); }
              }
            }
            function top() { return request.auth.uid == 'alice'; }
            """, uid: "alice", claims: [:], expected: .allow),
        Placement(name: "a match block's function hides a top-level one", source: """
            function decide() { return true; }
            service cloud.firestore {
              match /databases/{database}/documents {
                match /t/{id} {
                  function decide() { return false; }
                  allow get: if decide();
                }
              }
            }
            """, uid: "alice", claims: [:], expected: .deny),
        Placement(name: "top-level functions on both sides call each other", source: file(
            before: "function a() { return b(); }", condition: "a()", after: "function b() { return request.auth != null; }"),
            uid: "alice", claims: [:], expected: .allow),
    ]

    @Test(arguments: placements)
    func topLevelFunction(_ row: Placement) {
        #expect(Self.decide(row.source, uid: row.uid, claims: row.claims) == row.expected)
    }

    // MARK: Lazy lets

    struct Binding: Sendable, CustomTestStringConvertible {
        let name: String
        let body: String
        let uid: String
        let claims: [String: Value]
        let expected: Outcome
        var testDescription: String { name }
    }

    static let adminOrOwner = "let admin = request.auth.token.admin == true; return owner() || admin;"

    static let bindings: [Binding] = [
        Binding(name: "the owner, whose token has no admin claim", body: adminOrOwner, uid: "alice", claims: [:], expected: .allow),
        Binding(name: "another user with admin true", body: adminOrOwner, uid: "bob", claims: ["admin": .bool(true)], expected: .allow),
        Binding(name: "another user with admin false", body: adminOrOwner, uid: "bob", claims: ["admin": .bool(false)], expected: .deny),
        Binding(name: "another user without the claim: the result depends on the failing let", body: adminOrOwner,
                uid: "bob", claims: [:], expected: .error),
        Binding(name: "a failing let never read", body: "let x = 1 / 0; return true;", uid: "bob", claims: [:], expected: .allow),
        Binding(name: "a failing let past a false &&", body: "let x = 1 / 0; return false && x;", uid: "bob", claims: [:], expected: .deny),
        Binding(name: "a failing let beside a true ||", body: "let x = 1 / 0; return x || true;", uid: "bob", claims: [:], expected: .allow),
        Binding(name: "a failing let read", body: "let x = 1 / 0; return x;", uid: "bob", claims: [:], expected: .error),
        Binding(name: "a failing let read twice, each time decided by the other side",
                body: "let x = resource.data.missing; return (x == 1 || true) && (x == 2 || true);", uid: "bob", claims: [:], expected: .allow),
        Binding(name: "a failing let read by a later let that is never read",
                body: "let x = resource.data.missing; let y = x + 1; return true;", uid: "bob", claims: [:], expected: .allow),
        Binding(name: "a let sees the lets before it", body: "let a = 1; let b = a + 1; return b == 2;", uid: "bob", claims: [:], expected: .allow),
        Binding(name: "a let hides an earlier one of its name", body: "let a = 1; let a = a + 1; return a == 2;", uid: "bob", claims: [:], expected: .allow),
        Binding(name: "a let hides a wildcard", body: "let id = 'other'; return id == 'other';", uid: "bob", claims: [:], expected: .allow),
        Binding(name: "a let named like a namespace hides it", body: "let math = {'abs': 2}; return math.abs == 2;", uid: "bob", claims: [:], expected: .allow),
        Binding(name: "an argument is evaluated at the call", body: "let x = 1 / 0; return ignores(x) || true;", uid: "bob", claims: [:], expected: .allow),
        Binding(name: "an argument is evaluated at the call, and fails it", body: "let x = 1 / 0; return ignores(x);", uid: "bob", claims: [:], expected: .error),
        Binding(name: "ten unread lets reading documents read none", body: (1...10).map {
            "let d\($0) = get(/databases/$(database)/documents/t/d\($0));"
        }.joined(separator: " ") + " return !exists(/databases/$(database)/documents/t/other);", uid: "bob", claims: [:], expected: .allow),
        Binding(name: "a let read in a nested function's argument", body: "let u = request.auth.uid; return ignores(u) && u == 'bob';",
                uid: "bob", claims: [:], expected: .allow),
    ]

    @Test(arguments: bindings)
    func lazyLet(_ row: Binding) {
        let source = rules("""
            function owner() { return request.auth.uid == resource.data.owner; }
            function ignores(v) { return true; }
            function allowed() { \(row.body) }
            match /t/{id} { allow get: if allowed(); }
        """)
        #expect(Self.decide(source, uid: row.uid, claims: row.claims) == row.expected)
    }

    /// Firestore's access limit counts documents read: a `let` read twice reads its document once, and one
    /// never read reads nothing, so nine lets read, one unread and one more document make ten reads.
    @Test func unreadLetsDoNotCountTowardsTheAccessLimit() {
        let lets = (1...10).map { "let d\($0) = exists(/databases/$(database)/documents/f/f\($0));" }.joined(separator: " ")
        let reads = (1...9).map { "d\($0)" }.joined(separator: " && ")
        let source = rules("""
            function tenReads() { \(lets) return \(reads) && d1 && exists(/databases/$(database)/documents/f/f11); }
            match /t/{id} { allow get: if tenReads(); }
        """)
        let flags = Dictionary(uniqueKeysWithValues: (1...11).map { ("f/f\($0)", ["on": Value.bool(true)]) })
        #expect(Self.decide(source, lookup: FixtureLookup(flags)) == .allow)
    }

    // MARK: Constructs found in Firebase projects' rules files

    struct Construct: Sendable, CustomTestStringConvertible {
        let name: String
        /// Statements inside `match /databases/{database}/documents`.
        let body: String
        let expected: Outcome
        var testDescription: String { name }
    }

    static let constructs: [Construct] = [
        Construct(name: "return and allow without ';' before a newline or '}'", body: """
            function yes() { return true }
            match /t/{id} {
              allow get: if yes()
              allow list: if false
            }
            """, expected: .allow),
        Construct(name: "functions declared after the matches that call them", body: """
            match /t/{id} { allow get: if later(); }
            function later() { return true; }
            """, expected: .allow),
        Construct(name: "$( ) spanning lines, holding a conditional", body: """
            match /t/{id} {
              allow get: if exists(/databases/$(database)/documents/t/$(
                id < 'm' ? id : 'other'
              ));
            }
            """, expected: .allow),
        Construct(name: "a map literal with string keys, indexed and searched with in", body: """
            function next(from, to) {
              let transitions = {'pending': ['active', 'cancelled'], 'active': ['done']};
              return from in transitions && to in transitions[from];
            }
            match /t/{id} { allow get: if next('pending', 'active'); }
            """, expected: .allow),
        Construct(name: "a parameter named like the timestamp namespace", body: """
            function past(timestamp) { return timestamp is timestamp && timestamp.date() <= request.time.date(); }
            match /t/{id} { allow get: if past(request.time); }
            """, expected: .allow),
        Construct(name: "a let named resource", body: """
            function roleOf(id) {
              let resource = get(/databases/$(database)/documents/t/$(id));
              return resource.data.owner;
            }
            match /t/{id} { allow get: if roleOf(id) == 'alice'; }
            """, expected: .allow),
        Construct(name: "a set's hasAll of a list, and affectedKeys compared with a set", body: """
            function keysOk() {
              let possible = ['owner', 'n', 'title'].toSet();
              return possible.hasAll(resource.data.keys()) && resource.data.diff({'owner': 'alice'}).affectedKeys() == ['n'].toSet();
            }
            match /t/{id} { allow get: if keysOk(); }
            """, expected: .allow),
        Construct(name: "a comment between an allow's condition and the next line's operator", body: """
            match /t/{id} {
              allow get: if true // the first part
                && request.auth != null;
            }
            """, expected: .allow),
        Construct(name: "request.writeFields (removed from Firestore) is an evaluation error", body: """
            match /t/{id} { allow get: if request.writeFields.hasOnly(['n']); }
            """, expected: .error),
        Construct(name: "a string method Firestore lacks (startsWith) is an evaluation error", body: """
            match /t/{id} { allow get: if id.startsWith('doc'); }
            """, expected: .error),
        Construct(name: "a query from rules (firestore.query) is an evaluation error", body: """
            match /t/{id} { allow get: if !firestore.query(/databases/$(database)/documents/t).get().empty(); }
            """, expected: .error),
    ]

    @Test(arguments: constructs)
    func construct(_ row: Construct) {
        let stored = FixtureLookup(["t/doc1": ["owner": .string("alice"), "n": .int(1)]])
        #expect(Self.decide(rules(row.body), lookup: stored) == row.expected)
    }

    // MARK: Bad input

    struct BadFile: Sendable, CustomTestStringConvertible {
        let name: String
        let source: String
        /// Each expected diagnostic as `line:column: message`.
        let diagnostics: [String]
        var testDescription: String { name }
    }

    static let badFiles: [BadFile] = [
        BadFile(name: "a top-level function clashing with one in the service block", source: """
            function f() { return true; }
            service cloud.firestore {
              function f() { return false; }
            }
            """, diagnostics: ["3:3: function 'f' is already declared on line 1; the functions at the top level of the file and those of the service block share one scope"]),
        BadFile(name: "a service block's function clashing with one after the block", source: """
            service cloud.firestore {
              function f() { return false; }
            }
            function f() { return true; }
            """, diagnostics: ["4:1: function 'f' is already declared on line 2; the functions at the top level of the file and those of the service block share one scope"]),
        BadFile(name: "two top-level functions of one name", source: """
            function f() { return true; }
            service cloud.firestore {}
            function f() { return false; }
            """, diagnostics: ["3:1: function 'f' is already declared at the top level of the file"]),
        BadFile(name: "a top-level function called with the wrong arity", source: """
            function owns(uid) { return request.auth.uid == uid; }
            service cloud.firestore {
              match /databases/{database}/documents {
                match /t/{id} { allow get: if owns(); }
              }
            }
            """, diagnostics: ["4:35: function 'owns' takes 1 argument, but 0 are given"]),
        BadFile(name: "a top-level function calling an undeclared one", source: """
            function f() { return g(); }
            service cloud.firestore {}
            """, diagnostics: ["1:23: undeclared function 'g'"]),
        BadFile(name: "a function calling itself", source: """
            service cloud.firestore {
              function down(n) { return n <= 0 || down(n - 1); }
            }
            """, diagnostics: ["2:39: function 'down' calls itself; functions may not recurse"]),
        BadFile(name: "top-level functions calling each other in a cycle", source: """
            function ping() { return pong(); }
            service cloud.firestore {}
            function pong() { return ping(); }
            """, diagnostics: ["1:26: function 'ping' calls itself through other functions (ping -> pong -> ping); functions may not recurse"]),
        BadFile(name: "a cycle through three functions of a match block", source: """
            service cloud.firestore {
              match /databases/{database}/documents {
                function a() { return b(); }
                function b() { return true && c(); }
                function c() { return a(); }
              }
            }
            """, diagnostics: ["3:27: function 'a' calls itself through other functions (a -> b -> c -> a); functions may not recurse"]),
        BadFile(name: "an if statement in a function body", source: """
            function f(d) {
              if (d == null) return false;
              return d.ok;
            }
            service cloud.firestore {}
            """, diagnostics: ["2:3: expected 'let' or 'return' in a function body, found 'if'"]),
        BadFile(name: "a stray statement at the top level", source: """
            allow read: if true;
            service cloud.firestore {}
            """, diagnostics: ["1:1: expected 'service' or 'function' at the top level, found 'allow'"]),
    ]

    @Test(arguments: badFiles)
    func badFileIsRejected(_ row: BadFile) {
        do {
            _ = try compile(row.source, file: "bad.rules")
            Issue.record("compiled")
        } catch let error as RulesCompileError {
            let found = error.diagnostics.map { "\($0.location.line):\($0.location.column): \($0.message)" }
            #expect(found == row.diagnostics)
            #expect(error.description.contains("^"), "each diagnostic shows a caret")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}

import HearthCore
import HearthRules
import Testing

/// `request`, `resource`, `get()` results and document data are converted to rules values only as far as a
/// rule reads them. Each case here evaluates the same expression over such a stored map and over the same
/// map written as a literal (which is built eagerly), and expects the same value or the same error.
@Suite struct LazyMapTests {
    static let data: [String: Value] = [
        "n": .int(1), "f": .double(2.5), "s": .string("x"), "b": .bool(true), "z": .null,
        "m": .map(["a": .int(1), "b": .map(["c": .bool(true)])]),
        "l": .array([.map(["k": .int(1)]), .string("y")]),
        "r": .reference(docPath("t/other")),
        "t": .timestamp(testTime),
    ]
    static let dataLiteral = """
        {'n': 1, 'f': 2.5, 's': 'x', 'b': true, 'z': null, 'm': {'a': 1, 'b': {'c': true}}, 'l': [{'k': 1}, 'y'], \
        'r': /databases/(default)/documents/t/other, 't': request.time}
        """
    static let edited: [String: Value] = [
        "n": .int(2), "f": .double(2.5), "s": .string("x"), "b": .bool(true), "z": .null,
        "m": .map(["a": .int(1), "b": .map(["c": .bool(false)])]),
        "l": .array([.map(["k": .int(1)]), .string("y")]), "new": .string("v"),
        "r": .reference(docPath("t/other")),
        "t": .timestamp(testTime),
    ]
    static let editedLiteral = """
        {'n': 2, 'f': 2.5, 's': 'x', 'b': true, 'z': null, 'm': {'a': 1, 'b': {'c': false}}, 'l': [{'k': 1}, 'y'], \
        'new': 'v', 'r': /databases/(default)/documents/t/other, 't': request.time}
        """

    /// Each stored map and its literal twin.
    static let sources: [(lazy: String, literal: String)] = [
        ("resource.data", dataLiteral),
        ("request.resource.data", editedLiteral),
        ("get(/databases/$(database)/documents/t/doc1).data", dataLiteral),
        ("getAfter(/databases/$(database)/documents/t/doc1).data", editedLiteral),
        ("same(resource.data)", dataLiteral),
        ("bound(resource.data)", dataLiteral),
        ("(true ? resource.data : null)", dataLiteral),
        ("resource", "{'data': \(dataLiteral), 'id': 'doc1', '__name__': /databases/(default)/documents/t/doc1}"),
        ("request.auth", "{'uid': 'alice', 'token': {'email': 'alice@example.com', 'admin': true, 'm': {'x': 1}}}"),
        ("request.auth.token", "{'email': 'alice@example.com', 'admin': true, 'm': {'x': 1}}"),
        ("request", """
            {'method': 'update', 'time': request.time, 'path': /databases/(default)/documents/t/doc1, \
            'auth': {'uid': 'alice', 'token': {'email': 'alice@example.com', 'admin': true, 'm': {'x': 1}}}, \
            'resource': {'data': \(editedLiteral), 'id': 'doc1', '__name__': /databases/(default)/documents/t/doc1}}
            """),
    ]

    /// Expressions over a map `X` that produce a value.
    static let values = [
        "X", "X.keys()", "X.values()", "X.size()", "X.get('m', 0)", "X.get('zz', 7)", "X.get(['m', 'b', 'c'], 0)",
        "X.get(['m', 'zz'], 7)", "X.get(['zz'], 7)", "X.get([], 7)", "X.diff({'n': 1}).affectedKeys()",
        "X.diff(\(dataLiteral)).changedKeys()", "{'n': 1, 'q': 2}.diff(X).removedKeys()", "X.diff(X).unchangedKeys()",
        "'m' in X", "'zz' in X", "'data' in X", "'uid' in X", "X is map", "X is string", "[X]", "{'k': X}",
        "[X].toSet().size()", "[X].hasAll([X])", "X in [X]", "X == X", "X != X", "X == null", "X != null", "null == X",
        "X == 1", "X == {}", "X == []", "debug(X)", "X.keys().hasOnly(['n'])", "X.values().size()",
        "string(X == X)", "[1, X][1]", "{'a': X}.a",
    ]

    /// Expressions over a map `X` whose value depends on which keys it has.
    static let fields = ["n", "m", "l", "r", "t", "z", "data", "uid", "token", "auth", "method", "id", "__name__", "path"]

    static func decide(_ expression: String, lookup: FixtureLookup = lookup) -> RulesDecision {
        let source = rules("""
            function same(x) { return x; }
            function bound(x) { let y = x; return y; }
            match /t/{id} {
              allow update: if \(expression);
            }
        """)
        let program: RulesProgram
        do { program = try compile(source) } catch {
            return .deny(RulesDenial(location: nil, expression: nil, reason: "compile: \(error)"))
        }
        let request = RulesRequest(
            method: .update, path: docPath("t/doc1"),
            auth: RulesAuth(uid: "alice", token: ["email": .string("alice@example.com"), "admin": .bool(true),
                                                  "m": .map(["x": .int(1)])]),
            time: testTime, resource: doc("t/doc1", data), requestResource: doc("t/doc1", edited))
        return program.evaluate(request, lookup: lookup)
    }

    static let lookup = FixtureLookup(["t/doc1": data], after: ["t/doc1": edited])

    /// The denial reason, or "allow".
    static func outcome(_ expression: String) -> String {
        switch decide(expression) {
        case .allow: return "allow"
        case .deny(let denial): return denial.reason
        }
    }

    static let valueCases: [(String, String)] = sources.flatMap { source in
        values.map { template in
            (template.replacingX(with: source.lazy), template.replacingX(with: "(\(source.literal))"))
        }
    }

    @Test(arguments: valueCases)
    func sameValue(_ lazy: String, _ literal: String) {
        #expect(Self.decide("(\(lazy)) == (\(literal))") == .allow, "\(lazy) vs \(literal)")
        #expect(Self.decide("debug(\(lazy)) == (\(literal))") == .allow, "\(lazy) vs \(literal)")
    }

    /// Reading one key, and the errors of reading a missing key or misusing the map, match the literal's.
    static let fieldCases: [(String, String)] = sources.flatMap { source in
        fields.flatMap { field in
            ["X.\(field) == X.\(field)", "X['\(field)'] == X.\(field)", "X.\(field) != null", "X.\(field).size() > 0",
             "X.\(field).keys().size() > 0", "X.get('\(field)', 0) != 0", "X.\(field) is map", "X.\(field).a == 1"]
                .map { ($0.replacingX(with: source.lazy), $0.replacingX(with: "(\(source.literal))")) }
        } + ["X.nope()", "X.keys(1)", "X.get(1, 2) == 2", "X.diff(1)", "X.diff(null)", "X < X", "X + X", "-X", "!X",
             "X[1]", "X[0:1]", "X", "X == 1 && X", "1 in X", "X.missing", "X.missing.deeper", "/a/$(X)/b == null",
             "X.size(1)", "X.get('n') == 1", "X.get(['n', 'x'], 0) == 0", "X.l[0].k == 1", "X.m.b.c",
             "X.get('m', 0).get('b', 0) != 0"]
            .map { ($0.replacingX(with: source.lazy), $0.replacingX(with: "(\(source.literal))")) }
    }

    @Test(arguments: fieldCases)
    func sameOutcome(_ lazy: String, _ literal: String) {
        #expect(Self.outcome(lazy) == Self.outcome(literal), "\(lazy) vs \(literal)")
    }

    /// The converted request and documents compare equal to each other and to their literal forms.
    @Test func crossComparisons() {
        #expect(Self.decide("resource.data == get(/databases/$(database)/documents/t/doc1).data") == .allow)
        #expect(Self.decide("request.resource.data == getAfter(/databases/$(database)/documents/t/doc1).data") == .allow)
        #expect(Self.decide("resource.data != request.resource.data") == .allow)
        #expect(Self.decide("request.resource.data.diff(resource.data).affectedKeys() == ['n', 'm', 'new'].toSet()") == .allow)
        #expect(Self.decide("resource == get(/databases/$(database)/documents/t/doc1)") == .allow)
        #expect(Self.decide("resource.data.r == /databases/(default)/documents/t/other") == .allow)
        #expect(Self.decide("resource.data.t == request.time") == .allow)
        #expect(Self.decide("resource.data.l[0] == {'k': 1}") == .allow)
    }
}

extension String {
    func replacingX(with replacement: String) -> String {
        split(separator: "X", omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

import HearthCore
import HearthRules
import Testing

/// Table-driven tests of every built-in: each expression is the condition of `allow get` on `/t/doc1`
/// for a signed-in alice reading a stored document `{n: 1, s: "x", tags: ["a", "b"]}`.
@Suite struct BuiltinTests {
    static func decide(_ expression: String) -> RulesDecision {
        let source = rules("""
            match /t/{id} {
              allow get: if \(expression);
            }
        """)
        let program: RulesProgram
        do { program = try compile(source) } catch {
            return .deny(RulesDenial(location: nil, expression: nil, reason: "compile: \(error)"))
        }
        let request = RulesRequest(
            method: .get, path: docPath("t/doc1"),
            auth: RulesAuth(uid: "alice", token: ["email": .string("alice@example.com"), "admin": .bool(true)]),
            time: testTime,
            resource: doc("t/doc1", ["n": .int(1), "s": .string("x"), "tags": .array([.string("a"), .string("b")])]))
        return program.evaluate(request, lookup: FixtureLookup())
    }

    static let strings = [
        "'abc'.size() == 3", "'héllo'.size() == 5", "'abc'.matches('a.c')", "!'abcd'.matches('a.c')",
        "'a1b2'.matches('([a-z][0-9])+')", "'x@y.com'.matches('^[^@]+@[^@]+\\\\.[a-z]{2,3}$')",
        "'ABC'.matches('(?i)abc')", "'aaa'.matches('a{2,3}')", "!'aaaa'.matches('a{2,3}')", "'ab'.matches('a|b|ab')",
        "'12'.matches('\\\\d+')", "!'1a'.matches('\\\\d+')", "'a b'.matches('a\\\\sb')", "'abc'.matches('a.*?c')", "'a1_'.matches('[\\\\w]+')", "'a-9'.matches('[a\\\\d-]+')", "!'ab'.matches('[\\\\d]+')",
        "'ABC'.lower() == 'abc'", "'abc'.upper() == 'ABC'", "'  a b  '.trim() == 'a b'",
        "'a,b,,c'.split(',') == ['a', 'b', '', 'c']", "'a1b22c'.split('[0-9]+') == ['a', 'b', 'c']",
        "'aaa'.replace('a', 'b') == 'bbb'", "'a.b.c'.replace('\\\\.', '/') == 'a/b/c'", "'abc'.replace('x*', '-') == '-a-b-c-'",
        "'abc'.toUtf8() == b'abc'", "'é'.toUtf8().size() == 2", "'abc'[1] == 'b'", "'abcdef'[2:4] == 'cd'",
        "'ab' + 'cd' == 'abcd'", "'b' > 'a'", "'a' < 'ab'", "r'\\d' == '\\\\d'",
    ]
    static let lists = [
        "[1, 2, 3].size() == 3", "[1, 2, 3].hasAll([1, 3])", "![1, 2].hasAll([3])", "[1, 2].hasAny([2, 5])",
        "![1, 2].hasAny([])", "[1, 2].hasOnly([1, 2, 3])", "![1, 4].hasOnly([1, 2])", "['a', 'b'].join('-') == 'a-b'",
        "[1].concat([2]) == [1, 2]", "[1, 2, 1, 3].removeAll([1]) == [2, 3]", "[1, 1, 2].toSet().size() == 2",
        "2 in [1, 2]", "!(5 in [1, 2])", "[1, 2, 3][0] == 1", "[1, 2, 3][1:] == [2, 3]", "[1, 2, 3][:2] == [1, 2]",
        "[1] + [2] == [1, 2]", "1 in [1.0]", "[[1]] == [[1.0]]", "resource.data.tags.hasAny(['b'])",
    ]
    static let maps = [
        "{'a': 1}.keys() == ['a']", "{'a': 1, 'b': 2}.values() == [1, 2]", "{'a': 1}.size() == 1",
        "{'a': 1}.get('b', 5) == 5", "{'a': 1}.get('a', 5) == 1", "{'a': {'b': 2}}.get(['a', 'b'], 0) == 2",
        "{'a': {'b': 2}}.get(['a', 'c'], 0) == 0", "'a' in {'a': 1}", "!('b' in {'a': 1})", "{'a': 1}['a'] == 1",
        "{'a': 1}.a == 1", "{'a': 1, 'b': 2} == {'b': 2, 'a': 1.0}", "{'a': 1} != {'a': 2}",
        "{'a': 1, 'b': 2, 'c': 3}.diff({'b': 2, 'c': 4, 'd': 5}).addedKeys() == ['a'].toSet()",
        "{'a': 1, 'b': 2, 'c': 3}.diff({'b': 2, 'c': 4, 'd': 5}).removedKeys() == ['d'].toSet()",
        "{'a': 1, 'b': 2, 'c': 3}.diff({'b': 2, 'c': 4, 'd': 5}).changedKeys() == ['c'].toSet()",
        "{'a': 1, 'b': 2, 'c': 3}.diff({'b': 2, 'c': 4, 'd': 5}).unchangedKeys() == ['b'].toSet()",
        "{'a': 1, 'b': 2, 'c': 3}.diff({'b': 2, 'c': 4, 'd': 5}).affectedKeys() == ['a', 'c', 'd'].toSet()",
        "{'a': 1}.diff({'a': 1}).affectedKeys().size() == 0",
    ]
    static let sets = [
        "[1, 2].toSet().hasAll([1])", "[1, 2].toSet().hasAny([2, 3])", "[1, 2].toSet().hasOnly([1, 2, 3])",
        "[1, 2].toSet().union([3]) == [1, 2, 3].toSet()", "[1, 2].toSet().intersection([2, 3]) == [2].toSet()",
        "[1, 2].toSet().difference([2]) == [1].toSet()", "1 in [1].toSet()", "[1, 2].toSet() == [2, 1].toSet()",
        "[1, 2].toSet().size() == 2", "[1, 1.0].toSet().size() == 1", "['a'].toSet().hasAll(['a'].toSet())",
    ]
    static let timestamps = [
        "timestamp.date(2024, 2, 29).year() == 2024", "timestamp.date(2024, 2, 29).month() == 2",
        "timestamp.date(2024, 2, 29).day() == 29", "timestamp.date(2024, 3, 1).dayOfYear() == 61",
        "timestamp.value(0).dayOfWeek() == 4", "timestamp.date(2026, 11, 22).dayOfWeek() == 7",
        "timestamp.value(90061001).hours() == 1", "timestamp.value(90061001).minutes() == 1",
        "timestamp.value(90061001).seconds() == 1", "timestamp.value(1500).nanos() == 500000000",
        "timestamp.value(1234).toMillis() == 1234", "timestamp.value(-1).toMillis() == -1",
        "timestamp.value(90061000).time() == duration.time(1, 1, 1, 0)",
        "timestamp.value(90061000).date() == timestamp.value(86400000)",
        "timestamp.value(1000) + duration.value(1, 's') == timestamp.value(2000)",
        "duration.value(1, 's') + timestamp.value(1000) == timestamp.value(2000)",
        "timestamp.value(3000) - timestamp.value(1000) == duration.value(2, 's')",
        "timestamp.value(1000) - duration.value(500, 'ms') == timestamp.value(500)",
        "timestamp.value(1) < timestamp.value(2)", "request.time == timestamp.date(2026, 11, 22) + duration.value(10, 'h')",
        "request.time.year() == 2026", "request.time > timestamp.date(2020, 1, 1)",
    ]
    static let durations = [
        "duration.value(90, 'm').seconds() == 5400", "duration.value(1500, 'ms').nanos() == 500000000",
        "duration.value(1500, 'ms').seconds() == 1", "duration.abs(duration.value(-5, 's')) == duration.value(5, 's')",
        "duration.time(1, 2, 3, 4).seconds() == 3723", "duration.time(1, 2, 3, 4).nanos() == 4",
        "duration.value(1, 'w') == duration.value(7, 'd')", "duration.value(1, 'h') > duration.value(59, 'm')",
        "duration.value(2, 'ns').nanos() == 2", "duration.value(1, 'd') == duration.value(24, 'h')",
        "-duration.value(1, 's') == duration.value(-1, 's')",
    ]
    static let math = [
        "math.abs(-2) == 2", "math.abs(-2.5) == 2.5", "math.ceil(1.2) == 2", "math.floor(1.8) == 1",
        "math.floor(-1.5) == -2", "math.round(2.5) == 3", "math.round(-2.5) == -3", "math.round(2.4) == 2",
        "math.sqrt(16) == 4.0", "math.pow(2, 10) == 1024.0", "math.isInfinite(1.0 / 0.0)", "math.isNaN(0.0 / 0.0)",
        "!math.isNaN(1.0)", "!math.isInfinite(1)",
    ]
    static let hashing = [
        "hashing.crc32('abc') == b'\\x35\\x24\\x41\\xc2'", "hashing.crc32c('abc') == b'\\x36\\x4b\\x3f\\xb7'",
        "hashing.md5('abc').toHexString().lower() == '900150983cd24fb0d6963f7d28e17f72'",
        "hashing.sha256('abc').toHexString().lower() == 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'",
        "hashing.sha256(b'').toHexString().lower() == 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'",
        "hashing.md5('').toHexString().lower() == 'd41d8cd98f00b204e9800998ecf8427e'",
        "hashing.sha256('abc').size() == 32", "b'\\x01\\x02'.toBase64() == 'AQI='",
    ]
    static let latlngs = [
        "latlng.value(1, 2).latitude() == 1.0", "latlng.value(1, 2).longitude() == 2.0",
        "latlng.value(0, 0).distance(latlng.value(0, 1)) > 111000", "latlng.value(0, 0).distance(latlng.value(0, 1)) < 111400",
        "latlng.value(1, 2) == latlng.value(1.0, 2.0)",
    ]
    static let conversions = [
        "int('42') == 42", "int(3.9) == 3", "int(-3.9) == -3", "int(7) == 7", "float(1) == 1.0", "float('2.5') == 2.5",
        "string(12) == '12'", "string(true) == 'true'", "string(null) == 'null'", "string(1.5) == '1.5'", "bool('true')",
        "!bool('false')", "path('/databases/x/documents/a/b') == /databases/x/documents/a/b", "debug(3) == 3",
        "string(/a/b) == '/a/b'",
    ]
    /// An interpolated string is one segment, slashes and all; `path()` splits on every slash and keeps empty
    /// pieces. Either way a string cannot name another document than the one it spells.
    static let paths = [
        "(/a/$('b/c'))[1] == 'b/c'", "/a/$('b/c') != /a/b/c", "/a/$('b') == /a/b", "(/a/$(''))[1] == ''",
        "path('a/b') == /a/b", "path('/a/b') == /a/b", "path('a//b') != /a/b", "path('a//b')[1] == ''",
        "path('a/b/') != /a/b", "/a/$(/b/c) == /a/b/c",
    ]
    static let types = [
        "'a' is string", "1 is int", "1.0 is float", "1 is number", "1.5 is number", "true is bool", "null is null",
        "[1] is list", "{} is map", "request.time is timestamp", "duration.value(1, 's') is duration",
        "request.path is path", "latlng.value(0, 0) is latlng", "b'a' is bytes", "[1].toSet() is set",
        "{}.diff({}) is map_diff", "!(1 is string)", "!(1.5 is int)", "resource is map",
    ]
    static let operators = [
        "7 / 2 == 3", "-7 / 2 == -3", "7 % 3 == 1", "-7 % 3 == -1", "7.0 / 2 == 3.5", "1 + 1.5 == 2.5", "1 == 1.0",
        "2 > 1.5", "(true ? 1 : 2) == 1", "(false ? 1 : 2) == 2", "1 + 2 * 3 == 7", "(1 + 2) * 3 == 9", "2 - 3 - 4 == -5",
        "!(1 != 1)", "-9223372036854775807 - 1 == -9223372036854775808", "0x10 == 16", "1e3 == 1000",
        "null == null", "null != 0", "'1' != 1", "[] == []", "b'a' < b'b'", "!(0.0 / 0.0 == 0.0 / 0.0)",
    ]
    static let request = [
        "request.method == 'get'", "request.auth.uid == 'alice'", "request.auth.token.email == 'alice@example.com'",
        "request.auth.token.admin", "request.path == /databases/$(database)/documents/t/doc1",
        "request.path == /databases/(default)/documents/t/$(id)", "request.path[4] == 'doc1'",
        "resource.data.n == 1", "resource.data.s == 'x'", "resource.id == 'doc1'",
        "resource.__name__ == /databases/(default)/documents/t/doc1", "id == 'doc1'", "database == '(default)'",
        "request.resource == null", "exists(/databases/$(database)/documents/t/doc1) == false",
        "get(/databases/$(database)/documents/t/missing) == null", "!existsAfter(/databases/$(database)/documents/t/doc1)",
        "getAfter(/databases/$(database)/documents/t/missing) == null",
    ]

    static let allTrue = strings + lists + maps + sets + timestamps + durations + math + hashing + latlngs
        + conversions + paths + types + operators + request

    @Test(arguments: allTrue)
    func builtinHolds(_ expression: String) {
        #expect(Self.decide(expression) == .allow, "\(expression)")
    }

    /// Each of these fails with an evaluation error, which denies.
    static let errors = [
        "1 / 0 == 0", "1 % 0 == 0", "9223372036854775807 + 1 > 0", "-9223372036854775807 - 2 < 0", "resource.data.missing == 1",
        "null.x == 1", "[1][5] == 1", "[1][-1] == 1", "'a' < 1", "int('x') == 0", "'a'.nope()", "'a'.matches('(')",
        "1 && true", "math.sqrt(-1) > 0", "{'a': 1}.b == 1", "timestamp.date(2023, 2, 29) != null",
        "request.auth.uid.size() > 0 && 1 / 0 == 1", "1 / 0 == 1 || false", "true && 1 / 0 == 1",
        "'abc'[1:9] == 'bc'", "undefinedVariable == 1", "duration.value(1, 'y') != null", "duration.value(-9223372036854775808, 's') != null",
        "duration.value(9223372036854775807, 'w') != null", "timestamp.value(-9223372036854775808) != null", "get(/databases/x/documents/t) == null",
        "int(1e300) == 0", "{1: 2} == {}", "1 in 'abc'", "[1, 2].join(',') == '1,2'", "'a' + 1 == 'a1'",
        "1 ? true : false", "bool('yes')", "resource.data.s.size() > 0 && resource.data.s.matches('[')",
        // A document id cannot hold a slash or be empty: such a path names no document, and reading it is an error.
        "exists(/databases/$(database)/documents/t/$('doc1/'))", "!exists(/databases/$(database)/documents/t/$('/doc1'))",
        "!exists(/databases/$(database)/documents/t/$('doc1//'))", "exists(/databases/$(database)/documents/$('t/doc1'))",
        "get(/databases/$(database)/documents/t/$('')) == null", "exists(path('/databases/(default)/documents/t//doc1'))",
        "exists(path('/databases/(default)/documents/t/doc1/'))",
    ]

    @Test(arguments: errors)
    func errorDenies(_ expression: String) {
        let decision = Self.decide(expression)
        guard case .deny(let denial) = decision else {
            Issue.record("\(expression) should deny")
            return
        }
        #expect(denial.reason.hasPrefix("error:"), "\(expression): \(denial.reason)")
    }

    /// `&&` and `||` short-circuit past errors in either operand when the other decides.
    static let shortCircuits = [
        "!(false && 1 / 0 == 1)", "true || 1 / 0 == 1", "1 / 0 == 1 || true", "!(1 / 0 == 1 && false)",
        "true ? true : 1 / 0 == 1", "false ? 1 / 0 == 1 : true", "resource.data.missing == 1 || resource.data.n == 1",
        "!('x' in resource.data) || resource.data.x > 0",
    ]

    @Test(arguments: shortCircuits)
    func shortCircuit(_ expression: String) {
        #expect(Self.decide(expression) == .allow, "\(expression)")
    }

    @Test func falseConditionSaysWhichRule() {
        guard case .deny(let denial) = Self.decide("1 == 2") else { Issue.record("expected deny"); return }
        #expect(denial.location == "test.rules:5:7")
        #expect(denial.expression == "1 == 2")
        #expect(denial.reason == "condition is false")
    }

    @Test func nonBooleanConditionDenies() {
        guard case .deny(let denial) = Self.decide("1") else { Issue.record("expected deny"); return }
        #expect(denial.reason == "condition is int, not bool")
    }
}

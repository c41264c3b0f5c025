import Foundation
import HearthCore
@testable import HearthEngine
import HearthRules
import HearthTesting
import Testing

/// Rules are not filters, and deciding a query must be sound: when the `list` of a query is allowed (the
/// condition evaluated over the query's constraints, with unknowns for everything the query does not pin),
/// the same condition must hold for every document the query could return. Seeded random conditions and
/// queries over a small universe of documents (every combination of three fields, each possibly missing)
/// check it: for each allowed query, every document of the universe the query matches is decided again as
/// a `get` with the document as `resource`.
@Suite struct RulesSoundnessTests {
    static let ints: [Value] = [.int(0), .int(1), .int(2), .int(3)]
    static let strings: [Value] = [.string("x"), .string("y"), .string("z")]
    static let bools: [Value] = [.bool(true), .bool(false)]

    /// Every document with `a` (int), `b` (string) and `c` (bool), each present or missing: 60 documents.
    static let universe: [Document] = {
        var docs: [Document] = []
        let time = Timestamp(microseconds: 1_700_000_000_000_000)
        for a in ints.map(Optional.some) + [nil] {
            for b in strings.map(Optional.some) + [nil] {
                for c in bools.map(Optional.some) + [nil] {
                    var fields: [String: Value] = [:]
                    fields["a"] = a
                    fields["b"] = b
                    fields["c"] = c
                    let path = DocumentPath(uncheckedSegments: ["t", "d\(docs.count)"])
                    docs.append(Document(path: path, fields: fields, createTime: time, updateTime: time))
                }
            }
        }
        return docs
    }()

    static func literal(_ v: Value) -> String {
        switch v {
        case .int(let i): return String(i)
        case .string(let s): return "'\(s)'"
        case .bool(let b): return b ? "true" : "false"
        default: return "null"
        }
    }

    /// A random condition over `resource.data`, in the shapes rules files use.
    static func condition(_ rng: inout SeededGenerator, depth: Int = 0) -> String {
        let leafOnly = depth >= 3
        switch Int.random(in: 0..<(leafOnly ? 9 : 13), using: &rng) {
        case 0: return "resource.data.a == \(literal(ints.randomElement(using: &rng)!))"
        case 1: return "resource.data.a \(["<", "<=", ">", ">="].randomElement(using: &rng)!) \(Int.random(in: 0...3, using: &rng))"
        case 2: return "resource.data.a in [\(ints.shuffled(using: &rng).prefix(2).map(literal).joined(separator: ", "))]"
        case 3: return "resource.data.b == \(literal(strings.randomElement(using: &rng)!))"
        case 4: return "resource.data.b != \(literal(strings.randomElement(using: &rng)!))"
        case 5: return "resource.data.c == \(literal(bools.randomElement(using: &rng)!))"
        case 6: return "resource.data.c"
        case 7: return ["'a' in resource.data", "resource.data.a is int", "resource.data.b is string"].randomElement(using: &rng)!
        case 8:
            return ["true", "false", "resource.data.a + 1 > 2", "resource.data.b.size() == 1",
                    "resource.data.get('a', 5) == 5", "resource.data.get('c', true)", "resource.data.keys().hasAll(['a'])",
                    "resource.data.size() > 1", "resource.data.b.matches('[xy]')", "resource.data.a == resource.data.a",
                    "resource.id != 'd1'", "string(resource.data.a) == '1'", "resource.data.values().hasAny([1])",
                    "resource.data.keys().hasOnly(['a', 'b'])", "resource.data.a in [0, 1] == false",
                    "resource.data.diff({'a': 1}).affectedKeys().size() == 0", "resource.data.b in 'xyz'",
                    "[resource.data.a, 1].hasAll([1])", "{'k': resource.data.b}.k == 'x'",
                    "ignores(resource.data.a)", "bindsA(resource.data) > 1", "isOne(resource.data.a)",
                    "!ignores(resource.data.c)", "resource.data.b == request.auth.uid", "resource != null",
                    "exists(/databases/$(database)/documents/t/$(resource.data.b)) == false",
                    "resource.data.get('b', 'x') == request.auth.uid", "resource.data.a is int || resource.data.b == 'x'",
                    "resource.data.c == true ? true : false"].randomElement(using: &rng)!
        case 9: return "!(\(condition(&rng, depth: depth + 1)))"
        case 10: return "(\(condition(&rng, depth: depth + 1)) || \(condition(&rng, depth: depth + 1)))"
        case 11:
            return "(\(condition(&rng, depth: depth + 1)) ? \(condition(&rng, depth: depth + 1)) : \(condition(&rng, depth: depth + 1)))"
        default: return "(\(condition(&rng, depth: depth + 1)) && \(condition(&rng, depth: depth + 1)))"
        }
    }

    /// A random query filter over the same fields, as query JSON.
    static func filter(_ rng: inout SeededGenerator, depth: Int = 0) -> JSON {
        func field(_ name: String, _ op: String, _ value: JSON) -> JSON {
            .object([("field", .string(name)), ("op", .string(op)), ("value", value)])
        }
        func json(_ v: Value) -> JSON {
            switch v {
            case .int(let i): return .int(i)
            case .string(let s): return .string(s)
            case .bool(let b): return .bool(b)
            default: return .null
            }
        }
        switch Int.random(in: 0..<(depth >= 2 ? 6 : 8), using: &rng) {
        case 0: return field("a", "==", json(ints.randomElement(using: &rng)!))
        case 1: return field("b", "==", json(strings.randomElement(using: &rng)!))
        case 2: return field("c", "==", json(bools.randomElement(using: &rng)!))
        case 3: return field("a", "in", .array(ints.shuffled(using: &rng).prefix(Int.random(in: 1...3, using: &rng)).map(json)))
        case 4: return field("b", "in", .array(strings.shuffled(using: &rng).prefix(2).map(json)))
        case 5: return field("a", [">=", "<", ">", "<="].randomElement(using: &rng)!, .int(Int64.random(in: 0...3, using: &rng)))
        case 6: return .object([("or", .array((0..<2).map { _ in filter(&rng, depth: depth + 1) }))])
        default: return .object([("and", .array((0..<2).map { _ in filter(&rng, depth: depth + 1) }))])
        }
    }

    @Test(arguments: [20261123 as UInt64, 1, 2, 3, 4, 5, 6, 7])
    func anAllowedQueryOnlyReturnsDocumentsTheConditionAllows(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let time = Timestamp(microseconds: 1_700_000_000_000_000)
        let auth = RulesAuth(uid: "x")
        var allowedQueries = 0, checkedDocuments = 0
        for _ in 0..<300 {
            let cond = Self.condition(&rng)
            let source = """
                rules_version = '2';
                service cloud.firestore {
                  match /databases/{database}/documents {
                    function ignores(v) { return true; }
                    function isOne(v) { return v == 1; }
                    function bindsA(d) { let x = d.a; return x; }
                    match /t/{id} {
                      allow get, list: if \(cond);
                    }
                  }
                }
                """
            let program = try RulesProgram.compile(source: source, fileName: "soundness.rules")
            for _ in 0..<20 {
                let json = JSON.object([("from", .string("t")), ("where", Self.filter(&rng))])
                // Some random filters are invalid queries (two inequality fields, too many disjunctions): skip them.
                guard let query = try? Query(json: json) else { continue }
                let constraints = Database.listConstraints(for: query)
                let list = RulesRequest(method: .list, path: DocumentPath(uncheckedSegments: ["t", "*"]), auth: auth,
                                        time: time, query: constraints)
                guard program.evaluate(list, lookup: EmptyDocumentLookup()).isAllowed else { continue }
                allowedQueries += 1
                for doc in Self.universe where query.matches(doc) {
                    checkedDocuments += 1
                    let get = RulesRequest(method: .get, path: doc.path, auth: auth, time: time, resource: doc)
                    let decision = program.evaluate(get, lookup: EmptyDocumentLookup())
                    #expect(decision.isAllowed, """
                        unsound: `\(cond)` allowed the query \(json.text), which returns \(doc.fields), \
                        for which the condition does not hold (\(decision))
                        """)
                    if !decision.isAllowed { return }
                }
            }
        }
        // The property is not vacuous: many queries were allowed and many documents checked.
        #expect(allowedQueries > 300)
        #expect(checkedDocuments > 3000)
    }
}

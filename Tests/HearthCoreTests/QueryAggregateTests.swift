import Testing
import HearthCore

@Suite("Aggregations")
struct QueryAggregateTests {
    func compute(_ aggregations: String, where filter: String = "[]", limit: String = "null",
                 _ docs: [Document]) throws -> [String: Value] {
        let text = #"{"query": {"from": "c", "where": \#(filter), "limit": \#(limit)}, "aggregations": \#(aggregations)}"#
        return try AggregateQuery(json: JSON.parse(text)).compute(over: docs)
    }

    let docs = [
        QT.doc("c/1", #"{"votes": 3, "score": 1.5, "kind": "a"}"#),
        QT.doc("c/2", #"{"votes": 4, "score": "high", "kind": "a"}"#),
        QT.doc("c/3", #"{"votes": "many", "kind": "b"}"#),
        QT.doc("c/4", #"{"kind": "b"}"#),
        QT.doc("x/5", #"{"votes": 100}"#),
    ]

    @Test func countSumAvg() throws {
        let r = try compute(#"{"n": {"count": {}}, "s": {"sum": "votes"}, "a": {"avg": "votes"}, "f": {"sum": "score"}}"#, docs)
        #expect(r["n"] == .int(4))
        #expect(r["s"] == .int(7))  // integers stay integers; "many" and the missing field are ignored
        #expect(r["a"] == .double(3.5))  // the mean is a double
        #expect(r["f"] == .double(1.5))
    }

    @Test func countUpToAndFilters() throws {
        #expect(try compute(#"{"n": {"count": {"upTo": 2}}}"#, docs)["n"] == .int(2))
        #expect(try compute(#"{"n": {"count": {"upTo": 10}}}"#, docs)["n"] == .int(4))
        #expect(try compute(#"{"n": {"count": {}}}"#, where: #"[["kind", "==", "b"]]"#, docs)["n"] == .int(2))
        #expect(try compute(#"{"n": {"count": {}}, "s": {"sum": "votes"}}"#, limit: "1", docs) == ["n": .int(1), "s": .int(3)])
    }

    @Test func emptyAndNonNumeric() throws {
        let r = try compute(#"{"n": {"count": {}}, "s": {"sum": "kind"}, "a": {"avg": "kind"}}"#, docs)
        #expect(r == ["n": .int(4), "s": .int(0), "a": .null])
        let none = try compute(#"{"n": {"count": {}}, "s": {"sum": "votes"}, "a": {"avg": "votes"}}"#, [])
        #expect(none == ["n": .int(0), "s": .int(0), "a": .null])
    }

    @Test func sumTyping() throws {
        func sum(_ values: [String]) throws -> Value {
            let d = values.enumerated().map { QT.doc("c/\($0.offset)", #"{"v": \#($0.element)}"#) }
            return try compute(#"{"s": {"sum": "v"}}"#, d)["s"]!
        }
        #expect(try sum(["1", "2"]) == .int(3))
        #expect(try sum(["1", "2.0"]) == .double(3.0))  // any double makes the sum a double
        #expect(try sum(["9223372036854775807", "1"]) == .double(9_223_372_036_854_775_808.0))  // overflow → double
        #expect(try sum(["-9223372036854775808", "-1"]) == .double(-9_223_372_036_854_775_809.0))
        // A transient overflow that comes back in range stays an exact integer.
        #expect(try sum(["9223372036854775807", "1", "-2"]) == .int(9_223_372_036_854_775_806))
        #expect(try sum(["1", #"{"$double": "NaN"}"#]).isNaN)
        #expect(try sum([#"{"$double": "Infinity"}"#, #"{"$double": "-Infinity"}"#]).isNaN)
        #expect(try sum([#"{"$double": "Infinity"}"#, "5"]) == .double(.infinity))
    }

    @Test func avgTyping() throws {
        func avg(_ values: [String]) throws -> Value {
            let d = values.enumerated().map { QT.doc("c/\($0.offset)", #"{"v": \#($0.element)}"#) }
            return try compute(#"{"a": {"avg": "v"}}"#, d)["a"]!
        }
        #expect(try avg(["1", "2"]) == .double(1.5))
        #expect(try avg(["9223372036854775807", "9223372036854775807"]) == .double(9_223_372_036_854_775_807.0))
        #expect(try avg(["1", #"{"$double": "NaN"}"#]).isNaN)
        #expect(try avg([#""x""#, "true", "null"]) == .null)
    }

    @Test(arguments: [
        (#"{"query": {"from": "c"}, "aggregations": {"n": {"max": "v"}}}"#, "Unknown aggregation 'max'"),
        (#"{"query": {"from": "c"}, "aggregations": {"n": {"count": {"upTo": 0}}}}"#, "upTo must be greater than zero"),
        (#"{"query": {"from": "c"}, "aggregations": {"n": {"count": {"atMost": 3}}}}"#, "'atMost'"),
        (#"{"query": {"from": "c"}, "aggregations": {}}"#, "At least one aggregation"),
        (#"{"query": {"from": "c"}, "aggregations": {"a": {"count": {}}, "b": {"count": {}}, "c": {"count": {}}, "d": {"count": {}}, "e": {"count": {}}, "f": {"count": {}}}}"#, "the limit is 5"),
        (#"{"query": {"from": "c"}, "aggregations": {"s": {"sum": "__name__"}}}"#, "__name__"),
        (#"{"query": {"from": "c"}, "aggregations": {"s": {"sum": 3}}}"#, "field path string"),
        (#"{"query": {"from": "c", "limit": 0}, "aggregations": {"n": {"count": {}}}}"#, "positive"),
        (#"{"query": {"from": "c"}, "aggregations": {"n": {"count": {}}}, "extra": 1}"#, "'extra'"),
        (#"{"aggregations": {"n": {"count": {}}}}"#, "'query' is required"),
    ] as [(String, String)])
    func invalidAggregation(text: String, reason: String) {
        do {
            _ = try AggregateQuery(json: JSON.parse(text))
            Issue.record("\(text) should fail")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains(reason), "\(error.message) lacks \(reason)")
        }
    }
}

import Testing
import HearthCore

/// The reference evaluator against hand-written expectations from Firestore's documentation.
@Suite("Query evaluation")
struct QueryEvaluationTests {
    let cities = QT.cities

    // MARK: Firestore's documented examples over the sample cities

    @Test func simpleQueries() {
        #expect(QT.ids(#"{"from": "cities", "where": [["state", "==", "CA"]]}"#, cities) == ["LA", "SF"])
        #expect(QT.ids(#"{"from": "cities", "where": [["capital", "==", true]]}"#, cities) == ["BJ", "DC", "TOK"])
        #expect(QT.ids(#"{"from": "cities", "where": [["population", "<", 100000]]}"#, cities) == [])
        #expect(QT.ids(#"{"from": "cities", "where": [["name", ">=", "San Francisco"]]}"#, cities) == ["SF", "TOK", "DC"])
        #expect(QT.ids(#"{"from": "cities", "where": [["capital", "!=", false]]}"#, cities) == ["BJ", "DC", "TOK"])
    }

    @Test func inAndArrayOperators() {
        #expect(QT.ids(#"{"from": "cities", "where": [["country", "in", ["USA", "Japan"]]]}"#, cities) == ["DC", "LA", "SF", "TOK"])
        #expect(QT.ids(#"{"from": "cities", "where": [["country", "not-in", ["USA", "Japan"]]]}"#, cities) == ["BJ"])
        #expect(QT.ids(#"{"from": "cities", "where": [["regions", "array-contains", "west_coast"]]}"#, cities) == ["LA", "SF"])
        #expect(QT.ids(#"{"from": "cities", "where": [["regions", "array-contains-any", ["west_coast", "east_coast"]]]}"#, cities)
                == ["DC", "LA", "SF"])
        // `in` with arrays matches the whole array exactly.
        #expect(QT.ids(#"{"from": "cities", "where": [["regions", "in", [["west_coast"], ["east_coast"]]]]}"#, cities) == ["DC"])
    }

    @Test func compoundAndOr() {
        #expect(QT.ids(#"{"from": "cities", "where": [["state", "==", "CA"], ["population", "<", 1000000]]}"#, cities) == ["SF"])
        #expect(QT.ids(#"{"from": "cities", "where": {"or": [["capital", "==", true], ["population", ">=", 1000000]]}}"#, cities)
                == ["DC", "LA", "TOK", "BJ"])
        #expect(QT.ids(#"""
            {"from": "cities", "where": {"and": [["state", "==", "CA"],
                {"or": [["capital", "==", true], ["population", ">=", 1000000]]}]}}
            """#, cities) == ["LA"])
    }

    @Test func orderAndLimit() {
        #expect(QT.ids(#"{"from": "cities", "orderBy": ["name"], "limit": 3}"#, cities) == ["BJ", "LA", "SF"])
        #expect(QT.ids(#"{"from": "cities", "orderBy": [["name", "desc"]], "limit": 3}"#, cities) == ["DC", "TOK", "SF"])
        #expect(QT.ids(#"{"from": "cities", "orderBy": ["state", ["population", "desc"]]}"#, cities) == ["BJ", "TOK", "DC", "LA", "SF"])
        #expect(QT.ids(#"{"from": "cities", "where": [["population", ">", 100000]], "orderBy": ["population"], "limit": 2}"#, cities)
                == ["DC", "SF"])
        // An inequality on one field with an order on another is allowed now; the inequality field follows.
        #expect(QT.ids(#"{"from": "cities", "where": [["population", ">", 700000]], "orderBy": ["country"]}"#, cities)
                == ["BJ", "TOK", "SF", "LA"])
        #expect(QT.ids(#"{"from": "cities", "orderBy": ["name"], "offset": 1, "limit": 2}"#, cities) == ["LA", "SF"])
    }

    @Test func cursors() {
        let q = #"{"from": "cities", "orderBy": ["population"], "#
        #expect(QT.ids(q + #""startAt": [1000000]}"#, cities) == ["LA", "TOK", "BJ"])
        #expect(QT.ids(q + #""endAt": [1000000]}"#, cities) == ["DC", "SF"])
        #expect(QT.ids(q + #""startAt": [860000]}"#, cities) == ["SF", "LA", "TOK", "BJ"])
        #expect(QT.ids(q + #""startAfter": [860000]}"#, cities) == ["LA", "TOK", "BJ"])
        #expect(QT.ids(q + #""endBefore": [3900000]}"#, cities) == ["DC", "SF"])
        #expect(QT.ids(q + #""endAt": [3900000]}"#, cities) == ["DC", "SF", "LA"])
        // A document cursor takes that document's position (Firestore's startAfter(snapshot)).
        #expect(QT.ids(q + #""startAfter": "cities/SF"}"#, cities) == ["LA", "TOK", "BJ"])
        #expect(QT.ids(q + #""startAt": {"$ref": "cities/SF"}, "endBefore": "cities/BJ"}"#, cities) == ["SF", "LA", "TOK"])
        // Descending order flips what "after" means.
        #expect(QT.ids(#"{"from": "cities", "orderBy": [["population", "desc"]], "startAfter": [3900000]}"#, cities) == ["SF", "DC"])
    }

    @Test func prefixAndMultiFieldCursors() {
        let docs = [
            QT.doc("c/a", #"{"state": "MO", "city": "Springfield"}"#),
            QT.doc("c/b", #"{"state": "MA", "city": "Springfield"}"#),
            QT.doc("c/c", #"{"state": "WI", "city": "Springfield"}"#),
            QT.doc("c/d", #"{"state": "MO", "city": "Union"}"#),
            QT.doc("c/e", #"{"state": "AK", "city": "Anchorage"}"#),
        ]
        let q = #"{"from": "c", "orderBy": ["city", "state"], "#
        #expect(QT.ids(q + #""startAt": ["Springfield", "MO"]}"#, docs) == ["a", "c", "d"])
        #expect(QT.ids(q + #""startAfter": ["Springfield"]}"#, docs) == ["d"])
        #expect(QT.ids(q + #""startAt": ["Springfield"]}"#, docs) == ["b", "a", "c", "d"])
        #expect(QT.ids(q + #""endBefore": ["Springfield", "MO"]}"#, docs) == ["e", "b"])
        // The `__name__` position breaks ties between equal order values.
        let same = [QT.doc("c/x", #"{"n": 1}"#), QT.doc("c/y", #"{"n": 1}"#), QT.doc("c/z", #"{"n": 1}"#)]
        #expect(QT.ids(#"{"from": "c", "orderBy": ["n"], "startAfter": [1, "x"]}"#, same) == ["y", "z"])
        #expect(QT.ids(#"{"from": "c", "orderBy": ["n"], "startAfter": [1, "c/y"]}"#, same) == ["z"])
        #expect(QT.ids(#"{"from": "c", "startAt": ["y"]}"#, same) == ["y", "z"])
    }

    @Test func cursorDocumentErrors() throws {
        let q = try Query(jsonText: #"{"from": "cities", "orderBy": ["state"], "startAt": "cities/NOPE"}"#)
        #expect(throws: HearthError.self) { try q.run(over: cities) }
        let lacking = try Query(jsonText: #"{"from": "cities", "orderBy": ["altitude"], "startAt": "cities/SF"}"#)
        do {
            _ = try lacking.run(over: cities)
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains("'altitude' (used as the orderBy) does not exist"))
        }
    }

    @Test func limitToLast() {
        let q = #"{"from": "cities", "orderBy": ["population"], "limitToLast": 2"#
        #expect(QT.ids(q + "}", cities) == ["TOK", "BJ"])
        #expect(QT.ids(q + #", "endBefore": [9000000]}"#, cities) == ["SF", "LA"])
        #expect(QT.ids(q + #", "startAfter": [9000000]}"#, cities) == ["BJ"])
        #expect(QT.ids(#"{"from": "cities", "orderBy": [["name", "desc"]], "limitToLast": 3}"#, cities) == ["SF", "LA", "BJ"])
        // offset counts from the back, as the reversed query runs.
        #expect(QT.ids(q + #", "offset": 1}"#, cities) == ["LA", "TOK"])
    }

    @Test func selectProjects() throws {
        let q = try Query(jsonText: #"{"from": "c", "select": ["a", "m.x", "missing"]}"#)
        let out = try q.run(over: [QT.doc("c/1", #"{"a": 1, "b": 2, "m": {"x": 1, "y": 2}}"#)])
        #expect(out.first?.fields == ["a": .int(1), "m": .map(["x": .int(1)])])
        let none = try Query(jsonText: #"{"from": "c", "select": []}"#).run(over: [QT.doc("c/1", #"{"a": 1}"#)])
        #expect(none.first?.fields == [:] && none.first?.path.id == "1")
    }

    @Test func collectionGroupQueries() {
        let docs = [
            QT.doc("landmarks/l1", #"{"type": "museum"}"#),
            QT.doc("cities/SF/landmarks/l2", #"{"type": "museum"}"#),
            QT.doc("cities/SF/landmarks/l3", #"{"type": "bridge"}"#),
            QT.doc("cities/TOK/landmarks/l4", #"{"type": "museum"}"#),
            QT.doc("cities/TOK/parks/l5", #"{"type": "museum"}"#),
        ]
        #expect(QT.ids(#"{"from": {"collectionGroup": "landmarks"}, "where": [["type", "==", "museum"]]}"#, docs)
                == ["l2", "l4", "l1"])
        #expect(QT.ids(#"{"from": {"collectionGroup": "landmarks", "under": "cities/SF"}}"#, docs) == ["l2", "l3"])
        #expect(QT.ids(#"{"from": "cities/SF/landmarks"}"#, docs) == ["l2", "l3"])
    }

    // MARK: type semantics

    /// One document per interesting value of field `v`.
    let typed: [Document] = [
        QT.doc("t/int1", #"{"v": 1}"#),
        QT.doc("t/dbl1", #"{"v": 1.0}"#),
        QT.doc("t/int2", #"{"v": 2}"#),
        QT.doc("t/str2", #"{"v": "2"}"#),
        QT.doc("t/nan", #"{"v": {"$double": "NaN"}}"#),
        QT.doc("t/null", #"{"v": null}"#),
        QT.doc("t/missing", #"{"w": 1}"#),
        QT.doc("t/negzero", #"{"v": -0.0}"#),
        QT.doc("t/zero", #"{"v": 0}"#),
        QT.doc("t/true", #"{"v": true}"#),
        QT.doc("t/arr", #"{"v": [1, 2]}"#),
        QT.doc("t/arrdbl", #"{"v": [1.0, "x", null]}"#),
        QT.doc("t/map", #"{"v": {"x": 1}}"#),
        QT.doc("t/ninf", #"{"v": {"$double": "-Infinity"}}"#),
    ]

    func matching(_ op: String, _ value: String) -> Set<String> {
        Set(QT.ids(#"{"from": "t", "where": [["v", "\#(op)", \#(value)]]}"#, typed))
    }

    @Test func equality() {
        #expect(matching("==", "1") == ["int1", "dbl1"])
        #expect(matching("==", "1.0") == ["int1", "dbl1"])
        #expect(matching("==", "0") == ["zero", "negzero"])
        #expect(matching("==", #"{"$double": "NaN"}"#) == ["nan"])
        #expect(matching("==", "null") == ["null"])
        #expect(matching("==", "[1.0, 2]") == ["arr"])
        #expect(matching("==", #"{"x": 1.0}"#) == ["map"])
    }

    @Test func ranges() {
        #expect(matching(">", "0") == ["int1", "dbl1", "int2"])
        #expect(matching("<", "1") == ["zero", "negzero", "ninf"])
        #expect(matching("<=", "1") == ["zero", "negzero", "ninf", "int1", "dbl1"])
        #expect(matching(">=", #""""#) == ["str2"])
        #expect(matching(">", "false") == ["true"])
        #expect(matching("<", "[1, 3]") == ["arr"])
        #expect(matching(">", #"{}"#) == ["map"])
    }

    @Test func notEqualAndNotIn() {
        // `!=` matches every existing value that differs, null included, across types.
        #expect(matching("!=", "1") == ["int2", "str2", "nan", "null", "negzero", "zero", "true", "arr", "arrdbl", "map", "ninf"])
        #expect(matching("!=", "null") == ["int1", "dbl1", "int2", "str2", "nan", "negzero", "zero", "true", "arr", "arrdbl", "map", "ninf"])
        #expect(matching("!=", #"{"$double": "NaN"}"#) == ["int1", "dbl1", "int2", "str2", "null", "negzero", "zero", "true", "arr", "arrdbl", "map", "ninf"])
        // `not-in` also leaves out null; a list holding null matches nothing.
        #expect(matching("not-in", "[1, 2]") == ["str2", "nan", "negzero", "zero", "true", "arr", "arrdbl", "map", "ninf"])
        #expect(matching("not-in", "[null]") == [])
        #expect(matching("not-in", #"[{"$double": "NaN"}, 0]"#) == ["int1", "dbl1", "int2", "str2", "true", "arr", "arrdbl", "map", "ninf"])
    }

    @Test func inAndArrays() {
        #expect(matching("in", "[1, null]") == ["int1", "dbl1", "null"])
        #expect(matching("in", #"[{"$double": "NaN"}]"#) == ["nan"])
        #expect(matching("array-contains", "1") == ["arr", "arrdbl"])
        #expect(matching("array-contains", "2.0") == ["arr"])
        #expect(matching("array-contains", "null") == ["arrdbl"])
        #expect(matching("array-contains-any", #"["x", 2]"#) == ["arr", "arrdbl"])
    }

    @Test func orderByLeavesOutDocumentsLackingTheField() {
        let ids = QT.ids(#"{"from": "t", "orderBy": ["v"]}"#, typed)
        #expect(!ids.contains("missing"))
        // Firestore's cross-type order: null, booleans, numbers (NaN first), strings, arrays, maps.
        #expect(ids == ["null", "true", "nan", "ninf", "negzero", "zero", "dbl1", "int1", "int2", "str2", "arr", "arrdbl", "map"])
        let desc = QT.ids(#"{"from": "t", "orderBy": [["v", "desc"]]}"#, typed)
        #expect(desc == ["map", "arrdbl", "arr", "str2", "int2", "int1", "dbl1", "zero", "negzero", "ninf", "nan", "true", "null"])
    }

    @Test func inequalityInsideOrStillOrders() {
        // Firestore adds `a` to the order, so documents lacking `a` are left out even when `b` matches.
        let docs = [QT.doc("c/1", #"{"b": 1}"#), QT.doc("c/2", #"{"a": 5, "b": 2}"#), QT.doc("c/3", #"{"a": 0, "b": 1}"#)]
        #expect(QT.ids(#"{"from": "c", "where": {"or": [["a", ">", 1], ["b", "==", 1]]}}"#, docs) == ["3", "2"])
    }

    @Test func documentNameFilters() {
        #expect(QT.ids(#"{"from": "cities", "where": [["__name__", ">", "LA"]]}"#, cities) == ["SF", "TOK"])
        #expect(QT.ids(#"{"from": "cities", "where": [["__name__", "in", ["DC", "cities/BJ"]]]}"#, cities) == ["BJ", "DC"])
        #expect(QT.ids(#"{"from": "cities", "where": [["__name__", "!=", "DC"]], "orderBy": [["__name__", "desc"]]}"#, cities)
                == ["TOK", "SF", "LA", "BJ"])
    }

    @Test func nestedFields() {
        let docs = [QT.doc("c/1", #"{"m": {"x": 1}}"#), QT.doc("c/2", #"{"m": {"x": 2}}"#), QT.doc("c/3", #"{"m": 5}"#),
                    QT.doc("c/4", #"{"a.b": 1, "a": {"b": 2}}"#)]
        #expect(QT.ids(#"{"from": "c", "where": [["m.x", ">=", 1]], "orderBy": [["m.x", "desc"]]}"#, docs) == ["2", "1"])
        #expect(QT.ids(#"{"from": "c", "where": [["a.b", "==", 2]]}"#, docs) == ["4"])
        #expect(QT.ids(#"{"from": "c", "where": [["`a.b`", "==", 1]]}"#, docs) == ["4"])
    }
}

import Testing
import HearthCore

@Suite("Query parsing")
struct QueryParsingTests {
    @Test func longFormParses() throws {
        let q = try Query(jsonText: """
            {"from": "projects/p1/rounds",
             "where": {"and": [{"field": "category", "op": "==", "value": "love"},
                               {"or": [{"field": "votes", "op": ">=", "value": 3}, {"field": "pinned", "op": "==", "value": true}]}]},
             "orderBy": [{"field": "createdAt", "direction": "desc"}],
             "startAfter": [{"$timestamp": "2026-11-22T10:00:00Z"}],
             "limit": 20, "limitToLast": null, "offset": 0, "select": ["title", "createdAt"]}
            """)
        #expect(q.source == .collection(try CollectionPath("projects/p1/rounds")))
        let category = FieldFilter(field: FieldPath(uncheckedSegments: ["category"]), op: .equal, value: .string("love"))
        let votes = FieldFilter(field: FieldPath(uncheckedSegments: ["votes"]), op: .greaterThanOrEqual, value: .int(3))
        let pinned = FieldFilter(field: FieldPath(uncheckedSegments: ["pinned"]), op: .equal, value: .bool(true))
        #expect(q.filter == .and([.field(category), .or([.field(votes), .field(pinned)])]))
        #expect(q.orderBy == [Query.Order(FieldPath(uncheckedSegments: ["createdAt"]), .descending)])
        #expect(q.start == Query.Cursor(.values([.timestamp(Timestamp(rfc3339: "2026-11-22T10:00:00Z")!)]), inclusive: false))
        #expect(q.limit == 20 && q.limitToLast == nil && q.offset == 0)
        #expect(q.select == [FieldPath(uncheckedSegments: ["title"]), FieldPath(uncheckedSegments: ["createdAt"])])
    }

    @Test func shortFormParses() throws {
        let q = try Query(jsonText: """
            {"from": "projects", "where": [["public", "==", true], ["votes", ">", 2]], "orderBy": [["votes", "desc"], ["title"], "id"], "limit": 10}
            """)
        let a = FieldFilter(field: FieldPath(uncheckedSegments: ["public"]), op: .equal, value: .bool(true))
        let b = FieldFilter(field: FieldPath(uncheckedSegments: ["votes"]), op: .greaterThan, value: .int(2))
        #expect(q.filter == .and([.field(a), .field(b)]))
        #expect(q.orderBy.map(\.field.description) == ["votes", "title", "id"])
        #expect(q.orderBy.map(\.direction) == [.descending, .ascending, .ascending])
        let single = try Query(jsonText: #"{"from": "c", "where": ["a", "in", [1, 2]]}"#)
        #expect(single.filter == .field(FieldFilter(field: FieldPath(uncheckedSegments: ["a"]), op: .in, value: .array([.int(1), .int(2)]))))
    }

    @Test func collectionGroupSource() throws {
        let q = try Query(jsonText: #"{"from": {"collectionGroup": "snippets", "under": "projects/p1"}}"#)
        #expect(q.source == .collectionGroup(id: "snippets", under: try DocumentPath("projects/p1")))
        #expect(q.contains(path: try DocumentPath("projects/p1/rounds/r1/snippets/s1")))
        #expect(q.contains(path: try DocumentPath("projects/p1/snippets/s1")))
        #expect(!q.contains(path: try DocumentPath("projects/p2/rounds/r1/snippets/s1")))
        #expect(!q.contains(path: try DocumentPath("snippets/s1")))
        #expect(!q.contains(path: try DocumentPath("projects/p1/rounds/r1")))
        let all = try Query(jsonText: #"{"from": {"collectionGroup": "snippets"}}"#)
        #expect(all.contains(path: try DocumentPath("snippets/s1")))
        #expect(all.contains(path: try DocumentPath("a/b/c/d/snippets/s1")))
    }

    @Test func documentNameValues() throws {
        let q = try Query(jsonText: #"{"from": "users", "where": [["__name__", "in", ["alice", "users/bob", {"$ref": "users/carol"}]]]}"#)
        guard case .field(let f)? = q.filter else { Issue.record("no filter"); return }
        #expect(f.values == [.reference(try DocumentPath("users/alice")), .reference(try DocumentPath("users/bob")),
                             .reference(try DocumentPath("users/carol"))])
        let cursor = try Query(jsonText: #"{"from": "users", "orderBy": ["age"], "startAfter": [30, "alice"]}"#)
        #expect(cursor.start?.position == .values([.int(30), .reference(try DocumentPath("users/alice"))]))
        let docCursor = try Query(jsonText: #"{"from": "users", "orderBy": ["age"], "startAt": "users/alice"}"#)
        #expect(docCursor.start == Query.Cursor(.document(try DocumentPath("users/alice")), inclusive: true))
    }

    @Test func normalizedOrder() throws {
        func order(_ text: String) throws -> [String] {
            try Query(jsonText: text).normalizedOrder.map { "\($0.field) \($0.direction.rawValue)" }
        }
        #expect(try order(#"{"from": "c"}"#) == ["__name__ asc"])
        #expect(try order(#"{"from": "c", "orderBy": [["a", "desc"]]}"#) == ["a desc", "__name__ desc"])
        #expect(try order(#"{"from": "c", "where": [["b", ">", 1], ["a", "<", 5]]}"#) == ["a asc", "b asc", "__name__ asc"])
        #expect(try order(#"{"from": "c", "where": [["b", ">", 1]], "orderBy": [["c", "desc"]]}"#)
                == ["c desc", "b desc", "__name__ desc"])
        #expect(try order(#"{"from": "c", "where": [["b", "!=", 1]], "orderBy": [["b", "desc"], ["a", "asc"]]}"#)
                == ["b desc", "a asc", "__name__ asc"])
        #expect(try order(#"{"from": "c", "where": [["__name__", ">", "x"]], "orderBy": [["a", "desc"]]}"#)
                == ["a desc", "__name__ desc"])
        #expect(try order(#"{"from": "c", "orderBy": [["__name__", "desc"], "a"]}"#) == ["__name__ desc", "a asc"])
        #expect(try order(#"{"from": "c", "where": {"or": [["x", "==", 1], ["y", ">", 1]]}}"#) == ["y asc", "__name__ asc"])
    }

    @Test func disjunctionCounting() throws {
        let q = try Query(jsonText: #"{"from": "c", "where": {"or": [["a", "in", [1, 2, 3]], {"and": [["b", "in", [1, 2]], ["c", "array-contains-any", [1, 2, 3]]]}]}}"#)
        #expect(Query.disjunctionCount(q.filter!) == 9)
    }

    /// Every invalid query answers invalid-argument with Firestore's reason.
    @Test(arguments: [
        (#"{"from": "c", "limt": 1}"#, "'limt'"),
        (#"{"from": "c", "where": {"field": "a", "op": "==", "value": 1, "extra": 2}}"#, "'extra'"),
        (#"{"from": "c", "orderBy": [{"field": "a", "dir": "asc"}]}"#, "'dir'"),
        (#"{"from": {"collectionGroup": "c", "below": "a/b"}}"#, "'below'"),
        (#"{"where": []}"#, "'from' is required"),
        (#"{"from": "c/d"}"#, "collection path"),
        (#"{"from": {"collectionGroup": "a/b"}}"#, "contains '/'"),
        (#"{"from": "c", "where": [["a", "=", 1]]}"#, "unknown operator '='"),
        (#"{"from": "c", "where": [["a", "==", 1, 2]]}"#, "triple"),
        (#"{"from": "c", "where": 5}"#, "'where' must be"),
        (#"{"from": "c", "where": {"and": []}}"#, "at least one filter"),
        (#"{"from": "c", "where": {"or": []}}"#, "at least one filter"),
        (#"{"from": "c", "where": [["a", "in", []]]}"#, "A non-empty array is required for 'in' filters"),
        (#"{"from": "c", "where": [["a", "not-in", 3]]}"#, "A non-empty array is required for 'not-in' filters"),
        (#"{"from": "c", "where": [["a", "array-contains-any", []]]}"#, "A non-empty array is required for 'array-contains-any'"),
        (#"{"from": "c", "where": [["a", "in", [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31]]]}"#, "maximum of 30 elements"),
        (#"{"from": "c", "where": [["a", "array-contains-any", [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31]]]}"#, "maximum of 30 elements"),
        (#"{"from": "c", "where": [["a", "not-in", [1,2,3,4,5,6,7,8,9,10,11]]]}"#, "maximum of 10 elements"),
        (#"{"from": "c", "where": [["a", "!=", 1], ["b", "!=", 2]]}"#, "more than one '!=' filter"),
        (#"{"from": "c", "where": [["a", "not-in", [1]], ["b", "not-in", [2]]]}"#, "more than one 'not-in' filter"),
        (#"{"from": "c", "where": [["a", "not-in", [1]], ["b", "!=", 2]]}"#, "'not-in' filters with '!=' filters"),
        (#"{"from": "c", "where": [["a", "not-in", [1]], ["b", "in", [2]]]}"#, "'not-in' filters with 'in' filters"),
        (#"{"from": "c", "where": [["a", "not-in", [1]], ["b", "array-contains-any", [2]]]}"#, "'not-in' filters with 'array-contains-any'"),
        (#"{"from": "c", "where": {"or": [["a", "not-in", [1]], ["b", "==", 2]]}}"#, "'not-in' filters with 'or' filters"),
        (#"{"from": "c", "where": [["a", "in", [1,2,3,4,5,6]], ["b", "in", [1,2,3,4,5,6]]]}"#, "36 disjunctions"),
        (#"{"from": "c", "where": {"or": [["a","==",1],["a","==",2],["a","==",3],["a","==",4],["a","==",5],["a","==",6],["a","==",7],["a","==",8],["a","==",9],["a","==",10],["a","==",11],["a","==",12],["a","==",13],["a","==",14],["a","==",15],["a","==",16],["a","==",17],["a","==",18],["a","==",19],["a","==",20],["a","==",21],["a","==",22],["a","==",23],["a","==",24],["a","==",25],["a","==",26],["a","==",27],["a","==",28],["a","==",29],["a","==",30],["a","==",31]]}}"#, "31 disjunctions"),
        (#"{"from": "c", "where": [["a", "array-contains", 1], ["b", "array-contains", 2]]}"#, "more than one 'array-contains' filter in the same disjunction"),
        (#"{"from": "c", "where": [["a", "array-contains-any", [1]], ["b", "array-contains-any", [2]]]}"#, "more than one 'array-contains-any'"),
        (#"{"from": "c", "where": [["a", "array-contains", 1], ["b", "array-contains-any", [2]]]}"#, "'array-contains' filters with 'array-contains-any'"),
        (#"{"from": "c", "where": [["a", "<", null]]}"#, "Null only supports '==' and '!='"),
        (#"{"from": "c", "where": [["a", ">=", {"$double": "NaN"}]]}"#, "NaN only supports '==' and '!='"),
        (#"{"from": "c", "where": [["__name__", "array-contains", "x"]]}"#, "'array-contains' queries on __name__"),
        (#"{"from": "c", "where": [["__name__", "==", 3]]}"#, "__name__ value must be a document path"),
        (#"{"from": {"collectionGroup": "c"}, "where": [["__name__", "==", "plainid"]]}"#, "document path"),
        (#"{"from": "c", "where": [["a1",">",1],["a2",">",1],["a3",">",1],["a4",">",1],["a5",">",1],["a6",">",1],["a7",">",1],["a8",">",1],["a9",">",1],["a10",">",1],["a11",">",1]]}"#, "11 fields"),
        (#"{"from": "c", "limit": 0}"#, "limit must be a positive number"),
        (#"{"from": "c", "limit": -3}"#, "limit must be a positive number"),
        (#"{"from": "c", "limit": "3"}"#, "'limit' must be an integer"),
        (#"{"from": "c", "limitToLast": 3}"#, "limitToLast queries require specifying at least one orderBy"),
        (#"{"from": "c", "orderBy": ["a"], "limit": 1, "limitToLast": 3}"#, "cannot both be given"),
        (#"{"from": "c", "offset": -1}"#, "offset must be zero or a positive number"),
        (#"{"from": "c", "orderBy": ["a"], "startAt": [1, "x", 3]}"#, "Too many arguments provided to startAt"),
        (#"{"from": "c", "endBefore": [1, 2]}"#, "Too many arguments provided to endBefore"),
        (#"{"from": "c", "orderBy": ["a"], "startAt": [1], "startAfter": [2]}"#, "cannot both be given"),
        (#"{"from": "c", "orderBy": ["a"], "endAt": [1, 5]}"#, "__name__ value must be a document path"),
        (#"{"from": "c", "orderBy": ["a"], "startAt": 5}"#, "list of values or a document path"),
        (#"{"from": "c", "orderBy": ["a"], "endAt": []}"#, "endAt requires at least one value"),
        (#"{"from": "c", "orderBy": ["a", ["a", "desc"]]}"#, "more than once"),
        (#"{"from": "c", "orderBy": [["a", "up"]]}"#, "\"asc\" or \"desc\""),
        (#"{"from": "c", "where": [["__secret__", "==", 1]]}"#, "reserved"),
        (#"{"from": "c", "where": [["a..b", "==", 1]]}"#, "empty segment"),
        (#"{"from": "c", "select": "a"}"#, "'select' must be an array"),
        (#"{"from": "c", "where": [["a", "==", {"$nope": 1}]]}"#, "unknown tag $nope"),
        ("[1]", "JSON object"),
    ] as [(String, String)])
    func invalidQuery(text: String, reason: String) {
        let error = QT.error(text)
        #expect(error?.code == .invalidArgument, "\(text) should fail with invalid-argument, got \(String(describing: error))")
        #expect(error?.message.contains(reason) == true, "\(text): message \(error?.message ?? "nil") lacks \(reason)")
    }

    @Test func tooManyComponents() {
        let filters = (0..<101).map { #"["f\#($0)", "==", 1]"# }.joined(separator: ",")
        let error = QT.error(#"{"from": "c", "where": [\#(filters)]}"#)
        #expect(error?.message.contains("the limit is 100") == true, "\(String(describing: error))")
    }

    /// Queries Firestore accepts, near the limits.
    @Test(arguments: [
        #"{"from": "c", "where": [["a", "in", [1,2,3,4,5]], ["b", "in", [1,2,3,4,5,6]]]}"#,
        #"{"from": "c", "where": {"or": [["a", "array-contains", 1], ["b", "array-contains", 2]]}}"#,
        #"{"from": "c", "where": {"or": [["a", "array-contains", 1], ["b", "array-contains-any", [2]]]}}"#,
        #"{"from": "c", "where": [["a", "in", [1]], ["b", "array-contains-any", [2]]]}"#,
        #"{"from": "c", "where": [["a", ">", 1], ["b", "<", 2]], "orderBy": ["c"]}"#,
        #"{"from": "c", "where": [["a", "!=", null], ["b", "==", {"$double": "NaN"}]]}"#,
        #"{"from": "c", "where": [["a", "not-in", [1,2,3,4,5,6,7,8,9,10]], ["b", "array-contains", 1]]}"#,
        #"{"from": "c", "orderBy": ["a"], "startAt": [1, "x"], "endBefore": {"$ref": "c/z"}, "limitToLast": 2}"#,
        #"{"from": "c", "where": null, "orderBy": null, "limit": null, "select": []}"#,
    ])
    func validQuery(text: String) {
        #expect(QT.error(text) == nil, "\(text): \(String(describing: QT.error(text)))")
    }
}

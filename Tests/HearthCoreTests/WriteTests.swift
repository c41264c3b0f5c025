import HearthCore
import HearthTesting
import Testing

/// Writes and field transforms with Firestore's semantics, applied without storage.
@Suite struct WriteTests {
    let path = try! DocumentPath("c/d")
    let t0 = Timestamp(microseconds: 1_000_000)
    let t1 = Timestamp(microseconds: 2_000_000)

    func doc(_ json: String) throws -> Document {
        Document(path: path, fields: try Value.decodeFields(JSON.parse(json)), createTime: t0, updateTime: t0)
    }

    func apply(_ kind: String, _ data: String, merge: JSON? = nil, to existing: Document?) throws -> Document? {
        let write = try Write(kind: kind, path: path, data: JSON.parse(data), merge: merge)
        switch try write.apply(to: existing, commitTime: t1).0 {
        case .put(let d): return d
        case .unchanged(let d): return d
        case .deleted: return nil
        }
    }

    @Test func incrementTyping() {
        let inc = { (current: Value?, operand: Value) in FieldTransform.increment(operand).apply(to: current, commitTime: t1) }
        #expect(inc(.int(1), .int(2)) == .int(3))
        #expect(inc(.int(1), .double(0.5)) == .double(1.5))
        #expect(inc(.double(1), .int(2)) == .double(3))
        #expect(inc(nil, .int(2)) == .int(2))
        #expect(inc(.string("x"), .double(2)) == .double(2))
        #expect(inc(.int(.max), .int(1)) == .int(.max))
        #expect(inc(.int(.min), .int(-1)) == .int(.min))
    }

    @Test func maximumMinimum() {
        let maxT = { (c: Value?, o: Value) in FieldTransform.maximum(o).apply(to: c, commitTime: t1) }
        let minT = { (c: Value?, o: Value) in FieldTransform.minimum(o).apply(to: c, commitTime: t1) }
        #expect(maxT(.int(3), .double(3.0)) == .int(3))   // equivalent operands keep the stored value
        #expect(maxT(.int(3), .double(3.5)) == .double(3.5))
        #expect(maxT(.double(.nan), .int(1)).isNaN)
        #expect(maxT(.int(1), .double(.nan)).isNaN)
        #expect(maxT(nil, .int(7)) == .int(7))
        #expect(maxT(.string("a"), .int(7)) == .int(7))
        #expect(minT(.double(0.0), .double(-0.0)) == .double(0.0))
        #expect(minT(.int(2), .double(1.5)) == .double(1.5))
    }

    @Test func arrayUnionAndRemove() {
        let union = FieldTransform.arrayUnion([.int(1), .double(2.0), .null, .double(.nan), .int(5), .int(5)])
        #expect(union.apply(to: .array([.double(1.0), .int(2), .double(.nan)]), commitTime: t1)
                == .array([.double(1.0), .int(2), .double(.nan), .null, .int(5)]))
        #expect(union.apply(to: .string("x"), commitTime: t1).arrayValue?.count == 5)
        let remove = FieldTransform.arrayRemove([.int(1), .double(.nan)])
        #expect(remove.apply(to: .array([.double(1.0), .int(1), .int(2), .double(.nan)]), commitTime: t1) == .array([.int(2)]))
        #expect(remove.apply(to: nil, commitTime: t1) == .array([]))
    }

    /// Values queries call equal are equal and hash alike (so sets of them keep one of each); others differ.
    @Test func queryEqualityHashesEqualValuesAlike() {
        let big = Int64(1) << 53
        let equal: [(Value, Value)] = [
            (.int(1), .double(1.0)), (.double(.nan), .double(-.nan)), (.double(-0.0), .int(0)), (.int(big), .double(Double(big))),
            (.array([.int(1), .double(.nan)]), .array([.double(1.0), .double(.nan)])),
            (.map(["a": .int(2), "b": .array([.double(3.0)])]), .map(["b": .array([.int(3)]), "a": .double(2.0)])),
            (.geoPoint(GeoPoint(latitude: -0.0, longitude: 1)), .geoPoint(GeoPoint(latitude: 0.0, longitude: 1))),
        ]
        for (a, b) in equal {
            #expect(QueryEqual(a) == QueryEqual(b), "\(a) \(b)")
            #expect(QueryEqual(a).hashValue == QueryEqual(b).hashValue, "\(a) \(b)")
        }
        let different: [(Value, Value)] = [
            (.int(big + 1), .double(Double(big))), (.int(1), .double(1.5)), (.int(1), .string("1")), (.array([.int(1)]), .array([.int(1), .null])),
            (.map(["a": .int(1)]), .map(["b": .int(1)])), (.null, .bool(false)),
        ]
        for (a, b) in different { #expect(QueryEqual(a) != QueryEqual(b), "\(a) \(b)") }
        var r = RandomValues(seed: 20261126)
        for _ in 0..<2_000 {
            let (a, b) = (r.smallValue(), r.smallValue())
            if Value.compare(a, b) == 0 { #expect(QueryEqual(a).hashValue == QueryEqual(b).hashValue, "\(a) \(b)") }
        }
    }

    @Test func setReplacesAndTransformsNested() throws {
        let existing = try doc(#"{"a": 1, "b": {"c": 2}}"#)
        let result = try apply("set", #"{"b": {"d": {"$serverTimestamp": true}}, "e": 1}"#, to: existing)
        #expect(result?.fields == ["b": .map(["d": .timestamp(t1)]), "e": .int(1)])
        #expect(result?.createTime == t0)
        #expect(result?.updateTime == t1)
    }

    @Test func mergeKeepsUntouchedSiblings() throws {
        let existing = try doc(#"{"a": {"x": 1, "y": 2}, "b": 1}"#)
        let result = try apply("set", #"{"a": {"z": {"$increment": 1}}, "b": {"$delete": true}, "e": {}}"#,
                               merge: .bool(true), to: existing)
        #expect(result?.fields == ["a": .map(["x": .int(1), "y": .int(2), "z": .int(1)]), "e": .map([:])])
    }

    @Test func mergeFieldsLimitsTheMask() throws {
        let existing = try doc(#"{"a": 1, "b": 1}"#)
        let result = try apply("set", #"{"a": 2, "b": 2}"#, merge: .array([.string("a")]), to: existing)
        #expect(result?.fields == ["a": .int(2), "b": .int(1)])
        #expect(throws: HearthError.self) { try apply("set", #"{"a": 2}"#, merge: .array([.string("zz")]), to: existing) }
    }

    @Test func updateNeedsAnExistingDocument() throws {
        #expect(throws: HearthError.notFound("no document to update at c/d")) { try apply("update", #"{"a": 1}"#, to: nil) }
        let existing = try doc(#"{"a": {"b": 1, "c": 1}, "s": "x"}"#)
        let result = try apply("update", #"{"a.b": 5, "s.t": 1}"#, to: existing)
        #expect(result?.fields == ["a": .map(["b": .int(5), "c": .int(1)]), "s": .map(["t": .int(1)])])
    }

    @Test func createFailsWhenPresent() throws {
        let existing = try doc("{}")
        #expect(throws: HearthError.alreadyExists("document c/d already exists")) { try apply("create", "{}", to: existing) }
    }

    @Test func preconditions() throws {
        let existing = try doc(#"{"a": 1}"#)
        let stale = Write(kind: .delete, path: path, precondition: .updateTime(t1))
        #expect(throws: HearthError.self) { try stale.apply(to: existing, commitTime: t1) }
        let fresh = Write(kind: .delete, path: path, precondition: .updateTime(t0))
        #expect(try fresh.apply(to: existing, commitTime: t1).0 == .deleted(existing))
        let verify = Write(kind: .verify, path: path, precondition: .exists(false))
        #expect(throws: HearthError.self) { try verify.apply(to: existing, commitTime: t1) }
    }

    @Test func sentinelValidation() {
        let bad = [
            #"{"a": {"$increment": "x"}}"#, #"{"a": {"$arrayUnion": 1}}"#, #"{"a": [{"$delete": true}]}"#,
            #"{"a": {"$serverTimestamp": 1}}"#, #"{"a": {"$arrayUnion": [{"$serverTimestamp": true}]}}"#,
        ]
        for body in bad {
            #expect(throws: HearthError.self, "\(body)") { try Write(kind: "set", path: path, data: JSON.parse(body)) }
        }
        #expect(throws: HearthError.self) { try Write(kind: "set", path: path, data: JSON.parse(#"{"a": {"$delete": true}}"#)) }
        #expect(throws: HearthError.self) { try Write(kind: "update", path: path, data: JSON.parse(#"{"a": {"b": {"$delete": true}}}"#)) }
        #expect(throws: HearthError.self) { try Write(kind: "update", path: path, data: JSON.parse("{}")) }
    }

    @Test func sizeAccounting() throws {
        // Firestore's example: a document "users/jeff" with string, number and boolean fields.
        let p = try DocumentPath("users/jeff")
        #expect(Document.nameSize(p) == 6 + 5 + 16)
        let fields: [String: Value] = ["type": .string("Personal"), "done": .bool(false), "priority": .int(1)]
        #expect(Document.storageSize(path: p, fields: fields) == 27 + (5 + 9) + (5 + 1) + (9 + 8) + 32)
    }
}

import HearthCore
import HearthTesting
import Testing

/// Reading one field of a stored document without decoding the rest: `JSON.objectMembers` finds each
/// top-level value's bytes, and `Value.decodeField` decodes one of them exactly as `decodeFields` would.
@Suite struct JSONMembersTests {
    @Test func eachFieldDecodesAsTheWholeDocumentDoes() throws {
        var r = RandomValues(seed: 0x4A53_4F4E)
        let collection = CollectionPath(uncheckedSegments: ["c"])
        for round in 0..<500 {
            var fields = r.document(in: [collection], id: "d").fields
            // Values of every type, tagged ones and nested maps among them, and keys that need escaping.
            fields["v\(round % 7)"] = r.value()
            if r.chance(0.2) { fields["quote\"and\\slash"] = r.value() }
            if r.chance(0.2) { fields["é"] = .map(["$x": .int(1)]) }
            let data = Value.encodeFields(fields)
            let members = try JSON.objectMembers(data)
            #expect(members.map(\.key).sorted() == fields.keys.sorted())
            let whole = try Value.decodeFields(JSON.parse(data))
            #expect(JSON.objectMember("absent", in: data) == nil)
            for member in members {
                #expect(JSON.objectMember(member.key, in: data) == member.value, "round \(round), field \(member.key)")
                let one = try Value.decodeField(member.key, data[member.value])
                #expect(one == whole[member.key]!, "round \(round), field \(member.key)")
            }
        }
    }

    @Test func spacingAndEscapesAreStepped() throws {
        let text = #" { "a" : [1, {"b": "x\"y"}, []] , "s\"k": "\\", "n": -1.5e3, "t": true, "z": {} } "#
        let data = Array(text.utf8)
        let members = try JSON.objectMembers(data)
        #expect(members.map(\.key) == ["a", "s\"k", "n", "t", "z"])
        #expect(String(decoding: data[members[0].value], as: UTF8.self) == #"[1, {"b": "x\"y"}, []]"#)
        #expect(String(decoding: data[members[1].value], as: UTF8.self) == #""\\""#)
        #expect(try Value.decodeField("n", data[members[2].value]) == .double(-1500))
        #expect(JSON.objectMember("s\"k", in: data) == members[1].value)
        #expect(JSON.objectMember("z", in: data) == members[4].value)
        #expect(JSON.objectMember("b", in: data) == nil)  // nested keys are not members
        #expect(JSON.objectMember("a", in: Array("{}".utf8)) == nil)
        #expect(JSON.objectMember("a", in: Array("[1]".utf8)) == nil)
        #expect(JSON.objectMember("a", in: Array(#"{"x": [1, "#.utf8)) == nil)
    }

    /// Short integers are read without making text; every length up to the 64-bit edges reads exactly.
    @Test func integersParseExactlyAtEveryLength() throws {
        var r = RandomValues(seed: 0x494E_54)
        for digits in 1...19 {
            for _ in 0..<50 {
                var text = String(r.int(1...9)) + (1..<digits).map { _ in String(r.int(0...9)) }.joined()
                if r.chance(0.5) { text = "-" + text }
                guard let expected = Int64(text) else { continue }
                #expect(try JSON.parse(text) == .int(expected), "\(text)")
            }
        }
        for text in ["0", "-0", "9223372036854775807", "-9223372036854775808", "999999999999999999", "-999999999999999999"] {
            #expect(try JSON.parse(text) == .int(Int64(text)!))
        }
        #expect(throws: HearthError.self) { try JSON.parse("9223372036854775808") }
        #expect(throws: HearthError.self) { try JSON.parse("-9223372036854775809") }
        #expect(try JSON.parse("[1,-2,30]") == .array([.int(1), .int(-2), .int(30)]))
    }

    @Test(arguments: [
        (#"[1]"#, "expected an object"),
        (#"{"a": 1"#, "unexpected end of input"),
        (#"{"a": 1,}"#, "expected a string key"),
        (#"{"a": 1, "a": 2}"#, "duplicate key"),
        (#"{"a": [1, 2}"#, "expected ',' or ']'"),
        (#"{"a": "x}"#, "unterminated string"),
        (#"{"a": 1} 2"#, "unexpected data after the value"),
        (#"{"a": tru}"#, "invalid literal"),
    ])
    func malformedObjectsAreRefused(text: String, reason: String) {
        #expect {
            _ = try JSON.objectMembers(Array(text.utf8))
        } throws: { error in
            (error as? HearthError).map { $0.message.contains(reason) } ?? false
        }
    }

    /// Objects with many keys switch from a look through the keys to a set; duplicates are refused either way.
    @Test func duplicateKeysAreRefusedInLargeObjects() {
        for count in [3, 15, 16, 17, 40] {
            for duplicate in [1, count - 1] {
                var keys = (0..<count).map { "k\($0)" }
                keys.append("k\(duplicate)")
                let text = "{" + keys.map { "\"\($0)\": 0" }.joined(separator: ",") + "}"
                #expect(throws: HearthError.self) { try JSON.parse(text) }
                #expect(throws: HearthError.self) { try JSON.objectMembers(Array(text.utf8)) }
                let distinct = "{" + (0..<count).map { "\"k\($0)\": 0" }.joined(separator: ",") + "}"
                #expect(throws: Never.self) { try JSON.parse(distinct) }
            }
        }
    }
}

/// What the writer produces for responses: strings escaped in place (one copy when nothing needs escaping),
/// document paths written segment by segment, timestamps without a string in between.
@Suite struct JSONWriterTests {
    @Test func stringsRoundTripWhateverTheyHold() throws {
        var r = RandomValues(seed: 0x5752_4954)
        let pieces = ["a", "é", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1f}", "/", "😀", "plain text"]
        for _ in 0..<500 {
            let s = (0..<r.int(0...12)).map { _ in r.pick(pieces) }.joined()
            var w = JSONWriter()
            w.string(s)
            #expect(try JSON.parse(w.bytes) == .string(s), "\(s.debugDescription)")
        }
    }

    @Test func documentsAreWrittenAsBeforeWithEscapedPaths() throws {
        let path = DocumentPath(uncheckedSegments: ["rooms", "a\"b\\c", "notes", "é\n"])
        let time = Timestamp(rfc3339: "2026-11-22T10:00:00.123456Z")!
        var w = JSONWriter()
        Document.writeWire(path: path, dataJSON: Array(#"{"x":1}"#.utf8), createTime: time, updateTime: Timestamp(microseconds: 0),
                           to: &w)
        let json = try JSON.parse(w.bytes)
        #expect(json["path"] == .string(path.description))
        #expect(json["id"] == .string("é\n"))
        #expect(json["createTime"] == .string("2026-11-22T10:00:00.123456Z"))
        #expect(json["updateTime"] == .string("1970-01-01T00:00:00.000000Z"))
        var t = JSONWriter()
        t.rfc3339(time)
        #expect(t.bytes == Array(time.rfc3339.utf8))
    }
}

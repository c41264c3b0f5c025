import HearthCore
import HearthRules
import HearthTesting
import Testing

/// `resource` given as stored JSON (decoded field by field as rules read it) decides every request exactly
/// as the decoded document does, denial reasons included.
@Suite struct StoredResourceTests {
    static let conditions = [
        "resource.data.a == 1",
        "resource.data.a is int || resource.data.a is string",
        "resource.data.b > resource.data.a",
        "resource.data.keys().hasAll(['a', 'b'])",
        "resource.data.size() > 2",
        "'tags' in resource.data",
        "resource.data.m.x != null",
        "resource.data.m == {'x': 1}",
        "resource.data == {'a': 1}",
        "resource.data.diff({'a': 1}).affectedKeys().size() < 3",
        "resource.data.get('c', 0) != 0",
        "resource.data.get(['m', 'x'], null) == null",
        "resource.data.values().size() >= 1",
        "resource.data.tags.hasAny([1, 'x'])",
        "resource.data.tags[0] == 1",
        "resource.data is map && resource.data.m is map",
        "resource.id == 'd1' && resource.__name__ == /databases/$(database)/documents/things/d1",
        "resource != null && resource.data.missing == 1",
        "resource['data']['a'] == resource.data.a",
        "hashing.md5(string(resource.data.a)) != b''",
    ]

    @Test func storedAndDecodedResourcesDecideAlike() throws {
        let programs = try Self.conditions.map { try compile(rules("match /things/{id} { allow get: if \($0); }")) }
        var r = RandomValues(seed: 0x5245_534F)
        let collection = CollectionPath(uncheckedSegments: ["things"])
        var allowed = 0, denied = 0
        for round in 0..<300 {
            var document = r.document(in: [collection], id: r.pick(["d1", "d2"]))
            if r.chance(0.3) { document.fields["a"] = .int(1) }
            if r.chance(0.2) { document.fields["m"] = .map(["x": .int(1)]) }
            if r.chance(0.1) { document.fields = ["a": .int(1)] }
            for (k, condition) in Self.conditions.enumerated() {
                let program = programs[k]
                let decoded = RulesRequest(method: .get, path: document.path, time: testTime, resource: document)
                var stored = RulesRequest(method: .get, path: document.path, time: testTime)
                stored.storedResource = StoredFields(path: document.path, data: Value.encodeFields(document.fields))
                let expected = program.evaluate(decoded, lookup: EmptyDocumentLookup())
                let actual = program.evaluate(stored, lookup: EmptyDocumentLookup())
                #expect(actual == expected, "round \(round) case \(k) `\(condition)` over \(document.fields)")
                if expected.isAllowed { allowed += 1 } else { denied += 1 }
            }
        }
        // The cases must go both ways, or they would not tell the two forms apart.
        #expect(allowed > 500 && denied > 500)
    }

    @Test func aMissingDocumentIsNull() throws {
        let program = try compile(rules("match /things/{id} { allow get: if resource == null; }"))
        let request = RulesRequest(method: .get, path: docPath("things/x"), time: testTime)
        #expect(program.evaluate(request, lookup: EmptyDocumentLookup()) == .allow)
    }

    @Test func storedDataThatIsNotAnObjectReadsAsEmpty() throws {
        let program = try compile(rules(
            "match /things/{id} { allow get: if resource.data.a == 1 || (resource.id == 'x' && resource.data.size() == 0); }"))
        var request = RulesRequest(method: .get, path: docPath("things/x"), time: testTime)
        request.storedResource = StoredFields(path: docPath("things/x"), data: Array("[1]".utf8))
        #expect(program.evaluate(request, lookup: EmptyDocumentLookup()) == .allow)
        request.storedResource = StoredFields(path: docPath("things/y"), data: Array("[1]".utf8))
        request.path = docPath("things/y")
        #expect(!program.evaluate(request, lookup: EmptyDocumentLookup()).isAllowed)
    }
}

// libFuzzer entry for the rules engine: any input, as a rules file and as a condition inside a minimal file,
// must compile to a program or to diagnostics with carets, and every program must decide requests without
// crashing or hanging. Built and run by fuzz/run.sh.
import HearthCore
import HearthRules

private struct Lookup: RulesDocumentLookup {
    func get(_ path: DocumentPath) throws -> Document? { path.id == "missing" ? nil : FuzzFixtures.document(path) }
    func getAfter(_ path: DocumentPath) throws -> Document? { try get(path) }
}

private enum FuzzFixtures {
    static let time = Timestamp(microseconds: 1_700_000_000_000_000)

    static func document(_ path: DocumentPath) -> Document {
        Document(path: path, fields: [
            "owner": .string("alice"), "n": .int(3), "x": .double(2.5), "tags": .array([.string("a"), .int(1)]),
            "m": .map(["k": .bool(true), "t": .timestamp(time)]), "ref": .reference(try! DocumentPath("users/alice")),
        ], createTime: time, updateTime: time)
    }

    static let paths = [try! DocumentPath("users/alice"), try! DocumentPath("posts/p1/comments/c1"),
                        try! DocumentPath("a/b/c/d/e/f")]
    static let auths: [RulesAuth?] = [nil, RulesAuth(uid: "alice", token: ["email": .string("a@x"), "admin": .bool(true)])]
    static let lookup = Lookup()
}

private func decide(_ program: RulesProgram) {
    for path in FuzzFixtures.paths {
        for auth in FuzzFixtures.auths {
            let doc = FuzzFixtures.document(path)
            var edited = doc
            edited.fields["n"] = .int(4)
            let requests = [
                RulesRequest(method: .get, path: path, auth: auth, time: FuzzFixtures.time, resource: doc),
                RulesRequest(method: .create, path: path, auth: auth, time: FuzzFixtures.time, requestResource: doc),
                RulesRequest(method: .update, path: path, auth: auth, time: FuzzFixtures.time, resource: doc,
                             requestResource: edited),
                RulesRequest(method: .delete, path: path, auth: auth, time: FuzzFixtures.time, resource: doc),
                RulesRequest(method: .list, path: path, auth: auth, time: FuzzFixtures.time,
                             query: ListConstraints(target: .collection(path.parent), limit: 10,
                                                    disjuncts: [[FieldPath(uncheckedSegments: ["owner"]): .string("alice")]])),
            ]
            for request in requests { _ = program.evaluate(request, lookup: FuzzFixtures.lookup) }
            _ = program.evaluateBatch(Array(requests.prefix(4)), lookup: FuzzFixtures.lookup)
        }
    }
}

private func compile(_ source: String) {
    do {
        let program = try RulesProgram.compile(source: source, fileName: "fuzz.rules")
        _ = program.printedSyntax
        decide(program)
    } catch {
        // Every diagnostic names a place and shows a caret.
        let text = error.description
        precondition(!error.diagnostics.isEmpty && text.contains("fuzz.rules:") && text.contains("^"), text)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func rulesFuzzInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size <= 4096 else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    compile(text)
    compile("""
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            function f(a, b) { let c = a; return c == b || \(text); }
            match /{document=**} {
              allow read, write: if \(text);
            }
          }
        }
        """)
    return 0
}

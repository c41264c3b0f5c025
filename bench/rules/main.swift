// Times rules evaluation outside the test suite: a typical owner rule with one get().
// Build and run with ./run.sh (release mode).
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import HearthCore
import HearthRules

struct Lookup: RulesDocumentLookup {
    let project: Document
    func get(_ path: DocumentPath) throws -> Document? { path == project.path ? project : nil }
    func getAfter(_ path: DocumentPath) throws -> Document? { try get(path) }
}

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

let source = """
rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    function signedIn() { return request.auth != null; }
    match /projects/{projectId}/rounds/{roundId} {
      function isOwner() {
        return signedIn() && get(/databases/$(database)/documents/projects/$(projectId)).data.owner == request.auth.uid;
      }
      allow read: if isOwner();
      allow update: if isOwner() && request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title']);
    }
  }
}
"""

let program = try! RulesProgram.compile(source: source, fileName: "bench.rules")
let time = Timestamp.now()
let project = Document(path: try! DocumentPath("projects/p1"), fields: ["owner": .string("alice"), "title": .string("P")],
                       createTime: time, updateTime: time)
let round = Document(path: try! DocumentPath("projects/p1/rounds/r1"),
                     fields: ["title": .string("a"), "votes": .int(3), "tags": .array([.string("x"), .string("y")])],
                     createTime: time, updateTime: time)
var edited = round
edited.fields["title"] = .string("b")
let lookup = Lookup(project: project)
let get = RulesRequest(method: .get, path: round.path, auth: RulesAuth(uid: "alice", token: ["email": .string("a@x")]),
                       time: time, resource: round)
let update = RulesRequest(method: .update, path: round.path, auth: RulesAuth(uid: "alice"), time: time,
                          resource: round, requestResource: edited)

/// Two decimals, without Foundation.
func fmt(_ x: Double) -> String {
    let hundredths = Int((x * 100).rounded())
    let frac = hundredths % 100
    return "\(hundredths / 100).\(frac < 10 ? "0" : "")\(frac)"
}

func bench(_ name: String, _ request: RulesRequest, iterations: Int) {
    for _ in 0..<1_000 { precondition(program.evaluate(request, lookup: lookup) == .allow) }
    let start = now()
    var allowed = 0
    for _ in 0..<iterations where program.evaluate(request, lookup: lookup) == .allow { allowed += 1 }
    let elapsed = now() - start
    precondition(allowed == iterations)
    print("\(name): \(fmt(elapsed / Double(iterations) * 1e6)) µs per evaluation (\(iterations) runs)")
}

let compileStart = now()
for _ in 0..<200 { _ = try! RulesProgram.compile(source: source, fileName: "bench.rules") }
print("compile: \(fmt((now() - compileStart) / 200 * 1e6)) µs per compile")
bench("owner get() rule, get", get, iterations: 200_000)
bench("owner get() + diff().affectedKeys().hasOnly(), update", update, iterations: 200_000)

// The rule `rules_bench.py` serves with (`bench/rules/bench.rules`), decided as a server decides a get:
// the stored document still in its JSON, the settings document from a lookup.
let serverSource = """
rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    function settings() {
      return get(/databases/$(database)/documents/settings/bench).data;
    }
    match /bench/{docId} {
      allow get: if settings().open == true && resource.data.count is int;
    }
    match /open/{docId} {
      allow get: if true;
    }
  }
}
"""
let serverProgram = try! RulesProgram.compile(source: serverSource, fileName: "server.rules")
struct SettingsLookup: RulesDocumentLookup {
    let settings: Document
    func get(_ path: DocumentPath) throws -> Document? { path == settings.path ? settings : nil }
    func getAfter(_ path: DocumentPath) throws -> Document? { try get(path) }
}
let settingsLookup = SettingsLookup(settings: Document(path: try! DocumentPath("settings/bench"), fields: ["open": .bool(true)],
                                                       createTime: time, updateTime: time))
let stored = Array(#"{"title":"A day at the lake","count":12345,"published":true,"body":"lorem ipsulorem ipsulorem ipsu"}"#.utf8)

/// A get of `path` as the server decides it: the stored document still in its JSON.
func serverGet(_ path: DocumentPath) -> RulesRequest {
    var request = RulesRequest(method: .get, path: path, auth: nil, time: Timestamp.now())
    request.storedResource = StoredFields(path: path, data: stored)
    return request
}

func benchServer(_ name: String, _ collection: String, iterations: Int) {
    let path = try! DocumentPath("\(collection)/b00000000012345")
    func decide() -> RulesDecision { serverProgram.evaluate(serverGet(path), lookup: settingsLookup) }
    for _ in 0..<1_000 { precondition(decide() == .allow) }
    let start = now()
    var allowed = 0
    for _ in 0..<iterations where decide() == .allow { allowed += 1 }
    let elapsed = now() - start
    precondition(allowed == iterations)
    print("\(name): \(fmt(elapsed / Double(iterations) * 1e6)) µs per evaluation (\(iterations) runs)")
}
benchServer("rules_bench.py's rule (settings get() + one stored field), get", "bench", iterations: 200_000)
benchServer("allow get: if true, get", "open", iterations: 200_000)

// The same decisions with the data caches emptied first, as in a server where the request's network and
// storage work runs between two decisions: 8 MiB written before each one, and only the decision timed
// (less what reading the clock costs).
var flushed = [UInt8](repeating: 1, count: 8 << 20)
func benchServerCold(_ name: String, _ collection: String, iterations: Int) {
    let path = try! DocumentPath("\(collection)/b00000000012345")
    var decisions = 0.0, clock = 0.0
    for k in 0..<iterations {
        flushed.withUnsafeMutableBytes { b in _ = memset(b.baseAddress!, Int32(k & 0x7f), b.count) }
        let c0 = now()
        clock += now() - c0
        let start = now()
        precondition(serverProgram.evaluate(serverGet(path), lookup: settingsLookup) == .allow)
        decisions += now() - start
    }
    print("\(name): \(fmt((decisions - clock) / Double(iterations) * 1e6)) µs per evaluation (\(iterations) runs, caches emptied before each)")
}
benchServerCold("rules_bench.py's rule, cold", "bench", iterations: 3_000)
benchServerCold("allow get: if true, cold", "open", iterations: 3_000)

// The server's rule decided on two threads at once, as two event loops decide it: once with the one program
// both threads share (as the server does), once with a program compiled for each thread. The difference is
// what the threads pay for writing the reference counts of shared objects.
func benchServerThreads(_ name: String, ownPrograms: Bool, iterations: Int) {
    let programs = (0..<2).map { _ in
        ownPrograms ? try! RulesProgram.compile(source: serverSource, fileName: "server.rules") : serverProgram
    }
    let lookups = (0..<2).map { _ in
        ownPrograms ? SettingsLookup(settings: Document(path: try! DocumentPath("settings/bench"), fields: ["open": .bool(true)],
                                                        createTime: time, updateTime: time)) : settingsLookup
    }
    func decide(_ thread: Int, _ count: Int) {
        let path = try! DocumentPath("bench/b00000000012345")
        for _ in 0..<count {
            precondition(programs[thread].evaluate(serverGet(path), lookup: lookups[thread]) == .allow)
        }
    }
    DispatchQueue.concurrentPerform(iterations: 2) { decide($0, 2_000) }
    let start = now()
    DispatchQueue.concurrentPerform(iterations: 2) { decide($0, iterations) }
    let elapsed = now() - start
    print("\(name): \(fmt(elapsed / Double(iterations) * 1e6)) µs per evaluation on each thread (\(iterations) runs each)")
}
benchServerThreads("rules_bench.py's rule, two threads, one program", ownPrograms: false, iterations: 200_000)
benchServerThreads("rules_bench.py's rule, two threads, a program each", ownPrograms: true, iterations: 200_000)

// Reads decided by a kept decision (`evaluateRead`): the caller reads documents it has read before, none of
// them changed, so each read is one lookup of the kept decision, a comparison of the stored bytes and one
// lookup of the settings document. Over one document, and over 30,000 read in random order as
// rules_bench.py reads them (a decision each, so the kept decisions do not all fit in the CPU's caches).
func benchKept(_ name: String, documents: Int, iterations: Int) {
    let paths = (0..<documents).map { try! DocumentPath("bench/b" + String(repeating: "0", count: 14 - String($0).count) + String($0)) }
    for path in paths { precondition(serverProgram.evaluateRead(serverGet(path), lookup: settingsLookup) == .allow) }
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    let order = (0..<iterations).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(documents))
    }
    let start = now()
    var allowed = 0
    for i in order where serverProgram.evaluateRead(serverGet(paths[i]), lookup: settingsLookup) == .allow { allowed += 1 }
    let elapsed = now() - start
    precondition(allowed == iterations)
    print("\(name): \(fmt(elapsed / Double(iterations) * 1e6)) µs per read (\(iterations) runs)")
}
benchKept("rules_bench.py's rule, kept decision, one document", documents: 1, iterations: 200_000)
benchKept("rules_bench.py's rule, kept decisions, 30,000 documents", documents: 30_000, iterations: 200_000)

import Foundation
import HearthCore
import HearthRules
import HearthTesting
import Testing

/// Random and mutated rules sources and expressions: compiling and evaluating never crashes or hangs,
/// and every failure to compile is a diagnostic with a location and a caret.
@Suite struct FuzzTests {
    static let fragments = [
        "service", "cloud.firestore", "match", "allow", "read", "write", "get", "list", "create", "update", "delete",
        "function", "let", "return", "if", "{", "}", "(", ")", "[", "]", ";", ":", ",", ".", "/", "$(", "=**", "=",
        "&&", "||", "!", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "%", "?", "in", "is", "string", "int",
        "request", "resource", "auth", "uid", "data", "'x'", "\"y\"", "r'\\d+'", "b'\\x00'", "1", "2.5", "0x1F",
        "null", "true", "false", "//c\n", "/*c*/", "{x}", "{y=**}", "rules_version", "'2'", "get(", "exists(",
        "math.abs(", "timestamp.date(", "'a'.matches('(a*)*b')", "\n", " ", "\\", "'", "\"", "/*", "é", "@", "#",
    ]

    static func randomSource(_ rng: inout SeededGenerator) -> String {
        let count = Int.random(in: 1...80, using: &rng)
        return (0..<count).map { _ in fragments.randomElement(using: &rng)! }.joined(separator: " ")
    }

    static func mutate(_ source: String, _ rng: inout SeededGenerator) -> String {
        var scalars = Array(source.unicodeScalars)
        for _ in 0..<Int.random(in: 1...6, using: &rng) {
            guard !scalars.isEmpty else { break }
            let i = Int.random(in: 0..<scalars.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: scalars.remove(at: i)
            case 1: scalars.insert(contentsOf: fragments.randomElement(using: &rng)!.unicodeScalars, at: i)
            case 2: scalars[i] = Array("{}()[];:/'\"$=*.!&|x1 \n".unicodeScalars).randomElement(using: &rng)!
            default:
                let j = Int.random(in: i..<scalars.count, using: &rng)
                scalars.removeSubrange(i..<min(scalars.count, j + 1 + Int.random(in: 0...10, using: &rng)))
            }
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    static let seeds: [String] = {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".rules") }.sorted().compactMap {
            try? String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)
        }
    }()

    static let requests: [RulesRequest] = RulesMethod.allCases.flatMap { method -> [RulesRequest] in
        ["users/alice", "projects/p1/rounds/r1", "a/b/c/d/e/f/g/h/i/j/k/l/m/n", "ops/x"].map { path in
            RulesRequest(method: method, path: docPath(path), auth: RulesAuth(uid: "alice"), time: testTime,
                         resource: doc(path, ["owner": .string("alice"), "n": .int(1)]),
                         requestResource: doc(path, ["owner": .string("alice"), "n": .int(2)]),
                         query: method == .list ? ListConstraints(target: .collection(docPath(path).parent), limit: 10) : nil)
        }
    }

    /// Compiles one source; checks the error shape; evaluates a few requests on success.
    static func exercise(_ source: String, _ rng: inout SeededGenerator) {
        do {
            let program = try RulesProgram.compile(source: source, fileName: "fuzz.rules")
            for _ in 0..<3 {
                _ = program.evaluate(requests.randomElement(using: &rng)!, lookup: FixtureLookup(["users/alice": ["n": .int(1)]]))
            }
        } catch {
            #expect(!error.diagnostics.isEmpty)
            for d in error.diagnostics {
                #expect(d.description.hasPrefix("fuzz.rules:\(d.location.line):\(d.location.column): error: "))
                #expect(d.description.hasSuffix("^"))
            }
        }
    }

    @Test func randomAndMutatedSourcesNeverCrash() {
        var rng = SeededGenerator(seed: 0x4845_4152_5448)
        let deadline = Date().addingTimeInterval(20)
        var runs = 0
        while runs < 3_000, Date() < deadline {
            let source: String
            switch runs % 3 {
            case 0: source = Self.randomSource(&rng)
            case 1: source = Self.mutate(Self.seeds.randomElement(using: &rng) ?? "", &rng)
            default:
                // A random expression inside a valid file, so that the evaluator sees it too.
                let expr = (0..<Int.random(in: 1...25, using: &rng)).map { _ in Self.fragments.randomElement(using: &rng)! }
                    .joined(separator: " ")
                source = rules("match /{doc=**} { allow read, write: if \(expr); }")
            }
            Self.exercise(source, &rng)
            runs += 1
        }
        #expect(runs >= 300)
    }

    @Test func hostileNestingIsADiagnostic() {
        let hostile = [
            rules("match /a/{b} { allow read: if " + String(repeating: "(", count: 5_000) + "1" + String(repeating: ")", count: 5_000) + "; }"),
            rules("match /a/{b} { allow read: if " + String(repeating: "!", count: 10_000) + "true; }"),
            rules("match /a/{b} { allow read: if " + String(repeating: "-", count: 10_000) + "x; }"),
            rules("match /a/{b} { allow read: if a" + String(repeating: ".b", count: 10_000) + "; }"),
            rules("match /a/{b} { allow read: if 1" + String(repeating: " + 1", count: 10_000) + " > 0; }"),
            rules("match /a/{b} { allow read: if x" + String(repeating: "[0]", count: 10_000) + "; }"),
            rules("match /a/{b} { allow read: if " + String(repeating: "[", count: 10_000) + "; }"),
            rules("match /a/{b} { allow read: if " + String(repeating: "true ? ", count: 5_000) + "1; }"),
            rules(String(repeating: "match /a/{b} { ", count: 1_000)),
            String(repeating: "}", count: 10_000),
            String(repeating: "/*", count: 10_000),
            String(repeating: "a", count: RulesLimits.maxSourceBytes + 1),
        ]
        for source in hostile {
            do {
                _ = try RulesProgram.compile(source: source, fileName: "fuzz.rules")
                Issue.record("hostile source compiled")
            } catch {
                #expect(!error.diagnostics.isEmpty)
                #expect(error.diagnostics.count <= RulesLimits.maxDiagnostics)
            }
        }
    }
}

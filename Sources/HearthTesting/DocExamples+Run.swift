import Foundation
import HearthCore

extension DocExamples {
    /// The folders of the checkout an example folder holds copies of: examples run as if from its root.
    public static let projectFolders = ["rules", "fixtures", "indexes"]

    /// The root of the checkout (the folder of `Package.swift`).
    public static var projectRoot: String {
        URL(fileURLWithPath: Harness.projectFile("Package.swift")).deletingLastPathComponent().path
    }

    /// Runs the examples as a reader would paste them: in a fresh folder holding copies of the checkout's
    /// `rules/`, `fixtures/` and `indexes/`, with the server of the file's `sh server` block started there (on a
    /// free port that `localhost:8080` then reaches), `hearth` on the `PATH`, every example block in one `bash`
    /// session with `set -eu`. Answers what went wrong: a command that failed, or an answer that is not what
    /// its `# →` line says; empty when every example ran as printed.
    public func run(projectRoot: String = Self.projectRoot, timeout: Double = 180) async throws -> [String] {
        let folder = TestFolders.path("hearth-docs")
        let state = folder + "/.state"
        let work = folder + "/work"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in Self.projectFolders {
            try FileManager.default.copyItem(atPath: projectRoot + "/" + name, toPath: work + "/" + name)
        }
        var server: ServerProcess?
        if let serverArguments {
            server = try await ServerProcess.launch(serverArguments, environment: ["HEARTH_PORT": "0"], currentDirectory: work)
        }
        let (script, lineMap, steps) = try self.script()
        try script.write(toFile: state + "/examples.sh", atomically: true, encoding: .utf8)
        let binary = URL(fileURLWithPath: ServerProcess.binaryPath()).deletingLastPathComponent().path
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = binary + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["DOCS_PORT"] = String(server?.port ?? 8080)
        environment["DOCS_STATE"] = state
        let result = try await Self.bash(state + "/examples.sh", directory: work, environment: environment, timeout: timeout)
        if let server {
            server.signal(SIGTERM)
            _ = try? await server.waitForExit()
        }
        var failures: [String] = []
        if result.status != 0 {
            // The failing line: from the ERR trap, or from bash's own message (`examples.sh: line 27: X: unbound variable`).
            let place = result.output.components(separatedBy: "\n").compactMap { line -> String? in
                if line.hasPrefix("DOCS-FAILED ") {
                    let parts = line.dropFirst(12).split(separator: " ", maxSplits: 1)
                    guard let n = Int(parts[0]), (1...lineMap.count).contains(n) else { return String(line) }
                    return "\(file):\(lineMap[n - 1]): `\(parts.count > 1 ? String(parts[1]) : "")` failed"
                }
                guard let range = line.range(of: #"examples\.sh: line \d+: "#, options: .regularExpression),
                      let n = Int(line[range].split(separator: " ")[2].dropLast()), (1...lineMap.count).contains(n) else { return nil }
                return "\(file):\(lineMap[n - 1]): \(line[range.upperBound...])"
            }.last ?? "\(file): the examples ended with status \(result.status)"
            failures.append("\(place)\n\(result.output.suffix(3000))")
        }
        for (number, expectation) in steps.enumerated() {
            let head = state + "/step-\(number).head"
            guard let headers = try? String(contentsOfFile: head, encoding: .utf8) else {
                if result.status == 0 { failures.append("\(file):\(expectation.line): no curl request before this expected answer") }
                continue
            }
            let body = (try? Data(contentsOf: URL(fileURLWithPath: state + "/step-\(number).body"))) ?? Data()
            let status = headers.components(separatedBy: "\n").last { $0.hasPrefix("HTTP/") }?
                .split(separator: " ").dropFirst().first.flatMap { Int($0) }
            let text = String(decoding: body, as: UTF8.self)
            guard status == expectation.status else {
                failures.append("\(file):\(expectation.line): expected status \(expectation.status), got \(status.map(String.init) ?? "none"): \(text.prefix(500))")
                continue
            }
            guard let shape = expectation.shape else { continue }
            guard let json = try? JSON.parse(Array(body)) else {
                failures.append("\(file):\(expectation.line): expected JSON, got \(text.prefix(500))")
                continue
            }
            if let mismatch = Self.mismatch(shape, json, at: "answer") {
                failures.append("\(file):\(expectation.line): \(mismatch); the answer: \(text.prefix(1000))")
            }
        }
        return failures
    }

    /// The bash script of the file's examples; for each of its lines, the markdown line it came from; and the
    /// expectations, numbered in script order.
    func script() throws -> (String, [Int], [Expectation]) {
        var lines: [String] = []
        var map: [Int] = []
        func add(_ line: String, _ from: Int) {
            lines.append(line)
            map.append(from)
        }
        for line in Self.prelude.components(separatedBy: "\n") { add(line, 0) }
        var steps: [Expectation] = []
        for block in blocks {
            switch block.kind {
            case .file(let path):
                add("mkdir -p \"$(dirname '\(path)')\" && cat > '\(path)' <<'DOCS_FILE_END'", block.firstLine - 1)
                for (offset, line) in block.lines.enumerated() { add(line, block.firstLine + offset) }
                add("DOCS_FILE_END", block.firstLine + block.lines.count)
            case .shell:
                for (offset, line) in block.lines.enumerated() {
                    let at = block.firstLine + offset
                    if let e = try Self.expectation(line, continuation: Array(block.lines[(offset + 1)...]), line: at, file: file) {
                        add("docs_expect \(steps.count)", at)
                        steps.append(e)
                    } else {
                        add(line, at)
                    }
                }
            }
        }
        return (lines.joined(separator: "\n") + "\n", map, steps)
    }

    /// Runs before the examples: `curl` reaches the test's server and keeps each answer's head and body; the
    /// expectation lines become `docs_expect N`, which sets the last answer aside as step N.
    static let prelude = #"""
        set -eu
        trap 'echo "DOCS-FAILED $LINENO $BASH_COMMAND" >&2' ERR
        curl() {
            local args=() a rc=0
            for a in "$@"; do a="${a//localhost:8080/127.0.0.1:$DOCS_PORT}"; args+=("${a//127.0.0.1:8080/127.0.0.1:$DOCS_PORT}"); done
            command curl -sS -D "$DOCS_STATE/last.head" "${args[@]}" > "$DOCS_STATE/last.body" || rc=$?
            cat "$DOCS_STATE/last.body"
            return $rc
        }
        docs_expect() {
            if [ -f "$DOCS_STATE/last.head" ]; then
                mv "$DOCS_STATE/last.head" "$DOCS_STATE/step-$1.head"
                mv "$DOCS_STATE/last.body" "$DOCS_STATE/step-$1.body"
            fi
        }
        """#

    /// Why `actual` does not hold `expected`, or nil when it does: every member of an expected object is there
    /// and matches, arrays match element by element (`"…"` as the last element: any further elements), `"…"`
    /// matches any value, numbers compare by value.
    public static func mismatch(_ expected: JSON, _ actual: JSON, at path: String) -> String? {
        switch (expected, actual) {
        case (.string(let s), _) where s == "…" || s == "...":
            return nil
        case (.object(let members), .object):
            for (key, value) in members {
                guard let there = actual[key] else { return "\(path).\(key) is missing" }
                if let m = mismatch(value, there, at: "\(path).\(key)") { return m }
            }
            return nil
        case (.array(var items), .array(let others)):
            let open = items.last.flatMap { $0.stringValue }.map { $0 == "…" || $0 == "..." } ?? false
            if open { items.removeLast() }
            guard open ? others.count >= items.count : others.count == items.count else {
                return "\(path) has \(others.count) elements, expected \(open ? "at least " : "")\(items.count)"
            }
            for (i, item) in items.enumerated() {
                if let m = mismatch(item, others[i], at: "\(path)[\(i)]") { return m }
            }
            return nil
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)):
            return Double(a) == b ? nil : "\(path) is \(actual.text), expected \(expected.text)"
        default:
            return expected == actual ? nil : "\(path) is \(actual.text), expected \(expected.text)"
        }
    }

    /// Runs a bash script to its end (or kills it after `timeout` seconds); answers its status and output.
    static func bash(_ script: String, directory: String, environment: [String: String],
                     timeout: Double) async throws -> (status: Int32, output: String) {
        try await RawHTTPConnection.onOwnThread {
            let output = try ChildProcess.pipe()
            // Nothing to read: a command that waits for input fails at once instead of hanging the test.
            let nothing = open("/dev/null", O_RDONLY)
            let child = try ChildProcess.start(childEnds: [output.write, nothing], parentEnds: [output.read]) {
                try ChildProcess(path: "/bin/bash", arguments: [script], environment: environment, currentDirectory: directory,
                                 stdin: nothing, stdout: output.write, stderr: output.write)
            }
            let reader = OutputReader(FileHandle(fileDescriptor: output.read, closeOnDealloc: true))
            let deadline = Date().addingTimeInterval(timeout)
            while child.isRunning {
                if Date() > deadline {
                    child.signal(SIGKILL)
                    throw DocExampleError("the examples did not finish within \(Int(timeout)) s: \(reader.text.suffix(2000))")
                }
                usleep(10_000)
            }
            reader.waitForEnd(timeout: 5)
            return (child.exitStatus ?? -1, reader.text)
        }
    }
}

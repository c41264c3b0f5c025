import Foundation
import HearthCore

/// The runnable examples of one markdown file, as the documentation tests run them (the convention is in
/// docs/testing.md, "Examples in the documentation"):
///
/// - a ```` ```sh server ```` block holds the `hearth serve` command the file's examples run against;
/// - ```` ```sh example ```` blocks run, in order, in one shell session;
/// - ```` ```json file=PATH ```` blocks are files the examples after them use, written at `PATH`;
/// - in an example, a comment line `# → STATUS [JSON]` right after a `curl` command is the answer it expects.
///
/// Other blocks are not run.
public struct DocExamples: Sendable {
    /// The markdown file, as named to `parse` (for messages).
    public var file: String
    /// The arguments of the `hearth serve` command of the file's `sh server` block, if it has one.
    public var serverArguments: [String]?
    /// The example and file blocks, in the file's order.
    public var blocks: [Block]

    /// A block the tests run or write.
    public struct Block: Sendable {
        /// A shell example, or a file to write.
        public enum Kind: Sendable {
            /// A `sh example` block: commands run in the page's shell session.
            case shell
            /// A `json file=PATH` block: written at `path` before the examples after it run.
            case file(path: String)
        }

        /// What the block is.
        public var kind: Kind
        /// The block's lines.
        public var lines: [String]
        /// The line number (from 1) of the block's first line in the markdown file.
        public var firstLine: Int
    }

    /// An answer an example states after a request: `# → 200 {"data": {"name": "Alice"}}`.
    public struct Expectation: Sendable {
        /// The status code.
        public var status: Int
        /// What the answer's JSON must hold, if the example shows it.
        public var shape: JSON?
        /// The line of the expectation in the markdown file.
        public var line: Int
    }

    /// The marker that starts an expectation line.
    public static let expectationMarker = "# →"

    /// Reads a markdown file's examples.
    public init(path: String, name: String? = nil) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try self.init(markdown: text, file: name ?? path)
    }

    /// Parses markdown text; `file` names it in messages.
    public init(markdown: String, file: String) throws {
        self.file = file
        blocks = []
        let lines = markdown.components(separatedBy: "\n")
        var index = 0
        while index < lines.count {
            // A fence may be indented (a block inside a list item); its lines lose the same indentation.
            let indent = lines[index].prefix { $0 == " " }.count
            let line = lines[index].dropFirst(indent)
            guard line.hasPrefix("```"), line.count > 3 else {
                index += 1
                continue
            }
            let words = line.dropFirst(3).split(separator: " ").map(String.init)
            var body: [String] = []
            let first = index + 2
            index += 1
            while index < lines.count, !lines[index].trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                let text = lines[index]
                body.append(String(text.dropFirst(min(indent, text.prefix { $0 == " " }.count))))
                index += 1
            }
            index += 1
            if words.contains("server") {
                guard serverArguments == nil else { throw DocExampleError("\(file):\(first - 1): a second `sh server` block") }
                serverArguments = try Self.serveArguments(body, file: file, line: first)
            } else if words.contains("example") {
                blocks.append(Block(kind: .shell, lines: body, firstLine: first))
            } else if let path = words.first(where: { $0.hasPrefix("file=") })?.dropFirst(5) {
                blocks.append(Block(kind: .file(path: String(path)), lines: body, firstLine: first))
            }
        }
    }

    /// The arguments after `hearth` of the one `hearth serve` command in a server block.
    static func serveArguments(_ lines: [String], file: String, line: Int) throws -> [String] {
        let commands = lines.compactMap { text -> [String]? in
            let words = (text.split(separator: "#", maxSplits: 1).first ?? "").split(separator: " ").map(String.init)
            guard let at = words.firstIndex(of: "hearth"), words.dropFirst(at + 1).first == "serve" else { return nil }
            return Array(words[(at + 1)...])
        }
        guard commands.count == 1 else {
            throw DocExampleError("\(file):\(line): a `sh server` block holds one `hearth serve` command, found \(commands.count)")
        }
        return commands[0]
    }

    /// Every expectation line of the shell examples, with the markdown line of the command it follows.
    public var expectations: [Expectation] {
        get throws {
            var out: [Expectation] = []
            for block in blocks {
                guard case .shell = block.kind else { continue }
                for (offset, line) in block.lines.enumerated() {
                    if let e = try Self.expectation(line, continuation: Array(block.lines[(offset + 1)...]),
                                                    line: block.firstLine + offset, file: file) {
                        out.append(e)
                    }
                }
            }
            return out
        }
    }

    /// Parses `# → 201 {...}`, with the JSON continued on following lines that start with `#` and two spaces.
    static func expectation(_ text: String, continuation: [String], line: Int, file: String) throws -> Expectation? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix(expectationMarker) else { return nil }
        var rest = trimmed.dropFirst(expectationMarker.count).trimmingCharacters(in: .whitespaces)
        for more in continuation {
            let t = more.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("#  ") else { break }
            rest += " " + t.dropFirst(1).trimmingCharacters(in: .whitespaces)
        }
        let status = rest.prefix { $0.isNumber }
        guard let code = Int(status), (100...599).contains(code) else {
            throw DocExampleError("\(file):\(line): an expectation starts with a status code: \(text)")
        }
        let json = rest.dropFirst(status.count).trimmingCharacters(in: .whitespaces)
        do {
            return Expectation(status: code, shape: json.isEmpty ? nil : try JSON.parse(json), line: line)
        } catch {
            throw DocExampleError("\(file):\(line): the expected answer is not JSON (\(error.message)): \(json)")
        }
    }
}

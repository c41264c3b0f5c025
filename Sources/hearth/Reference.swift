import ArgumentParser
import Foundation

/// `hearth reference`: prints docs/cli.md, the reference of every command, flag, environment variable and
/// config-file key, made from the command definitions (ArgumentParser's description of the command tree) and
/// the settings table, so that it cannot fall behind them. A test compares it with docs/cli.md.
struct Reference: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the command-line reference (docs/cli.md) from the command definitions.",
        shouldDisplay: false)

    /// How docs/cli.md is made again after a command changes.
    static let regenerate = "swift run hearth reference > docs/cli.md"

    func run() throws {
        print(try Self.render(Self.commandTree()), terminator: "")
    }

    /// ArgumentParser's description of the command tree, as `hearth --experimental-dump-help` prints it.
    static func commandTree() throws -> CommandInfo {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--experimental-dump-help"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONDecoder().decode(ToolInfo.self, from: data).command
    }

    /// The reference as markdown.
    static func render(_ root: CommandInfo) throws -> String {
        var out = """
            # Command-line reference

            This page is generated from the command definitions in `Sources/hearth` (the settings table is
            `Sources/hearth/ServeSetting.swift`): do not edit it by hand. After changing a command, a flag, an
            environment variable or a config-file key, regenerate it with `\(regenerate)`; a test fails while it
            differs from what that prints.

            Every command of `hearth` with its arguments and flags, then every setting of `hearth serve` with its
            flag, its environment variable and its config-file key. `hearth COMMAND --help` prints the same for one
            command.


            """
        out += renderSettings()
        var commands: [(path: String, info: CommandInfo)] = []
        func walk(_ info: CommandInfo, _ path: String) {
            guard info.shouldDisplay ?? true else { return }
            commands.append((path, info))
            for sub in info.subcommands ?? [] where sub.commandName != "help" { walk(sub, path + " " + sub.commandName) }
        }
        walk(root, root.commandName)
        for (path, info) in commands { out += try renderCommand(path, info) }
        return out
    }

    static func renderSettings() -> String {
        var out = """
            ## Settings of `hearth serve`

            Each setting is taken from its flag, else its environment variable, else the JSON file given with
            `--config` (one object of these keys; values are strings, numbers or `true`/`false`, each checked as its
            flag is; an unknown key stops the server, naming it). A dash marks a way the setting cannot be given.

            | config key | flag | environment variable | value | what it sets |
            |---|---|---|---|---|

            """
        for s in ServeSetting.all {
            let summary = (s.deprecated ? "**Deprecated.** " : "") + s.summary
            out += "| `\(s.key)` | \(s.flag.map { "`\($0)`" } ?? "—") | \(s.variable.map { "`\($0)`" } ?? "—") | \(s.value) | \(cell(summary)) |\n"
        }
        out += """

            `HEARTH_DATA` is also where `hearth users`, `hearth fixtures`, `hearth import` and `hearth export` look when
            they are given no `--data`. The test helpers read `HEARTH_BINARY`: the `hearth` binary to run
            (docs/testing.md).


            """
        return out
    }

    static func renderCommand(_ path: String, _ info: CommandInfo) throws -> String {
        var out = "## `\(path)`\n\n"
        if let abstract = info.abstract, !abstract.isEmpty { out += abstract + "\n\n" }
        if let discussion = info.discussion, !discussion.isEmpty { out += discussion + "\n\n" }
        let subcommands = (info.subcommands ?? []).filter { ($0.shouldDisplay ?? true) && $0.commandName != "help" }
        if !subcommands.isEmpty {
            out += "| command | what it does |\n|---|---|\n"
            for sub in subcommands { out += "| `\(path) \(sub.commandName)` | \(cell(sub.abstract ?? "")) |\n" }
            out += "\n"
        }
        let arguments = (info.arguments ?? []).filter { $0.shouldDisplay && !["help", "version"].contains($0.preferredName?.name) }
        if !arguments.isEmpty {
            out += "| argument | what it is |\n|---|---|\n"
            for argument in arguments {
                var text = argument.abstract ?? ""
                if let value = argument.defaultValue, argument.kind != "flag" { text += " Default: `\(value)`." }
                out += "| `\(argument.usage)` | \(cell(text)) |\n"
            }
            out += "\n"
        }
        if path == "hearth serve" {
            // Every flag of a setting must be one the parser knows, or the table above says what is not so.
            let flags = Set(arguments.compactMap { $0.names }.flatMap { $0 }.filter { $0.kind == "long" }.map { "--" + $0.name })
            for s in ServeSetting.all where !s.deprecated {
                if let flag = s.flag, !flags.contains(flag) { throw ValidationError("setting \(s.key): hearth serve has no flag \(flag)") }
            }
        }
        return out
    }

    /// Text for a table cell: one line, pipes escaped.
    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "|", with: "\\|")
    }
}

/// The parts of ArgumentParser's tool description (`--experimental-dump-help`) the reference uses.
struct ToolInfo: Decodable {
    var command: CommandInfo
}

/// A command in ArgumentParser's tool description.
struct CommandInfo: Decodable {
    var commandName: String
    var shouldDisplay: Bool?
    var abstract: String?
    var discussion: String?
    var subcommands: [CommandInfo]?
    var arguments: [ArgumentInfo]?
}

/// An argument, option or flag in ArgumentParser's tool description.
struct ArgumentInfo: Decodable {
    struct Name: Decodable {
        var kind: String
        var name: String
    }

    var kind: String
    var shouldDisplay: Bool
    var isOptional: Bool
    var isRepeating: Bool
    var names: [Name]?
    var preferredName: Name?
    var valueName: String?
    var defaultValue: String?
    var abstract: String?

    /// How the argument is written: `--output <output>`, `-o`, `<file> ...`.
    var usage: String {
        let spelled = (names ?? []).map { ($0.kind == "long" ? "--" : "-") + $0.name }.joined(separator: ", ")
        let value = "<\(valueName ?? preferredName?.name ?? "value")>" + (isRepeating ? " ..." : "")
        switch kind {
        case "positional": return value
        case "flag": return spelled
        default: return spelled + " " + value
        }
    }
}

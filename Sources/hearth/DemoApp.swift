import ArgumentParser
import Foundation
import HearthEngine

/// One of the four seed apps, as `hearth serve --demo APP` starts it: its rules, fixture and index files.
struct DemoApp {
    /// The apps `--demo` knows.
    static let names = ["blue-avalanche", "letter", "prolific", "comeover"]

    /// The app's name.
    let name: String
    /// `rules/<app>.rules`, found.
    let rulesFile: String
    /// `fixtures/<app>.json`, found.
    let fixtureFile: String
    /// `indexes/<app>.json`, found: the long text fields the app never queries, exempted from indexing.
    let indexesFile: String

    init(_ name: String) throws {
        guard Self.names.contains(name) else {
            throw ValidationError("unknown demo app '\(name)'; expected one of \(Self.names.joined(separator: ", "))")
        }
        self.name = name
        rulesFile = try Self.locate("rules/\(name).rules")
        fixtureFile = try Self.locate("fixtures/\(name).json")
        indexesFile = try Self.locate("indexes/\(name).json")
    }

    /// A project file, relative to the working directory, else to the source tree this binary was built from
    /// (so that `swift run hearth serve --demo letter` works from any folder of a checkout).
    static func locate(_ relative: String, filePath: String = #filePath) throws -> String {
        let here = FileManager.default.currentDirectoryPath + "/" + relative
        var root = URL(fileURLWithPath: filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }  // Sources/hearth/DemoApp.swift
        let source = root.appendingPathComponent(relative).path
        for candidate in [here, source] where FileManager.default.fileExists(atPath: candidate) { return candidate }
        throw ValidationError("\(relative) not found: looked for \(here) and \(source); run from the Hearth source tree")
    }

    /// What a new user needs to try the app: the admin key and the demo accounts.
    func banner(adminKey: String, fixture: FixtureFile) -> String {
        var lines = ["demo app \(name): rules \(rulesFile), data \(fixtureFile) (\(fixture.documents.count) documents), indexes \(indexesFile)",
                     "admin key: \(adminKey)  (Authorization: Bearer <key> bypasses the rules)",
                     "demo users (uid: email / password; sign in with POST /v1/auth/login):"]
        for user in fixture.users { lines.append("  \(user.uid): \(user.email) / \(user.password)") }
        lines.append("the data folder is temporary and removed when the server stops")
        lines.append("development mode is on: denials name the deciding rule and why it failed (never for a real deployment)")
        return lines.joined(separator: "\n")
    }
}

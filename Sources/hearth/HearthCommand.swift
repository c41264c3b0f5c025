import ArgumentParser

/// The `hearth` command line.
@main
struct HearthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearth",
        abstract: "A self-hosted document database with live sync, in the mould of Cloud Firestore.",
        subcommands: [Serve.self, Rules.self, Functions.self, Indexes.self, Users.self, Outbox.self, Fixtures.self, Import.self, Export.self, Reference.self]
    )
}

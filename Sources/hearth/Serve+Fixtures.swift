import ArgumentParser
import Foundation
import HearthCore
import HearthEngine
import HearthServer

/// What `--fixtures` and `--demo` add to a start: the data to load, the banner to print, the folder to remove.
struct FixtureStartup {
    /// The dataset stored before the server answers, if any.
    var fixture: FixtureFile?
    /// Printed after the listening line.
    var banner: String?
    /// A temporary data folder, removed at exit.
    var temporaryFolder: String?

    /// Stores the fixture's documents and creates its accounts.
    func load(into services: HearthServices) async throws {
        guard let fixture else { return }
        try await FixtureLoader(database: services.database, auth: services.auth).load(fixture)
    }

    /// Removes the temporary data folder. A store thread finishing its last file operation may add an entry
    /// while the folder is being emptied, so the removal is tried again briefly until the folder is gone.
    func cleanUp() {
        guard let temporaryFolder else { return }
        for _ in 0..<20 {
            try? FileManager.default.removeItem(atPath: temporaryFolder)
            if !FileManager.default.fileExists(atPath: temporaryFolder) { return }
            usleep(50_000)
        }
    }
}

extension Serve {
    /// Reads `--fixtures`, and for `--demo` points the configuration at the app's rules and index file, a
    /// fresh temporary data folder and a known admin key.
    func prepareFixtures(_ configuration: inout ServerConfiguration) throws -> FixtureStartup {
        guard let demo else {
            return FixtureStartup(fixture: try fixtures.map(Fixtures.parse))
        }
        if fixtures != nil || rules != nil || data != nil || indexes != nil {
            throw ValidationError("--demo brings its own rules, fixtures, indexes and data folder; drop --rules, --fixtures, --indexes and --data")
        }
        let app = try DemoApp(demo)
        let fixture = try Fixtures.parse(app.fixtureFile)
        let folder = NSTemporaryDirectory() + "hearth-demo-\(demo)-" + makeAutoID()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        configuration.storage.dataDirectory = folder
        configuration.rulesFile = app.rulesFile
        configuration.indexesFile = app.indexesFile
        configuration.dev = true
        let key = configuration.adminKey ?? "hak_demo_" + makeAutoID() + makeAutoID()
        configuration.adminKey = key
        return FixtureStartup(fixture: fixture, banner: app.banner(adminKey: key, fixture: fixture),
                              temporaryFolder: folder)
    }
}

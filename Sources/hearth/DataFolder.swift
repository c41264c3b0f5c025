import ArgumentParser
import Foundation
import HearthStore

/// The data folder a tool acts on, and where an export goes.
enum DataFolder {
    /// `--data` when given, else `HEARTH_DATA`, else `./hearth-data`.
    static func path(_ option: String?) -> String {
        option ?? ProcessInfo.processInfo.environment["HEARTH_DATA"] ?? "./hearth-data"
    }

    /// The folder, for a tool that only reads: it must hold a database already.
    static func existing(_ option: String?) throws -> String {
        let folder = path(option)
        guard FileManager.default.fileExists(atPath: Store.Configuration(dataDirectory: folder).databasePath) else {
            throw ValidationError("no database in \(folder)")
        }
        return folder
    }
}

import Foundation
import HearthStore
import Logging

/// How a tool that writes reaches a data folder. When a server holds the folder, through that server (its admin
/// API on the loopback address it recorded in the folder), so that the change is the server's own: its
/// listeners, caches and revocations hear of it at once, and the store keeps a single writer. With no server
/// running, by opening the database file, holding the folder's lock meanwhile (`DataFolderLock`), so that no
/// server starts on it until the tool is done.
enum DataFolderAccess {
    case server(ServerConnection)
    case file(Store)

    /// How long a tool waits for another tool that holds the folder to finish.
    static let toolWait: Duration = .seconds(10)

    /// Reaches `folder` for `tool` (how the folder's owner record names it while the tool holds the lock:
    /// `hearth users`).
    static func open(_ folder: String, tool: String) throws -> DataFolderAccess {
        var configuration = Store.Configuration(dataDirectory: folder)
        // The tool does not know the server's index file: it keeps the entries the folder was last served with.
        configuration.usesServedIndexDefinitions = true
        configuration.dataFolderOwner = tool
        let deadline = ContinuousClock.now + toolWait
        while true {
            do {
                return .file(try Store(configuration: configuration, logger: Logger(label: tool) { _ in SwiftLogNoOpLogHandler() }))
            } catch let inUse as DataFolderInUse {
                if inUse.address != nil { return .server(try ServerConnection(folder: folder, holder: inUse)) }
                switch inUse.holderName {
                case "hearth serve"?:
                    throw ToolError("the data folder \(folder) is held by \(who(inUse)), which has not said where it answers "
                                    + "(it may be starting, or an older version); nothing was changed. Run this again once "
                                    + "it listens, or stop it")
                case let name? where name.hasPrefix("hearth ") && name != "hearth import" && ContinuousClock.now < deadline:
                    // Another tool on the file: it finishes soon.
                    Thread.sleep(forTimeInterval: 0.05)
                default:
                    throw ToolError("the data folder \(folder) is in use by \(who(inUse)); nothing was changed. Run this "
                                    + "again once it has finished")
                }
            }
        }
    }

    /// The holder as messages name it: `hearth serve (pid 123)`.
    static func who(_ inUse: DataFolderInUse) -> String {
        (inUse.holderName ?? "another process") + (inUse.holder.map { " (pid \($0))" } ?? "")
    }
}

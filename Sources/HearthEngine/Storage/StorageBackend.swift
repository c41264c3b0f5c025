import HearthAuth
import HearthCore
import HearthStore
import Logging

/// A data folder's storage, opened: its documents and its accounts, over one file and one writer. The one
/// place that picks a concrete backend (today SQLite's), so the server only ever sees the protocols.
package struct StorageBackend: Sendable {
    /// The documents.
    package let documents: any DocumentStorage
    /// Accounts, sessions, one-time tokens and the outbox.
    package let accounts: any AuthStorage
    /// Push devices, their topics and the queue of notifications (beside the accounts).
    package let push: any PushStorage

    /// Opens (creating and migrating as needed) the storage a configuration describes. Accounts made and
    /// deleted queue the events of `functions`' triggers (give the engine the same holder) in their own commit.
    package static func open(_ configuration: StorageConfiguration, functions: FunctionsInForce? = nil,
                             logger: Logger) throws -> StorageBackend {
        let store = try Store(configuration: Store.Configuration(configuration), logger: logger)
        let documents = SQLiteDocumentStorage(store)
        let seal = try OutboxSeal.loadOrCreate(dataDirectory: configuration.dataDirectory)
        // The folder's owner clears what a crash left of uploads; a tool that only reads must not (an upload
        // of the running server may be in flight).
        if configuration.dataFolderOwner != nil {
            let swept = try documents.sweepBlobs()
            if swept.temporaryFiles + swept.blobs + swept.derived > 0 {
                logger.info("removed \(swept.temporaryFiles) unfinished upload(s), \(swept.blobs) unnamed blob(s) and the thumbnails of \(swept.derived) removed blob(s) left by an earlier run")
            }
            let expired = try documents.uploads.sweep(now: .now())
            if expired > 0 { logger.info("removed \(expired) expired resumable upload(s)") }
        }
        let accounts = SQLiteAuthStorage(file: store, seal: seal, logger: logger,
                                         events: functions.map { SQLiteAccountEvents(functions: $0) })
        return StorageBackend(documents: documents, accounts: accounts, push: accounts)
    }
}

extension Store.Configuration {
    /// The SQLite store's settings for a storage configuration, its own tuning left at the defaults.
    package init(_ configuration: StorageConfiguration) {
        self.init(dataDirectory: configuration.dataDirectory)
        synchronous = configuration.synchronous == .full ? .full : .normal
        changeLogRetention = max(1, configuration.changeLogRetention)
        if let readers = configuration.readers { self.readers = readers }
        compositeIndexes = configuration.compositeIndexes
        fieldOverrides = configuration.fieldOverrides
        usesServedIndexDefinitions = configuration.usesServedIndexDefinitions
        dataFolderOwner = configuration.dataFolderOwner
    }
}

import HearthCore

/// How a data folder's storage is opened: the settings every backend honours. Each backend keeps its own
/// tuning (the SQLite store's page caches and WAL limits) at its defaults.
public struct StorageConfiguration: Sendable {
    /// The data folder; created if missing.
    public var dataDirectory: String
    /// Durability of acknowledged writes. `normal` (default): acknowledged at commit, surviving a crash or
    /// `kill -9` of the process, with the log synced within 50 ms; `full`: acknowledged only once synced to
    /// disk, so a power loss keeps it too.
    public var synchronous: Synchronous = .normal
    /// Change-log rows kept for listeners that resume; older resume tokens get a `reset` snapshot.
    public var changeLogRetention: Int = 100_000
    /// Reader threads (and connections) for reads that scan; nil lets the backend choose.
    public var readers: Int?
    /// Composite indexes to keep (besides every single field); opening builds new ones and drops the rest.
    public var compositeIndexes: [CompositeIndex] = []
    /// Single-field overrides (exemptions); opening rebuilds the entries of collection ids whose overrides changed.
    public var fieldOverrides: [FieldOverride] = []
    /// Opens with the index definitions the folder was last served with instead of the two above, changing no
    /// entries: for tools that write to a folder a server serves.
    public var usesServedIndexDefinitions = false
    /// When set, the storage holds the data folder's lock while open, under this name: the folder's only owner.
    public var dataFolderOwner: String?

    /// The durability level of commits.
    public enum Synchronous: String, Sendable { case full = "FULL", normal = "NORMAL" }

    /// Makes a configuration for a data folder.
    public init(dataDirectory: String) { self.dataDirectory = dataDirectory }
}

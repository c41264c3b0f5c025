import Foundation

/// Running totals of a store's reads, for `/metrics` and for checking that reads stay within what the index
/// narrows them to. Counted once per read call, never per row, so the reader threads share a lock rarely.
public final class StoreStatistics: @unchecked Sendable {
    private let lock = NSLock()
    private var scanned = 0

    init() {}

    /// Documents fetched by queries, aggregations, collection listings and listener loads since the store
    /// opened: every document read to be checked against a filter or returned (point reads by path are not
    /// counted).
    public var documentsScanned: Int { lock.withLock { scanned } }

    func addScanned(_ n: Int) {
        guard n > 0 else { return }
        lock.withLock { scanned += n }
    }
}

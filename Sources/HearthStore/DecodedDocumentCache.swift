import Foundation
import HearthCore

/// Decoded documents for security rules' `get()` and `exists()` outside transactions: a rule such as
/// "the settings document says the collection is open" reads the same few documents on every request, and
/// a point read plus a decode costs more than the rest of the rule.
///
/// Exact for this process's writes: the writer drops every document it changed right after its commit,
/// before any of the commit's writes is acknowledged. A read that was under way while its document changed
/// may hold the older state, so what it read is not kept. Nothing else writes the database while the store
/// is open (tools act through the server, `DataFolderLock`), so an entry stays exact until a commit drops it.
///
/// Bounded in entries and in stored bytes; documents larger than `maxDocumentBytes` are decoded each time.
final class DecodedDocumentCache: @unchecked Sendable {
    private struct Entry {
        var document: Document?
        var bytes: Int
    }

    private let lock = NSLock()
    private var entries: [DocumentPath: Entry] = [:]
    /// Reads in flight by path, and the paths changed while one of them was.
    private var reading: [DocumentPath: Int] = [:]
    private var changedWhileReading: Set<DocumentPath> = []
    /// The stored size of the documents held.
    private var bytes = 0
    private let capacity: Int
    private let maxBytes: Int
    private let maxDocumentBytes: Int

    /// - Parameters:
    ///   - capacity: entries kept; when full, the cache starts over.
    ///   - maxBytes: stored bytes of the documents kept; past it, the cache starts over.
    ///   - maxDocumentBytes: documents stored larger than this are not kept.
    init(capacity: Int = 4_096, maxBytes: Int = 16 << 20, maxDocumentBytes: Int = 64 << 10) {
        self.capacity = capacity
        self.maxBytes = maxBytes
        self.maxDocumentBytes = maxDocumentBytes
    }

    /// The document at `path` (nil when missing), from the cache or decoded from what `read` finds.
    func document(at path: DocumentPath, read: () throws -> StoredDocument?) throws -> Document? {
        lock.lock()
        if let entry = entries[path] {
            lock.unlock()
            return entry.document
        }
        reading[path, default: 0] += 1
        lock.unlock()
        let document: Document?
        let size: Int
        do {
            let stored = try read()
            document = try stored?.decoded()
            size = stored?.data.count ?? 0
        } catch {
            finish(path, keeping: nil)
            throw error
        }
        finish(path, keeping: size > maxDocumentBytes ? nil : Entry(document: document, bytes: size))
        return document
    }

    private func finish(_ path: DocumentPath, keeping entry: Entry?) {
        lock.lock()
        defer { lock.unlock() }
        let changed = changedWhileReading.contains(path)
        let left = reading[path, default: 1] - 1
        if left == 0 {
            reading[path] = nil
            if changed { changedWhileReading.remove(path) }
        } else {
            reading[path] = left
        }
        guard let entry, !changed else { return }
        if let old = entries.removeValue(forKey: path) { bytes -= old.bytes }
        if entries.count >= capacity || bytes + entry.bytes > maxBytes {
            entries.removeAll(keepingCapacity: true)
            bytes = 0
        }
        entries[path] = entry
        bytes += entry.bytes
    }

    /// The entries held and their stored bytes.
    var usage: (count: Int, bytes: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (entries.count, bytes)
    }

    /// Forgets documents a commit changed; called after the commit, before its writes are acknowledged.
    func invalidate(_ changes: [ChangeRecord]) {
        lock.lock()
        defer { lock.unlock() }
        if entries.isEmpty && reading.isEmpty { return }
        for change in changes {
            if let old = entries.removeValue(forKey: change.path) { bytes -= old.bytes }
            if reading[change.path] != nil { changedWhileReading.insert(change.path) }
        }
    }
}

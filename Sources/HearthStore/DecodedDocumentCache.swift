import Foundation
import HearthCore

/// Decoded documents for security rules' `get()` and `exists()` outside transactions: a rule such as
/// "the settings document says the collection is open" reads the same few documents on every request, and
/// a point read plus a decode costs more than the rest of the rule.
///
/// Exact for this process's writes: the writer drops every document it changed right after its commit,
/// before any of the commit's writes is acknowledged. A read that was under way while its document changed
/// may hold the older state, so what it read is not kept. Another process writing the same database file
/// is seen within `lifetime`, after which an entry is read again.
final class DecodedDocumentCache: @unchecked Sendable {
    private struct Entry {
        var document: Document?
        var expires: UInt64
    }

    private let lock = NSLock()
    private var entries: [DocumentPath: Entry] = [:]
    /// Reads in flight by path, and the paths changed while one of them was.
    private var reading: [DocumentPath: Int] = [:]
    private var changedWhileReading: Set<DocumentPath> = []
    private let capacity: Int
    private let lifetime: UInt64

    /// - Parameters:
    ///   - capacity: entries kept; when full, the cache starts over.
    ///   - lifetime: nanoseconds an entry is trusted (bounds how late another process's writes are seen).
    init(capacity: Int = 4_096, lifetime: UInt64 = 1_000_000_000) {
        self.capacity = capacity
        self.lifetime = lifetime
    }

    /// The document at `path` (nil when missing), from the cache or from `read`.
    func document(at path: DocumentPath, read: () throws -> Document?) throws -> Document? {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        if let entry = entries[path], entry.expires > now {
            lock.unlock()
            return entry.document
        }
        reading[path, default: 0] += 1
        lock.unlock()
        let document: Document?
        do {
            document = try read()
        } catch {
            finish(path, keeping: nil)
            throw error
        }
        finish(path, keeping: Entry(document: document, expires: now + lifetime))
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
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[path] = entry
    }

    /// The entries held.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    /// Forgets documents a commit changed; called after the commit, before its writes are acknowledged.
    func invalidate(_ changes: [ChangeRecord]) {
        lock.lock()
        defer { lock.unlock() }
        if entries.isEmpty && reading.isEmpty { return }
        for change in changes {
            entries[change.path] = nil
            if reading[change.path] != nil { changedWhileReading.insert(change.path) }
        }
    }
}

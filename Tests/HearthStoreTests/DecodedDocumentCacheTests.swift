import Foundation
import Synchronization
import HearthCore
import HearthSQLite
@testable import HearthStore
import Testing

/// The cache behind rules' `get()`: exact for this process's writes, even with reads under way while a
/// document changes, and bounded in size.
@Suite struct DecodedDocumentCacheTests {
    func put(_ path: DocumentPath, _ n: Int, in store: Store) async throws {
        try await HearthStoreTests.put(path.description, #"{"n": \#(n)}"#, in: store)
    }

    @Test func lookupsSeeEveryCommittedWrite() async throws {
        try await withTemporaryStore { store in
            let path = try DocumentPath("settings/app")
            #expect(try store.ruleLookup(path) == nil)
            #expect(try store.ruleLookup(path) == nil)
            try await put(path, 1, in: store)
            #expect(try store.ruleLookup(path)?.fields["n"] == .int(1))
            try await put(path, 2, in: store)
            #expect(try store.ruleLookup(path)?.fields["n"] == .int(2))
            try await store.write { context in _ = try context.delete(path, commitTime: context.nextCommitTime()) }
            #expect(try store.ruleLookup(path) == nil)
        }
    }

    /// Inside a batch of commits, a rule sees the batch's own earlier writes, not the cached committed state.
    @Test func writesOfTheBatchUnderWayAreSeenByItsLookups() async throws {
        try await withTemporaryStore { store in
            let path = try DocumentPath("settings/app")
            try await put(path, 1, in: store)
            #expect(try store.ruleLookup(path)?.fields["n"] == .int(1))
            let (before, after) = try await store.write { context in
                let before = try context.ruleLookup(path)?.fields["n"]
                let t = context.nextCommitTime()
                try context.put(StoredDocument(path: path, data: Array(#"{"n": 2}"#.utf8), createTime: t, updateTime: t),
                                commitTime: t)
                return (before, try context.ruleLookup(path)?.fields["n"])
            }
            #expect(before == .int(1))
            #expect(after == .int(2))
            #expect(try store.ruleLookup(path)?.fields["n"] == .int(2))
        }
    }

    /// Readers keep looking the document up while it changes; once a write is acknowledged, a lookup must
    /// give that write's value, never one a reader fetched before it and cached after it.
    @Test func readsUnderWayDuringACommitCacheNothingStale() async throws {
        try await withTemporaryStore { store in
            let path = try DocumentPath("settings/app")
            try await put(path, 0, in: store)
            let stop = StopFlag()
            let readers = (0..<2).map { _ in
                Thread {
                    while !stop.isSet { _ = try? store.ruleLookup(path) }
                }
            }
            readers.forEach { $0.start() }
            defer { stop.set() }
            for n in 1...1_000 {
                try await put(path, n, in: store)
                let seen = try store.ruleLookup(path)?.fields["n"]
                #expect(seen == .int(Int64(n)), "after write \(n)")
                if seen != .int(Int64(n)) { break }
            }
        }
    }

    @Test func theCacheStaysBounded() throws {
        let cache = DecodedDocumentCache(capacity: 4, maxBytes: 1_000, maxDocumentBytes: 300)
        let path = try DocumentPath("a/b")
        func doc(_ n: Int64, _ at: DocumentPath? = nil, padding: Int = 0) -> StoredDocument {
            var fields: [String: Value] = ["n": .int(n)]
            if padding > 0 { fields["pad"] = .string(String(repeating: "x", count: padding)) }
            return StoredDocument(Document(path: at ?? path, fields: fields, createTime: .now(), updateTime: .now()))
        }
        #expect(try cache.document(at: path) { doc(1) }?.fields["n"] == .int(1))
        #expect(try cache.document(at: path) { doc(2) }?.fields["n"] == .int(1))
        // A failed read keeps nothing; a missing document is kept as missing.
        struct Failed: Error {}
        let other = try DocumentPath("a/c")
        #expect(throws: Failed.self) { try cache.document(at: other) { throw Failed() } }
        #expect(try cache.document(at: other) { nil } == nil)
        #expect(try cache.document(at: other) { doc(9, other) } == nil)
        // At most 4 entries.
        for k in 0..<10 { _ = try cache.document(at: try DocumentPath("x/\(k)")) { nil } }
        #expect(cache.usage.count <= 4)
        // A document over 300 stored bytes is decoded each time, never kept.
        let big = try DocumentPath("big/one")
        #expect(try cache.document(at: big) { doc(1, big, padding: 400) }?.fields["n"] == .int(1))
        #expect(try cache.document(at: big) { doc(2, big, padding: 400) }?.fields["n"] == .int(2))
        // At most 1,000 stored bytes: five 250-byte documents do not all stay.
        for k in 0..<5 {
            let p = try DocumentPath("mid/\(k)")
            _ = try cache.document(at: p) { doc(Int64(k), p, padding: 220) }
        }
        #expect(cache.usage.bytes <= 1_000)
    }
}

/// Tells the reader threads of a test to stop.
private final class StopFlag: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}

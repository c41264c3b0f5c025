import Foundation
import HearthCore

/// Decisions of `get` requests, kept so that the same caller reading the same unchanged document again is
/// decided without evaluating the rules again.
///
/// A rules decision is a function of the program, the request's path, method and caller, the document read
/// (`resource`), the documents the rules read with `get()`/`exists()`, and `request.time`. A kept decision is
/// reused only when all of these are what they were:
/// - the program: each program keeps its own decisions, so a reload starts afresh;
/// - the path and the caller (`request.auth`, uid and every token claim) are the key;
/// - `resource`: the stored document's bytes are compared;
/// - every document the rules read is read again (through the same lookup, so as fresh as a new decision's
///   reads) and compared with the one the decision read, or its absence;
/// - a decision that read `request.time`, or whose document reads failed, is never kept.
///
/// Bounded in entries and in bytes held; when either is reached, it starts over. Documents stored larger
/// than `maxResourceBytes` are decided each time.
final class ReadDecisions: @unchecked Sendable {
    /// Whose read of which document a decision is for. Entries are found by the key's hash and then compared
    /// whole, so that finding one compares two integers instead of two paths.
    struct Key: Equatable {
        let path: DocumentPath
        let auth: RulesAuth?

        /// FNV-1a over the path's bytes (cheaper than `Hasher` for a few short segments), mixed with the
        /// caller's hash. Equal fingerprints of different keys only cost a decision: the key is compared whole.
        var fingerprint: UInt64 {
            var h: UInt64 = 14_695_981_039_346_656_037
            for segment in path.segments {
                for byte in segment.utf8 { h = (h ^ UInt64(byte)) &* 1_099_511_628_211 }
                h = (h ^ 0x2F) &* 1_099_511_628_211
            }
            if let auth { h ^= UInt64(bitPattern: Int64(auth.hashValue)) }
            return h
        }
    }

    /// A document the decision read, and what it found.
    struct Read {
        let path: DocumentPath
        let after: Bool
        let document: Document?
    }

    /// A kept decision (a class: finding one retains one object).
    final class Entry: Sendable {
        let key: Key
        /// The stored bytes of `resource`, nil when the document did not exist.
        let resource: [UInt8]?
        let reads: [Read]
        let decision: RulesDecision

        init(key: Key, resource: [UInt8]?, reads: [Read], decision: RulesDecision) {
            self.key = key
            self.resource = resource
            self.reads = reads
            self.decision = decision
        }

        /// Roughly what the entry holds: the stored bytes of the document read, and its own parts.
        var size: Int { 128 + (resource?.count ?? 0) + 64 * reads.count }
    }

    /// One part of the decisions, with its own lock: the network threads deciding reads at the same time
    /// mostly take different locks.
    private final class Stripe: @unchecked Sendable {
        let lock = NSLock()
        var entries: [UInt64: Entry] = [:]
        var bytes = 0
        /// Entries found, and found no longer valid: the difference is the requests decided by a kept decision.
        var found = 0
        var stale = 0
        var kept = 0
    }

    private let stripes: [Stripe]
    let capacity: Int
    let maxBytes: Int
    let maxResourceBytes: Int

    /// - Parameters:
    ///   - capacity: decisions kept in all; when a stripe's share is full, that stripe starts over.
    ///   - maxBytes: bytes held in all (stored documents and the decisions' own size), shared out the same way.
    ///   - maxResourceBytes: reads of documents stored larger than this are decided each time.
    init(capacity: Int = 65_536, maxBytes: Int = 32 << 20, maxResourceBytes: Int = 16 << 10, stripes: Int = 16) {
        self.capacity = capacity
        self.maxBytes = maxBytes
        self.maxResourceBytes = maxResourceBytes
        precondition(stripes > 0 && stripes & (stripes - 1) == 0, "a power of two")
        self.stripes = (0..<stripes).map { _ in Stripe() }
    }

    private func stripe(_ fingerprint: UInt64) -> Stripe {
        stripes[Int(truncatingIfNeeded: fingerprint >> 32) & (stripes.count - 1)]
    }

    /// The decision kept for `key`, counted as reused unless the caller reports it `stale`.
    func entry(_ key: Key, fingerprint: UInt64) -> Entry? {
        let stripe = stripe(fingerprint)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        guard let entry = stripe.entries[fingerprint], entry.key == key else { return nil }
        stripe.found += 1
        return entry
    }

    func keep(_ entry: Entry, fingerprint: UInt64) {
        let size = entry.size
        let stripe = stripe(fingerprint)
        stripe.lock.lock()
        defer { stripe.lock.unlock() }
        if let replaced = stripe.entries.removeValue(forKey: fingerprint) { stripe.bytes -= replaced.size }
        if stripe.entries.count >= capacity / stripes.count || stripe.bytes + size > maxBytes / stripes.count {
            stripe.entries.removeAll(keepingCapacity: true)
            stripe.bytes = 0
        }
        stripe.entries[fingerprint] = entry
        stripe.bytes += size
        stripe.kept += 1
    }

    /// Reports that the entry found for `key` no longer holds.
    func stale(_ fingerprint: UInt64) {
        let stripe = stripe(fingerprint)
        stripe.lock.lock()
        stripe.stale += 1
        stripe.lock.unlock()
    }

    var statistics: RulesProgram.ReadDecisionStatistics {
        var out = RulesProgram.ReadDecisionStatistics(held: 0, kept: 0, reused: 0)
        for stripe in stripes {
            stripe.lock.lock()
            out.held += stripe.entries.count
            out.kept += stripe.kept
            out.reused += stripe.found - stripe.stale
            stripe.lock.unlock()
        }
        return out
    }

    /// Whether two documents are equal: their times first, then their fields, which a cache of decoded
    /// documents usually hands out as the very same storage (equal without comparing a field).
    static func same(_ a: Document?, _ b: Document?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        guard a.updateTime == b.updateTime, a.createTime == b.createTime, a.path == b.path else { return false }
        let shared = withUnsafeBytes(of: a.fields) { x in withUnsafeBytes(of: b.fields) { y in x.elementsEqual(y) } }
        return shared || a.fields == b.fields
    }

    /// Whether two stored documents are the same bytes.
    static func same(_ a: [UInt8]?, _ b: [UInt8]?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }
}

extension RulesProgram {
    /// How often `evaluateRead` reused a decision.
    public struct ReadDecisionStatistics: Sendable, Equatable {
        /// Decisions held now.
        public var held: Int
        /// Decisions kept since the program was compiled.
        public var kept: Int
        /// Requests decided by a decision kept earlier.
        public var reused: Int

        /// Makes statistics (for comparisons).
        public init(held: Int, kept: Int, reused: Int) {
            self.held = held
            self.kept = kept
            self.reused = reused
        }
    }

    /// How often this program's read decisions were reused.
    public var readDecisionStatistics: ReadDecisionStatistics { readDecisions.statistics }

    /// Decides a `get` of one stored document (`request.storedResource`, nil when missing), as `evaluate`
    /// does, reusing the decision of an earlier request by the same caller for the same document when nothing
    /// the decision depends on has changed since (see `ReadDecisions`). Other requests are decided afresh.
    public func evaluateRead(_ request: RulesRequest, lookup: any RulesDocumentLookup) -> RulesDecision {
        guard request.method == .get, request.resource == nil, request.requestResource == nil, request.query == nil,
              (request.storedResource?.data.count ?? 0) <= readDecisions.maxResourceBytes
        else { return evaluate(request, lookup: lookup) }
        let key = ReadDecisions.Key(path: request.path, auth: request.auth)
        let fingerprint = key.fingerprint
        let resource = request.storedResource?.data
        if let entry = readDecisions.entry(key, fingerprint: fingerprint) {
            if ReadDecisions.same(entry.resource, resource), entry.reads.allSatisfy({ Self.unchanged($0, lookup) }) {
                return entry.decision
            }
            readDecisions.stale(fingerprint)
        }
        var made: Evaluator?
        let decision = evaluate(request, lookup: lookup, access: nil, made: &made)
        // No evaluator: no condition was evaluated, so the decision read nothing.
        var reads: [ReadDecisions.Read] = []
        if let made {
            guard !made.readClock, !made.lookupFailed, let documents = made.documentsRead else { return decision }
            reads = documents.map {
                ReadDecisions.Read(path: DocumentPath(uncheckedSegments: Array($0.key.segments)), after: $0.key.after,
                                   document: $0.document)
            }
        }
        readDecisions.keep(.init(key: key, resource: resource, reads: reads, decision: decision), fingerprint: fingerprint)
        return decision
    }

    /// Whether a document a kept decision read is still what it found (a failed read counts as changed).
    private static func unchanged(_ read: ReadDecisions.Read, _ lookup: any RulesDocumentLookup) -> Bool {
        do {
            let now = read.after ? try lookup.getAfter(read.path) : try lookup.get(read.path)
            return ReadDecisions.same(now, read.document)
        } catch {
            return false
        }
    }
}

import Foundation
import HearthCore
import Logging

/// Deferred field-index writes.
///
/// A write removes the index rows its change makes stale in its own transaction, as before, but the rows it
/// adds wait in memory (`WriterState.pending`) and reach the `field_index` table later, merged in key order
/// by the writer thread between batches, a chunk per transaction. A page of the index then takes many rows in
/// one write instead of one row per commit: every commit of a few creates used to write about one index page
/// per row (`bench/README.md`).
///
/// - **Reads that use the index wait for the merge.** `Store.read` (queries, aggregations, listings, a
///   listener's first result) asks the writer to merge every row added before the read began, and waits; a
///   point read of a document never waits. Every acknowledged write is therefore in every query that starts
///   after it.
/// - **Durability.** The documents and the change log are committed as before. `index_state.pending_from`
///   is the first change-log sequence whose added rows may not be in the table yet (NULL when none): it is
///   set in the transaction of the first write after a merge and cleared by the last chunk of the merge.
///   Opening the store after an unclean stop adds the rows of every document changed at or after it again,
///   from the stored documents (`restoreDeferredEntries`). The log is never trimmed past it.
/// - **Other processes** (`hearth fixtures`, `hearth users`) write the index directly. A document they change
///   while this process still holds rows for it gets its rows derived again from what they stored, and the
///   held rows are dropped (`absorbForeignChanges`).
struct PendingRow {
    var scope: String
    var field: String
    var key: [UInt8]
    var doc: [UInt8]

    /// The rows of a document's entries in every scope it is stored in.
    static func rows(_ entries: Set<IndexEntry>, of path: DocumentPath) -> [PendingRow] {
        var out: [PendingRow] = []
        for (scope, doc) in IndexEntry.scopes(of: path) {
            for e in entries { out.append(PendingRow(scope: scope, field: e.field, key: e.key, doc: doc)) }
        }
        return out
    }
}

/// What the writer holds for one document: its rows, or the fields they come from (a create's, whose rows
/// the sorting thread derives, off the writer).
enum HeldRows {
    case rows([PendingRow])
    case fields([String: Value], estimate: Int)

    /// The rows (or at most that many, for fields).
    var count: Int {
        switch self {
        case .rows(let rows): rows.count
        case .fields(_, let estimate): estimate
        }
    }

    /// The rows, under the index definitions in force.
    func rows(of path: DocumentPath, composites: CompositeIndexes) -> [PendingRow] {
        switch self {
        case .rows(let rows):
            return rows
        case .fields(let fields, _):
            // No limit: the write checked it.
            let entries = (try? WriteContext.entries(of: fields, at: path, composites: composites, limit: .max)) ?? []
            return PendingRow.rows(entries, of: path)
        }
    }
}

/// When the writer merges held rows into the index.
public struct IndexMergeLimits: Sendable {
    /// Held rows that start a merge (about 8,000 documents of five indexed values).
    public var rows: Int = 40_000
    /// Rows per merge transaction: the writer runs one chunk between two batches of writes, so a write waits
    /// for at most one chunk.
    public var chunk: Int = 2_000
    /// After a read had to wait for held rows, writes put their rows in the table in their own commits for
    /// this long (seconds; 0: they never do). Reads that keep coming would each wait for a merge.
    public var directAfterWait: Double = 1
    /// Once no write has come for this long (seconds), the writer merges what it holds below `rows` too, so
    /// that a read after a burst of writes seldom waits for a merge; nil: rows wait for `rows` or a read.
    public var whenIdleFor: Double? = 0.1
    public init() {}
}

/// What readers know of the held rows: a generation counter the writer bumps whenever it holds more rows,
/// and the generation every row of which is in the table.
final class IndexMergeGate: @unchecked Sendable {
    private let lock = NSLock()
    private var held: UInt64 = 0
    private var merged: UInt64 = 0
    private var requested = false
    private var closed = false
    private var waiters: [(UInt64, CheckedContinuation<Void, any Error>)] = []

    /// The generation a read must wait for, or nil when every held row is in the table.
    func unmerged() -> UInt64? {
        lock.lock()
        defer { lock.unlock() }
        return held > merged ? held : nil
    }

    /// Waits until the rows of generation `target` are merged; `request` (called at most once for all the
    /// waiters of one merge) asks the writer for it and returns false when the writer no longer takes jobs.
    func wait(for target: UInt64, request: () -> Bool) async throws {
        noteWait()
        switch prepare(target) {
        case .ready: return
        case .closed: throw HearthError.unavailable("the server is shutting down")
        case .wait(let ask): if ask && !request() { close() }
        }
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in enqueue(target, c) }
    }

    private enum Preparation { case ready, closed, wait(ask: Bool) }

    private func prepare(_ target: UInt64) -> Preparation {
        lock.withLock {
            if merged >= target { return .ready }
            if closed { return .closed }
            defer { requested = true }
            return .wait(ask: !requested)
        }
    }

    private func enqueue(_ target: UInt64, _ c: CheckedContinuation<Void, any Error>) {
        lock.lock()
        if merged >= target { lock.unlock(); c.resume(); return }
        if closed { lock.unlock(); c.resume(throwing: HearthError.unavailable("the server is shutting down")); return }
        waiters.append((target, c))
        lock.unlock()
    }

    /// When a read last had to wait for held rows (`DispatchTime` nanoseconds; 0: never).
    private var lastWait: UInt64 = 0

    /// A read has to wait for held rows.
    func noteWait() { lock.withLock { lastWait = DispatchTime.now().uptimeNanoseconds } }

    /// Whether a read had to wait for held rows within `seconds`: while reads come, the writer writes rows in
    /// each commit instead, so that they do not wait for merges.
    func waitedRecently(within seconds: Double) -> Bool {
        let last = lock.withLock { lastWait }
        return last != 0 && DispatchTime.now().uptimeNanoseconds - last < UInt64(seconds * 1e9)
    }

    /// The writer holds more rows.
    func heldMore() {
        lock.lock()
        held &+= 1
        lock.unlock()
    }

    private var rowsHeld = 0

    /// Rows held and not merged yet, as the writer last reported them.
    var heldRows: Int { lock.withLock { rowsHeld } }

    func report(heldRows: Int) { lock.withLock { rowsHeld = heldRows } }

    /// Whether a reader asked for a merge since the writer last took a request; taking it clears it, so a
    /// request made while it is being served is served again. Only this clears a request: a merge that ends
    /// for another reason (the writer idle) must not drop a reader's request, or that reader would wait for
    /// a pause that never comes.
    func takeRequest() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        defer { requested = false }
        return requested
    }

    /// Runs on the writer at the start of every `mergedAll`, for tests that need a reader to act at that moment
    /// (`DeferredIndexTests`); nil otherwise.
    var onMergedAll: (@Sendable () -> Void)? {
        get { lock.withLock { mergedAllHook } }
        set { lock.withLock { mergedAllHook = newValue } }
    }
    private var mergedAllHook: (@Sendable () -> Void)?

    /// The writer merged every row it held: readers waiting for them go on.
    func mergedAll() {
        if let hook = onMergedAll { hook() }
        lock.lock()
        merged = held
        let ready = waiters
        waiters = []
        lock.unlock()
        for (_, c) in ready { c.resume() }
    }

    // Readers on their own threads: a reader whose snapshot may lack held rows asks the writer to merge
    // everything and then to wait, commits held back, until the reader has begun a read transaction.
    private let pause = NSCondition()
    private var paused = false
    private var pauseWaiters = 0
    private var pauseRequested = false
    private var pauseFailure: (any Error)?

    /// Blocks the calling (reader) thread until the writer has merged every row it holds and waits for it;
    /// the caller must then begin its read transaction and call `endPause()`. `request` wakes the writer.
    func waitForPause(request: () -> Bool) throws {
        noteWait()
        pause.lock()
        pauseWaiters += 1
        let ask = !pauseRequested
        pauseRequested = true
        if ask { pauseFailure = nil }
        pause.unlock()
        if ask {
            lock.withLock { requested = true }
            if !request() { close() }
        }
        pause.lock()
        defer { pause.unlock() }
        while !paused {
            if let failure = pauseFailure {
                pauseWaiters -= 1
                throw failure
            }
            if lock.withLock({ closed }) {
                pauseWaiters -= 1
                pause.broadcast()
                throw HearthError.unavailable("the server is shutting down")
            }
            pause.wait(until: Date().addingTimeInterval(0.05))
        }
    }

    /// Whether a reader waits for the writer to pause (for tests).
    var hasPauseRequest: Bool { pause.withLock { pauseRequested } }

    /// The reader has begun its read transaction: the writer may go on.
    func endPause() {
        pause.lock()
        pauseWaiters -= 1
        pause.broadcast()
        pause.unlock()
    }

    /// Writer: every held row is merged; waits (at most `timeout`) while the readers that asked begin their
    /// read transactions. A reader that was too slow finds rows held again and asks again.
    func pauseForReaders(timeout: TimeInterval = 0.05) {
        pause.lock()
        defer { pause.unlock() }
        guard pauseRequested else { return }
        pauseRequested = false
        paused = true
        pause.broadcast()
        let deadline = Date().addingTimeInterval(timeout)
        while pauseWaiters > 0 && Date() < deadline { pause.wait(until: deadline) }
        paused = false
    }

    /// A merge failed: the readers waiting for it fail too, and the next read asks again.
    func failWaiting(_ error: any Error) {
        fail(error) { pauseRequested = false; pauseFailure = error } whileLocked: { requested = false }
    }

    /// Fails every waiting reader with `error`, after `paused` (under the pause lock) and `locked` (under the
    /// gate's lock) have run.
    private func fail(_ error: any Error, paused: () -> Void, whileLocked locked: () -> Void) {
        pause.lock()
        paused()
        pause.broadcast()
        pause.unlock()
        lock.lock()
        locked()
        let stranded = waiters
        waiters = []
        lock.unlock()
        for (_, c) in stranded { c.resume(throwing: error) }
    }

    /// The writer stopped: waiting readers fail.
    func close() {
        fail(HearthError.unavailable("the server is shutting down")) {} whileLocked: { closed = true }
    }
}

/// The writer's held rows and its merge.
struct DeferredIndexState {
    /// Rows held per document, not part of a merge yet (a document whose rows are all in the table, or that
    /// is deleted, has none).
    var documents: [DocumentPath: HeldRows] = [:]
    var rowCount = 0
    /// The merge under way: its documents' rows, sorted by another thread (`sorting`) into `merging`, how
    /// many are done, and the documents changed since it began (their rows in it are stale and skipped).
    var mergingDocuments: [DocumentPath: HeldRows] = [:]
    var sorting: SortedRows?
    var merging: [(row: PendingRow, path: DocumentPath)] = []
    var merged = 0
    var mergingRowCount = 0
    var stale: Set<DocumentPath> = []
    /// `index_state.pending_from` as stored, and the first sequence of the rows held outside the merge.
    var storedSince: Int64?
    var heldSince: Int64?
    /// The last change-log sequence this writer has accounted for (its own or another process's).
    var knownSequence: Int64 = 0

    var isMerging: Bool { sorting != nil || merged < merging.count }
    /// Rows held or in the merge, not in the table yet.
    var unmergedRows: Int { rowCount + mergingRowCount - merged }
    var isEmpty: Bool { documents.isEmpty && !isMerging }
}

extension WriterState {
    /// Whether this batch holds the rows its writes add: deferring, and no read had to wait for held rows in
    /// the last second. Reads that keep coming (a mixed load) would each wait for a merge; their writes are
    /// cheaper written in place, as without deferral.
    func decideDeferral() {
        defersNow = defersIndexWrites
            && !(mergeLimits.directAfterWait > 0 && gate.waitedRecently(within: mergeLimits.directAfterWait))
    }

    /// Whether rows of this document are held (outside the table): its next write must hold all of its rows.
    func holdsRows(of path: DocumentPath) -> Bool {
        guard defersIndexWrites else { return false }
        if deferred.documents[path] != nil { return true }
        return deferred.isMerging && deferred.mergingDocuments[path] != nil && !deferred.stale.contains(path)
    }

    /// Accounts for the changes other processes logged since the writer last looked, inside a write
    /// transaction: each document they changed whose rows this writer still holds gets its rows derived again
    /// from what is stored now (they maintained the table for the version they replaced as if its rows were
    /// there). When the log no longer has them all, every held document is derived again.
    func absorbForeignChanges() throws {
        let latest = try ReadContext.lastSequence(on: connection)
        guard latest > deferred.knownSequence, !deferred.isEmpty else {
            deferred.knownSequence = max(deferred.knownSequence, latest)
            return
        }
        let foreign = try ReadContext.changes(on: connection, after: deferred.knownSequence, through: latest)
        var paths = Set(foreign.map(\.path))
        if (foreign.first?.sequence ?? latest + 1) > deferred.knownSequence + 1 {
            paths.formUnion(deferred.documents.keys)
            paths.formUnion(deferred.mergingDocuments.keys)
        }
        for path in paths {
            let inMerge = deferred.isMerging && deferred.mergingDocuments[path] != nil && !deferred.stale.contains(path)
            guard deferred.documents[path] != nil || inMerge else { continue }
            hold(path, rows: try currentRows(path).map(HeldRows.rows))
        }
        if deferred.heldSince == nil && !deferred.documents.isEmpty { deferred.heldSince = deferred.knownSequence + 1 }
        // Only once every change is accounted for: a failed read here is read again by the next transaction.
        deferred.knownSequence = latest
        gate.heldMore()
        gate.report(heldRows: deferred.unmergedRows)
    }

    /// The rows the stored version of a document has (nil when it is missing).
    func currentRows(_ path: DocumentPath) throws -> [PendingRow]? {
        guard let fields = try ReadContext(connection: connection, composites: composites).document(at: path)?.decoded().fields
        else { return nil }
        return PendingRow.rows(try WriteContext.entries(of: fields, at: path, composites: composites, limit: .max), of: path)
    }

    /// Holds a document's rows (nil: it has none to add), replacing any it held.
    func hold(_ path: DocumentPath, rows: HeldRows?) {
        if let old = deferred.documents.removeValue(forKey: path) { deferred.rowCount -= old.count }
        if deferred.isMerging && deferred.mergingDocuments[path] != nil { deferred.stale.insert(path) }
        if let rows, rows.count > 0 {
            deferred.documents[path] = rows
            deferred.rowCount += rows.count
        }
    }

    /// After a committed batch: holds the rows its jobs staged, in order.
    func holdStaged(_ staged: [(DocumentPath, HeldRows?)], since sequence: Int64) {
        if staged.isEmpty { return }
        for (path, rows) in staged { hold(path, rows: rows) }
        if deferred.heldSince == nil && !deferred.documents.isEmpty { deferred.heldSince = sequence }
        gate.heldMore()
        gate.report(heldRows: deferred.unmergedRows)
    }

    /// Records, in the batch's transaction, that rows from `sequence` on may be missing from the table.
    func markPending(from sequence: Int64) throws {
        guard deferred.storedSince == nil else { return }
        let s = try connection.prepare("UPDATE index_state SET pending_from = ?")
        s.bind(1, sequence)
        try s.run()
    }

    /// Merge work between batches: everything held when a reader waits (then it may go on), else one chunk
    /// of the merge under way, or of a new one once enough rows are held; while `idle()`, chunks continue.
    func mergeBetweenBatches(idle: () -> Bool, logger: Logger) {
        guard defersIndexWrites else { return }
        do {
            if gate.takeRequest() {
                do {
                    try mergeAll()
                } catch {
                    gate.failWaiting(error)
                    throw error
                }
                gate.pauseForReaders()
                return
            }
            if deferred.isEmpty {
                // Held rows were all dropped (their documents deleted): only the mark is left to clear.
                if deferred.storedSince != nil { try mergeChunk(size: .max) }
                gate.mergedAll()
                return
            }
            // Enough rows held, or the change log about to keep more than its retention for them.
            let logFull = deferred.storedSince.map { deferred.knownSequence - $0 >= Int64(retention) } ?? false
            if !deferred.isMerging && deferred.rowCount < mergeLimits.rows && !logFull { return }
            // Chunks go on while no write waits, and stop while the rows are still being sorted.
            while try mergeChunk(size: mergeLimits.chunk) && deferred.isMerging && idle() {}
            if deferred.isEmpty { gate.mergedAll() }
        } catch {
            logger.error("cannot merge held index rows; they are kept and merged again later", metadata: ["error": "\(error)"])
        }
    }

    /// With no write queued for a while, merges what is held below the threshold too, a chunk at a time while no
    /// write arrives, so that a read after a burst of writes seldom finds rows held. Returns true when rows are
    /// still held (a write arrived).
    func mergeWhileIdle(idle: () -> Bool, logger: Logger) -> Bool {
        guard defersIndexWrites, !deferred.isEmpty || deferred.storedSince != nil else { return false }
        do {
            // While the rows are being sorted, looks again every millisecond: a write that arrives meanwhile
            // waits for at most that, not for the sort (tens of milliseconds for tens of thousands of rows).
            repeat { try mergeChunk(size: mergeLimits.chunk, sortWait: 0.001) } while !deferred.isEmpty && idle()
            if deferred.isEmpty { gate.mergedAll() }
        } catch {
            // Tried again after the next batch of writes, not at every quiet moment.
            logger.error("cannot merge held index rows; they are kept and merged again later", metadata: ["error": "\(error)"])
            return false
        }
        return !deferred.isEmpty
    }

    /// Merges every held row, then lets waiting readers go on.
    func mergeAll() throws {
        repeat { try mergeChunk(size: .max, sortWait: .infinity) } while !deferred.isEmpty
        gate.mergedAll()
    }

    /// Merges the next `size` rows in one transaction, starting a merge of every held row first if none is
    /// under way. The last chunk clears (or moves) `pending_from`. Returns false, having done nothing, while
    /// the merge's rows are still being sorted after waiting `sortWait` seconds for them.
    @discardableResult
    func mergeChunk(size: Int, sortWait: TimeInterval = 0) throws -> Bool {
        if !deferred.isMerging { startMerge() }
        if let sorting = deferred.sorting {
            guard let rows = sorting.take(within: sortWait) else { return false }
            deferred.merging = rows
            deferred.merged = 0
            deferred.sorting = nil
        }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            try absorbForeignChanges()
            let end = deferred.merged + min(size, deferred.merging.count - deferred.merged)
            let insert = try connection.prepare("INSERT OR IGNORE INTO field_index(scope, field, key, doc) VALUES (?, ?, ?, ?)")
            for i in deferred.merged..<end {
                let (r, path) = deferred.merging[i]
                if deferred.stale.contains(path) { continue }
                insert.bind(1, r.scope); insert.bind(2, r.field); insert.bind(3, r.key); insert.bind(4, r.doc)
                try insert.run()
            }
            let finishing = end == deferred.merging.count
            if finishing && deferred.storedSince != deferred.heldSince {
                let s = try connection.prepare("UPDATE index_state SET pending_from = ?")
                if let since = deferred.heldSince { s.bind(1, since) } else { s.bindNull(1) }
                try s.run()
            }
            try connection.execute("COMMIT")
            deferred.merged = end
            if finishing {
                deferred.mergingRowCount = 0
                // Freed on the sorting thread: tens of thousands of rows' references.
                let done = (deferred.merging, deferred.mergingDocuments)
                sortQueue.async { _ = done }
                deferred.merging = []
                deferred.merged = 0
                deferred.mergingDocuments = [:]
                deferred.stale = []
                deferred.storedSince = deferred.heldSince
            }
            gate.report(heldRows: deferred.unmergedRows)
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        return true
    }

    /// A row's place in the sort: plain integers, so that sorting moves no references (a row has four).
    private struct SortItem {
        var group: Int32
        var key: Int32, keyCount: Int32
        var doc: Int32, docCount: Int32
        var row: Int32
    }

    private struct Group: Hashable {
        var scope: String
        var field: String
    }

    /// The rows in the table's order (scope, field, key, doc), with every key and document name copied into
    /// one buffer that the comparisons read.
    static func sorted(_ rows: [(row: PendingRow, path: DocumentPath)]) -> [(row: PendingRow, path: DocumentPath)] {
        var groups: [Group: Int32] = [:]
        var bytes: [UInt8] = []
        var items: [SortItem] = []
        items.reserveCapacity(rows.count)
        for (i, (r, _)) in rows.enumerated() {
            let g = Group(scope: r.scope, field: r.field)
            let group: Int32
            if let known = groups[g] { group = known } else { group = Int32(groups.count); groups[g] = group }
            let key = Int32(bytes.count)
            bytes += r.key
            let doc = Int32(bytes.count)
            bytes += r.doc
            items.append(SortItem(group: group, key: key, keyCount: Int32(r.key.count), doc: doc, docCount: Int32(r.doc.count),
                                  row: Int32(i)))
        }
        // Groups ranked by scope, then field.
        let ordered = groups.keys.sorted { $0.scope != $1.scope ? utf8Less($0.scope, $1.scope) : utf8Less($0.field, $1.field) }
        var rank = [Int32](repeating: 0, count: groups.count)
        for (i, g) in ordered.enumerated() { rank[Int(groups[g]!)] = Int32(i) }
        bytes.append(0)  // a base address even when every key is empty
        bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            func compare(_ a: Int32, _ an: Int32, _ b: Int32, _ bn: Int32) -> Int {
                let c = memcmp(base + Int(a), base + Int(b), Int(min(an, bn)))
                return c != 0 ? Int(c) : Int(an - bn)
            }
            items.sort { x, y in
                if x.group != y.group { return rank[Int(x.group)] < rank[Int(y.group)] }
                let c = compare(x.key, x.keyCount, y.key, y.keyCount)
                return c != 0 ? c < 0 : compare(x.doc, x.docCount, y.doc, y.docCount) < 0
            }
        }
        return items.map { rows[Int($0.row)] }
    }

    /// Moves every held row into a new merge; another thread puts them in the table's order meanwhile.
    private func startMerge() {
        let documents = deferred.documents
        deferred.mergingDocuments = documents
        deferred.merging = []
        deferred.merged = 0
        deferred.sorting = documents.isEmpty ? nil
            : SortedRows(documents, count: deferred.rowCount, composites: composites, on: sortQueue)
        deferred.mergingRowCount = deferred.rowCount
        deferred.stale = []
        deferred.documents = [:]
        deferred.rowCount = 0
        deferred.heldSince = nil
    }
}

/// The rows of a merge, sorted on another thread (the store's sorting queue, `Store.indexSortQueue`) so that the
/// writer goes on with writes meanwhile.
final class SortedRows: @unchecked Sendable {
    private let condition = NSCondition()
    private var rows: [(row: PendingRow, path: DocumentPath)]?

    init(_ documents: [DocumentPath: HeldRows], count: Int, composites: CompositeIndexes, on queue: DispatchQueue) {
        queue.async { [self] in
            var all: [(row: PendingRow, path: DocumentPath)] = []
            all.reserveCapacity(count)
            for (path, held) in documents { for r in held.rows(of: path, composites: composites) { all.append((r, path)) } }
            let sorted = WriterState.sorted(all)
            condition.lock()
            rows = sorted
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The sorted rows, waiting at most `seconds` for them (`.infinity`: until they are ready); nil when they are
    /// not ready by then.
    func take(within seconds: TimeInterval) -> [(row: PendingRow, path: DocumentPath)]? {
        condition.lock()
        defer { condition.unlock() }
        if rows == nil && seconds > 0 {
            if seconds == .infinity {
                while rows == nil { condition.wait() }
            } else {
                let deadline = Date(timeIntervalSinceNow: seconds)
                while rows == nil && condition.wait(until: deadline) {}
            }
        }
        return rows
    }
}

extension Store {
    /// `index_state.pending_from` (nil when NULL).
    static func pendingFrom(on connection: SQLiteConnection) throws -> Int64? {
        let s = try connection.prepare("SELECT pending_from FROM index_state")
        defer { s.reset() }
        return try s.step() && !s.isNull(0) ? s.int(0) : nil
    }

    /// Adds again the index rows of every document changed at or after `index_state.pending_from`: after an
    /// unclean stop, rows a write had added only in memory. Rows already there are kept (`INSERT OR IGNORE`),
    /// and rows made stale were removed by the writes themselves.
    /// `clearing`: the mark is cleared afterwards (a deferring store, which then owns it).
    static func restoreDeferredEntries(on connection: SQLiteConnection, composites: CompositeIndexes, clearing: Bool,
                                       logger: Logger) throws {
        guard let from = try pendingFrom(on: connection) else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let paths = try connection.prepare("SELECT DISTINCT path FROM changes WHERE seq >= ?")
            paths.bind(1, from)
            var all: [DocumentPath] = []
            while try paths.step() {
                all.append(DocumentPath(uncheckedSegments: paths.text(0).split(separator: "/", omittingEmptySubsequences: false).map(String.init)))
            }
            paths.reset()
            let reader = ReadContext(connection: connection, composites: composites)
            for path in all {
                guard let fields = try reader.document(at: path)?.decoded().fields else { continue }
                let entries = try WriteContext.entries(of: fields, at: path, composites: composites, limit: .max)
                try WriteContext.updateIndex(on: connection, path, removing: [], adding: entries)
            }
            if clearing { try connection.execute("UPDATE index_state SET pending_from = NULL") }
            try connection.execute("COMMIT")
            logger.info("index entries restored for documents changed before an unclean stop", metadata: ["documents": "\(all.count)"])
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}

import Foundation
import HearthCore

/// The writes of `/v1/commit` (docs/api.md, Commits), built in one place for references, batches and
/// transactions, and for the writes a function handler answers (`HearthFunctions.FunctionWrite`).
package enum WriteBuilder {
    package enum Merge { case none, all, fields([String]) }

    package static func set(_ path: String, fields: [(String, JSON)], merge: Merge) -> JSON {
        var write: [(String, JSON)] = [("set", .string(path)), ("data", .object(fields))]
        switch merge {
        case .none: break
        case .all: write.append(("merge", .bool(true)))
        case .fields(let names): write.append(("merge", .array(names.map { .string($0) })))
        }
        return .object(write)
    }

    package static func create(_ path: String, fields: [(String, JSON)]) -> JSON {
        .object([("create", .string(path)), ("data", .object(fields))])
    }

    /// An update: the keys are field paths, kept as given.
    static func update(_ path: String, fields: [String: Any]) throws(HearthClientError) -> JSON {
        var data: [(String, JSON)] = []
        for key in fields.keys.sorted() { data.append((key, try Wire.json(any: fields[key]!, at: key))) }
        return update(path, fields: data)
    }

    /// An update whose data is in the wire encoding already (keys are field paths).
    package static func update(_ path: String, fields: [(String, JSON)]) -> JSON {
        .object([("update", .string(path)), ("data", .object(fields))])
    }

    package static func delete(_ path: String) -> JSON { .object([("delete", .string(path))]) }

    /// A write that only checks its precondition.
    package static func verify(_ path: String) -> JSON { .object([("verify", .string(path))]) }

    /// The write, applied only if the precondition holds.
    package static func write(_ write: JSON, precondition: Precondition) -> JSON {
        guard case .object(var pairs) = write else { return write }
        switch precondition {
        case .exists(let exists): pairs.append(("precondition", .object([("exists", .bool(exists))])))
        case .updateTime(let time): pairs.append(("precondition", .object([("updateTime", .string(time.rfc3339))])))
        }
        return .object(pairs)
    }
}

/// The writes a batch or a transaction collects before its commit. A write that cannot be built is kept as
/// the problem (the first one), thrown by the commit, as Firestore's SDK reports it.
final class WriteBuffer: @unchecked Sendable {
    private var writes: [JSON] = []
    private var problem: HearthClientError?
    private let lock = NSLock()

    private func add(_ make: () throws(HearthClientError) -> JSON) {
        lock.withLock {
            do throws(HearthClientError) { writes.append(try make()) } catch { problem = problem ?? error }
        }
    }

    func set(_ data: [String: Any], _ document: DocumentReference, merge: Bool) {
        add { () throws(HearthClientError) in WriteBuilder.set(document.path, fields: try Wire.pairs(data, at: nil), merge: merge ? .all : .none) }
    }

    func set<T: Encodable>(from value: T, _ document: DocumentReference, merge: Bool) {
        add { () throws(HearthClientError) in
            WriteBuilder.set(document.path, fields: try HearthEncoder().encodeDocument(value), merge: merge ? .all : .none)
        }
    }

    func update(_ fields: [String: Any], _ document: DocumentReference) {
        add { () throws(HearthClientError) in try WriteBuilder.update(document.path, fields: fields) }
    }

    func delete(_ document: DocumentReference) { add { WriteBuilder.delete(document.path) } }

    /// The writes to commit, or the problem of one of them.
    func collected() throws(HearthClientError) -> [JSON] {
        let (writes, problem) = lock.withLock { (self.writes, self.problem) }
        if let problem { throw problem }
        return writes
    }
}

/// Writes committed together, atomically, in order (Firestore's `WriteBatch`; at most 500).
public final class WriteBatch: Sendable {
    let hearth: Hearth
    private let buffer = WriteBuffer()

    init(hearth: Hearth) { self.hearth = hearth }

    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference, merge: Bool = false) -> WriteBatch {
        buffer.set(data, document, merge: merge)
        return self
    }

    @discardableResult
    public func setData<T: Encodable>(from value: T, forDocument document: DocumentReference, merge: Bool = false) -> WriteBatch {
        buffer.set(from: value, document, merge: merge)
        return self
    }

    @discardableResult
    public func updateData(_ fields: [String: Any], forDocument document: DocumentReference) -> WriteBatch {
        buffer.update(fields, document)
        return self
    }

    @discardableResult
    public func deleteDocument(_ document: DocumentReference) -> WriteBatch {
        buffer.delete(document)
        return self
    }

    /// Commits the writes: all apply, or none (the error names the write that failed).
    @discardableResult
    public func commit() async throws(HearthClientError) -> CommitResult {
        try await hearth.commit(try buffer.collected())
    }
}

extension Hearth {
    /// A batch of writes to commit together.
    public func batch() -> WriteBatch { WriteBatch(hearth: self) }
}

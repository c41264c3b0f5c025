import HearthCore
import HearthRules

/// Security rules on every way into the database (docs/rules.md). The admin key bypasses them before any work
/// is done; every other caller is decided by the program in force, and denied when there is none.
extension Database {
    /// The program that decides this caller's requests, or nil for the admin, who bypasses rules.
    /// Throws permission-denied when no rules are loaded (default deny).
    func enforcedProgram(for identity: Identity) throws(HearthError) -> RulesProgram? {
        if identity.isAdmin { return nil }
        guard let program = rules.program else {
            throw rules.dev
                ? .permissionDenied("Missing or insufficient permissions: no rules are loaded (start the server with --rules FILE).")
                : .permissionDenied()
        }
        return program
    }

    /// Decides whether `identity` may read one document, given its stored state (nil when missing): the
    /// `get` rule, as a live listener checks every document it delivers.
    public func authorizeRead(path: DocumentPath, document: StoredDocument?, identity: Identity) throws {
        guard let program = try enforcedProgram(for: identity) else { return }
        var request = RulesRequest(method: .get, path: path, auth: RulesAuth(identity), time: .now())
        request.storedResource = document.map { StoredFields(path: $0.path, data: $0.data) }
        try enforce(program.evaluateRead(request, lookup: StoreDocumentLookup(storage: storage)), .get, path.description)
    }

    /// Decides a `list` of one collection, one page of at most `pageSize` documents.
    func authorizeList(_ collection: CollectionPath, pageSize: Int, identity: Identity) throws {
        guard let program = try enforcedProgram(for: identity) else { return }
        try authorizeList(ListConstraints(target: .collection(collection), limit: pageSize), program: program,
                          identity: identity, described: collection.description)
    }

    /// Decides a `list` over every document a query could return: rules are not filters.
    func authorizeList(_ constraints: ListConstraints, program: RulesProgram, identity: Identity,
                       described: String) throws {
        let placeholder: DocumentPath
        switch constraints.target {
        case .collection(let c): placeholder = DocumentPath(uncheckedSegments: c.segments + ["*"])
        case .collectionGroup(let id, let under):
            placeholder = DocumentPath(uncheckedSegments: (under?.segments ?? []) + [id, "*"])
        }
        let request = RulesRequest(method: .list, path: placeholder, auth: RulesAuth(identity), time: .now(),
                                   query: constraints)
        try enforce(program.evaluate(request, lookup: StoreDocumentLookup(storage: storage)), .list, described)
    }

    /// Decides every write of a commit inside the writer's transaction, where the stored state is known:
    /// `set` is a create or an update by existence, `request.resource` is the document after merges and
    /// transforms at the commit time (so `serverTimestamp` equals `request.time`), and `getAfter` sees the
    /// whole batch. Any denied write denies the commit. Returns the stored state of each document it read
    /// (nil when missing), for the commit to apply its writes to without reading them again.
    @discardableResult
    func authorizeWrites(_ writes: [Write], commitTime: Timestamp, identity: Identity, program: RulesProgram,
                         context: any DocumentWriter) throws -> [DocumentPath: Document?] {
        let reader = context.reader
        let budget = CommitBudget()
        var stored: [DocumentPath: Document?] = [:]
        var after: [DocumentPath: Document?] = [:]
        var requests: [RulesRequest] = []
        requests.reserveCapacity(writes.count)
        let auth = RulesAuth(identity)
        for write in writes {
            let before: Document?
            if let known = after[write.path] {
                before = known
            } else {
                before = try reader.document(at: write.path)?.decoded()
                stored[write.path] = .some(before)
            }
            switch write.kind {
            case .verify:
                requests.append(RulesRequest(method: .get, path: write.path, auth: auth, time: commitTime, resource: before))
            case .delete:
                requests.append(RulesRequest(method: .delete, path: write.path, auth: auth, time: commitTime, resource: before))
                after[write.path] = .some(nil)
            case .create, .set, .update:
                let written = try Self.speculativeResult(of: write, over: before, commitTime: commitTime, budget: budget)
                let method: RulesMethod
                switch write.kind {
                case .create: method = .create
                case .update: method = .update
                default: method = before == nil ? .create : .update
                }
                requests.append(RulesRequest(method: method, path: write.path, auth: auth, time: commitTime,
                                             resource: before, requestResource: written))
                after[write.path] = .some(written)
            }
        }
        let lookup = BatchDocumentLookup(context: context, after: after)
        let decisions = requests.count == 1 ? [program.evaluate(requests[0], lookup: lookup)]
            : program.evaluateBatch(requests, lookup: lookup)
        for (request, decision) in zip(requests, decisions) {
            try enforce(decision, request.method, request.path.description)
        }
        return stored
    }

    /// Decides a recursive delete: the document and every document below it must each be deletable.
    func authorizeRecursiveDelete(_ paths: [DocumentPath], commitTime: Timestamp, identity: Identity,
                                  program: RulesProgram, context: any DocumentWriter) throws {
        let reader = context.reader
        var after: [DocumentPath: Document?] = [:]
        for path in paths { after[path] = .some(nil) }
        let lookup = BatchDocumentLookup(context: context, after: after)
        let auth = RulesAuth(identity)
        for path in paths {
            let request = RulesRequest(method: .delete, path: path, auth: auth, time: commitTime,
                                       resource: try reader.document(at: path)?.decoded())
            try enforce(program.evaluate(request, lookup: lookup), .delete, path.description)
        }
    }

    /// The document a write would leave, ignoring its precondition (rules decide before preconditions are
    /// checked, so a denied caller learns nothing about the stored state from the error).
    static func speculativeResult(of write: Write, over before: Document?, commitTime: Timestamp,
                                  budget: CommitBudget) throws -> Document {
        var speculative = write
        speculative.precondition = nil
        switch write.kind {
        case .create: speculative.kind = .set(merge: nil)
        case .update(let mask): speculative.kind = .set(merge: mask)
        default: break
        }
        switch try speculative.apply(to: before, commitTime: commitTime, budget: budget).0 {
        case .put(let doc): return doc
        case .unchanged(let doc?): return doc
        case .unchanged(nil), .deleted:
            return Document(path: write.path, fields: [:], createTime: commitTime, updateTime: commitTime)
        }
    }

    /// Turns a decision into nothing or a permission-denied error: Firestore's generic message, or in
    /// development mode the deciding rule, its expression and why it failed.
    func enforce(_ decision: RulesDecision, _ method: RulesMethod, _ path: @autoclosure () -> String) throws(HearthError) {
        guard case .deny(let denial) = decision else { return }
        guard rules.dev else { throw .permissionDenied() }
        throw .permissionDenied("Missing or insufficient permissions: \(method.rawValue) on \(path()) denied: \(denial)")
    }

    /// The query as rules see it in a `list`: values pinned by `==` (each value of `in`, each disjunct of
    /// `or`), the limit, offset and explicit order; everything else is unknown.
    static func listConstraints(for query: Query) -> ListConstraints {
        let target: ListConstraints.Target
        switch query.source {
        case .collection(let c): target = .collection(c)
        case .collectionGroup(let id, let under): target = .collectionGroup(id: id, under: under)
        }
        return ListConstraints(
            target: target, limit: query.limit ?? query.limitToLast, offset: query.offset > 0 ? query.offset : nil,
            orderBy: query.orderBy.map { ListConstraints.Order(field: $0.field, descending: $0.direction == .descending) },
            disjuncts: query.filter.map(disjuncts) ?? [])
    }

    /// Most disjuncts the rules are evaluated over; a larger expansion is evaluated with nothing pinned,
    /// which can only deny more.
    static let maxRulesDisjuncts = 1_000

    /// The filter in disjunctive normal form, each disjunct keeping only the values `==` and `in` pin.
    static func disjuncts(_ filter: Filter) -> [[FieldPath: Value]] {
        switch filter {
        case .field(let f):
            switch f.op {
            case .equal: return pins(f.field, f.value)
            case .in: return f.values.isEmpty ? [[:]] : f.values.flatMap { pins(f.field, $0) }
            default: return [[:]]
            }
        case .or(let items):
            let out = items.flatMap(disjuncts)
            return out.count > maxRulesDisjuncts || out.isEmpty ? [[:]] : out
        case .and(let items):
            var out: [[FieldPath: Value]] = [[:]]
            for item in items {
                let next = disjuncts(item)
                guard out.count * next.count <= maxRulesDisjuncts else { return [[:]] }
                // A field pinned twice keeps its first value: such a disjunct matches no document with the
                // other, so deciding it on either is sound.
                out = out.flatMap { left in next.map { right in left.merging(right) { first, _ in first } } }
            }
            return out
        }
    }
}

extension Database {
    /// Most forms of one pinned value (`equalForms`); a value with more pins nothing.
    static let maxEqualForms = 16

    /// The disjuncts a value pins a field to: one per form a document's field may hold and still equal it,
    /// since the rules, unlike a query, tell `5` from `5.0` (`is int`); the field is left unknown when there
    /// are too many forms.
    static func pins(_ field: FieldPath, _ value: Value) -> [[FieldPath: Value]] {
        guard let forms = equalForms(value) else { return [[:]] }
        return forms.map { [field: $0] }
    }

    /// Every value a document may hold that a query's `==` matches for `value`, in the forms rules tell apart:
    /// an integral number as an int and as a double (zero also as `-0.0`), arrays and maps element by element;
    /// nil past `maxEqualForms`.
    static func equalForms(_ value: Value) -> [Value]? {
        switch value {
        case .int(let i):
            guard Int64(exactly: Double(i)) == i else { return [value] }
            return i == 0 ? [value, .double(0), .double(-0.0)] : [value, .double(Double(i))]
        case .double(let d):
            guard let i = Int64(exactly: d) else { return [value] }
            return i == 0 ? [.double(0), .double(-0.0), .int(0)] : [value, .int(i)]
        case .array(let items):
            var out: [[Value]] = [[]]
            for item in items {
                guard let forms = equalForms(item), out.count * forms.count <= maxEqualForms else { return nil }
                out = out.flatMap { prefix in forms.map { prefix + [$0] } }
            }
            return out.map(Value.array)
        case .map(let fields):
            var out: [[String: Value]] = [[:]]
            for (key, item) in fields {
                guard let forms = equalForms(item), out.count * forms.count <= maxEqualForms else { return nil }
                out = out.flatMap { partial in forms.map { form in partial.merging([key: form]) { _, new in new } } }
            }
            return out.map(Value.map)
        default:
            return [value]
        }
    }
}

/// `get`/`exists` for reads: the stored state, read on the calling thread.
struct StoreDocumentLookup: RulesDocumentLookup {
    let storage: any DocumentStorage

    func get(_ path: DocumentPath) throws -> Document? {
        try storage.ruleLookup(path)
    }

    func getAfter(_ path: DocumentPath) throws -> Document? { try get(path) }
}

/// `get`/`exists` and `getAfter`/`existsAfter` for a commit, on the writer's connection: the state before the
/// batch and the state after all of its writes. Used only on the writer thread, during one job.
final class BatchDocumentLookup: RulesDocumentLookup, @unchecked Sendable {
    let context: any DocumentWriter
    let after: [DocumentPath: Document?]

    init(context: any DocumentWriter, after: [DocumentPath: Document?]) {
        self.context = context
        self.after = after
    }

    func get(_ path: DocumentPath) throws -> Document? {
        try context.ruleLookup(path)
    }

    func getAfter(_ path: DocumentPath) throws -> Document? {
        if let known = after[path] { return known }
        return try get(path)
    }
}

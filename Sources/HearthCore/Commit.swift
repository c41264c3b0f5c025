/// A commit request: ordered writes applied atomically, optionally ending a transaction.
public struct CommitRequest: Sendable, Equatable {
    /// The writes, applied in order.
    public var writes: [Write]
    /// The transaction this commit ends, if any.
    public var transaction: String?

    /// Makes a commit request.
    public init(writes: [Write], transaction: String? = nil) {
        self.writes = writes
        self.transaction = transaction
    }

    /// Decodes `{"writes": [...], "transaction"?: id}` (docs/api.md, Commits).
    public init(json: JSON) throws(HearthError) {
        guard case .object(let pairs) = json else { throw .invalidArgument("commit body must be a JSON object, got \(json.kind)") }
        var writes: [Write]?
        for (key, value) in pairs {
            switch key {
            case "writes":
                guard case .array(let items) = value else { throw .invalidArgument("'writes' must be an array, got \(value.kind)") }
                if items.count > Limits.maxWritesPerCommit {
                    throw .invalidArgument("a commit holds at most \(Limits.maxWritesPerCommit) writes; this one has \(items.count)")
                }
                var out: [Write] = []
                for (i, item) in items.enumerated() {
                    do {
                        out.append(try Write(json: item))
                    } catch {
                        throw HearthError(error.code, "writes[\(i)]: \(error.message)")
                    }
                }
                writes = out
            case "transaction":
                guard case .string(let id) = value else { throw .invalidArgument("'transaction' must be a string, got \(value.kind)") }
                transaction = id
            default:
                throw .invalidArgument("unknown field '\(key)' in commit; expected 'writes' and optionally 'transaction'")
            }
        }
        guard let writes else { throw .invalidArgument("commit needs 'writes'") }
        self.writes = writes
    }
}

extension Write {
    /// Decodes one write of a commit:
    /// `{"set"|"create"|"update"|"delete"|"verify": path, "data"?, "merge"?, "precondition"?}`.
    public init(json: JSON) throws(HearthError) {
        guard case .object(let pairs) = json else { throw .invalidArgument("a write must be a JSON object, got \(json.kind)") }
        var op: (String, DocumentPath)?
        var data: JSON?
        var merge: JSON?
        var precondition: Precondition?
        for (key, value) in pairs {
            switch key {
            case "set", "create", "update", "delete", "verify":
                if let op { throw .invalidArgument("a write names both '\(op.0)' and '\(key)'") }
                guard case .string(let raw) = value else { throw .invalidArgument("'\(key)' must be a document path string, got \(value.kind)") }
                op = (key, try DocumentPath(raw))
            case "data": data = value
            case "merge": merge = value
            case "precondition": precondition = try Precondition(json: value)
            default:
                throw .invalidArgument("unknown field '\(key)' in a write")
            }
        }
        guard let (name, path) = op else {
            throw .invalidArgument("a write must name one of 'set', 'create', 'update', 'delete', 'verify'")
        }
        if merge != nil && name != "set" { throw .invalidArgument("'merge' only applies to 'set'") }
        switch name {
        case "delete", "verify":
            if data != nil { throw .invalidArgument("'\(name)' takes no 'data'") }
            if name == "verify" && precondition == nil { throw .invalidArgument("'verify' needs a 'precondition'") }
            self.init(kind: name == "delete" ? .delete : .verify, path: path, precondition: precondition)
        default:
            guard let data else { throw .invalidArgument("'\(name)' needs 'data'") }
            try self.init(kind: name, path: path, data: data, merge: merge, precondition: precondition)
        }
    }

    /// Builds a set, create or update from its JSON data. `merge` is `true`, `false`, or a list of field
    /// paths to merge (Firestore's mergeFields).
    public init(kind name: String, path: DocumentPath, data: JSON, merge: JSON? = nil,
                precondition: Precondition? = nil) throws(HearthError) {
        switch name {
        case "update":
            let parsed = try WriteData(json: data, mode: .update)
            self.init(kind: .update(mask: parsed.mask), path: path, fields: parsed.fields,
                      transforms: parsed.transforms, precondition: precondition ?? .exists(true))
        case "create":
            let parsed = try WriteData(json: data, mode: .set)
            if let precondition, precondition != .exists(false) {
                throw .invalidArgument("'create' takes no precondition other than {\"exists\": false}")
            }
            self.init(kind: .create, path: path, fields: parsed.fields, transforms: parsed.transforms,
                      precondition: .exists(false))
        default:
            switch merge {
            case nil, .bool(false)?:
                let parsed = try WriteData(json: data, mode: .set)
                self.init(kind: .set(merge: nil), path: path, fields: parsed.fields, transforms: parsed.transforms,
                          precondition: precondition)
            case .bool(true)?:
                let parsed = try WriteData(json: data, mode: .merge)
                self.init(kind: .set(merge: parsed.mask), path: path, fields: parsed.fields,
                          transforms: parsed.transforms, precondition: precondition)
            case .array(let items)?:
                let parsed = try WriteData(json: data, mode: .merge)
                var mask: [FieldPath] = []
                for item in items {
                    guard case .string(let raw) = item else { throw .invalidArgument("'merge' field paths must be strings") }
                    let field = try FieldPath(parsing: raw)
                    guard parsed.fields[path: field] != nil || parsed.mask.contains(field)
                            || parsed.transforms.contains(where: { $0.field.hasPrefix(field) }) else {
                        throw .invalidArgument("merge field '\(field)' is not in the data")
                    }
                    mask.append(field)
                }
                let transforms = parsed.transforms.filter { t in mask.contains { t.field.hasPrefix($0) } }
                self.init(kind: .set(merge: mask), path: path, fields: parsed.fields, transforms: transforms,
                          precondition: precondition)
            case let other?:
                throw .invalidArgument("'merge' must be true, false or a list of field paths, got \(other.kind)")
            }
        }
    }
}

extension Precondition {
    /// Decodes `{"exists": bool}` or `{"updateTime": "<RFC 3339>"}`.
    public init(json: JSON) throws(HearthError) {
        guard case .object(let pairs) = json, pairs.count == 1 else {
            throw .invalidArgument("a precondition is {\"exists\": bool} or {\"updateTime\": timestamp}")
        }
        switch pairs[0] {
        case ("exists", .bool(let b)): self = .exists(b)
        case ("updateTime", .string(let s)):
            guard let t = Timestamp(rfc3339: s) else { throw .invalidArgument("precondition updateTime '\(s)' is not an RFC 3339 timestamp") }
            self = .updateTime(t)
        default:
            throw .invalidArgument("a precondition is {\"exists\": bool} or {\"updateTime\": timestamp}")
        }
    }
}

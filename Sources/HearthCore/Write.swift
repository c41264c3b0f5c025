/// A server-side change to one field, applied at commit time (Firestore's field transforms).
public enum FieldTransform: Sendable, Equatable {
    /// The commit time (equal to `request.time` in rules; one value per commit).
    case serverTimestamp
    /// Adds a number; integer overflow saturates; a non-number field becomes the operand.
    case increment(Value)
    /// The larger of the field and the operand.
    case maximum(Value)
    /// The smaller of the field and the operand.
    case minimum(Value)
    /// Appends each element not already present.
    case arrayUnion([Value])
    /// Removes every equal element.
    case arrayRemove([Value])
}

/// A condition the stored document must meet for a write to apply.
public enum Precondition: Sendable, Equatable {
    /// The document must (or must not) exist.
    case exists(Bool)
    /// The document must exist with exactly this update time.
    case updateTime(Timestamp)
}

/// One write of a commit.
public struct Write: Sendable, Equatable {
    /// What the write does.
    public enum Kind: Sendable, Equatable {
        /// Replace the document; with a mask, change only the masked fields (merge).
        case set(merge: [FieldPath]?)
        /// Create the document; fails if it exists.
        case create
        /// Change the masked fields of an existing document; fails if it is missing.
        case update(mask: [FieldPath])
        /// Delete the document (a no-op when missing).
        case delete
        /// Check the precondition only.
        case verify
    }

    /// What the write does.
    public var kind: Kind
    /// The document written.
    public var path: DocumentPath
    /// The fields given (without sentinels).
    public var fields: [String: Value]
    /// Transforms, in the order given.
    public var transforms: [FieldTransformEntry]
    /// The condition for the write to apply.
    public var precondition: Precondition?

    /// Makes a write.
    public init(kind: Kind, path: DocumentPath, fields: [String: Value] = [:],
                transforms: [FieldTransformEntry] = [], precondition: Precondition? = nil) {
        self.kind = kind
        self.path = path
        self.fields = fields
        self.transforms = transforms
        self.precondition = precondition
    }

    /// Whether the document this write leaves, when it leaves one, has exactly `fields`: whatever was stored
    /// before, a set without merge or a create replaces it, and no transform changes it.
    public var leavesItsFields: Bool {
        guard transforms.isEmpty else { return false }
        switch kind {
        case .set(merge: nil), .create: return true
        default: return false
        }
    }

    /// The method name rules and errors use for this write.
    public var verb: String {
        switch kind {
        case .set(let merge): return merge == nil ? "set" : "set with merge"
        case .create: return "create"
        case .update: return "update"
        case .delete: return "delete"
        case .verify: return "verify"
        }
    }
}

/// A transform at a field path.
public struct FieldTransformEntry: Sendable, Equatable {
    /// The field changed.
    public var field: FieldPath
    /// The change.
    public var transform: FieldTransform

    /// Makes an entry.
    public init(field: FieldPath, transform: FieldTransform) {
        self.field = field
        self.transform = transform
    }
}

/// What applying a write did.
public enum WriteOutcome: Sendable, Equatable {
    /// Nothing changed (a verify, a delete of a missing document, or a write that left the fields equal).
    case unchanged(Document?)
    /// The document now has this content.
    case put(Document)
    /// The document was deleted.
    case deleted(Document)
}

extension Write {
    /// Applies the write to the stored document (nil when missing) at `commitTime`.
    /// Returns the outcome and each transform's result, in order.
    /// With a `budget`, the document the write leaves is charged to it (`Limits.maxCommitWrittenBytes`).
    public func apply(to existing: Document?, commitTime: Timestamp,
                      budget: CommitBudget? = nil) throws(HearthError) -> (WriteOutcome, [Value]) {
        switch precondition {
        case .exists(true)?:
            if existing == nil { throw .notFound("no document to \(verb) at \(path)") }
        case .exists(false)?:
            if existing != nil { throw .alreadyExists("document \(path) already exists") }
        case .updateTime(let t)?:
            guard let existing else {
                throw .failedPrecondition("document \(path) does not exist, so it cannot have update time \(t)")
            }
            if existing.updateTime != t {
                throw .failedPrecondition(
                    "document \(path) was updated at \(existing.updateTime), not at \(t) as the precondition requires")
            }
        case nil:
            break
        }
        var newFields: [String: Value]
        switch kind {
        case .verify:
            return (.unchanged(existing), [])
        case .delete:
            guard let existing else { return (.unchanged(nil), []) }
            return (.deleted(existing), [])
        case .create:
            if existing != nil { throw .alreadyExists("document \(path) already exists") }
            newFields = fields
        case .set(nil):
            newFields = fields
        case .set(let mask?):
            newFields = existing?.fields ?? [:]
            applyMask(mask, to: &newFields)
        case .update(let mask):
            guard let existing else { throw .notFound("no document to update at \(path)") }
            newFields = existing.fields
            applyMask(mask, to: &newFields)
        }
        var results: [Value] = []
        results.reserveCapacity(transforms.count)
        for entry in transforms {
            let result = entry.transform.apply(to: newFields[path: entry.field], commitTime: commitTime)
            newFields.set(result, at: entry.field)
            results.append(result)
        }
        let size = try Document.checkSize(path: path, fields: newFields)
        try budget?.spend(size, on: path)
        if let existing, existing.fields == newFields {
            return (.unchanged(existing), results)
        }
        let doc = Document(path: path, fields: newFields, createTime: existing?.createTime ?? commitTime, updateTime: commitTime)
        return (.put(doc), results)
    }

    private func applyMask(_ mask: [FieldPath], to target: inout [String: Value]) {
        for field in mask {
            if let value = fields[path: field] {
                target.set(value, at: field)
            } else {
                target.remove(at: field)
            }
        }
    }
}

extension FieldTransform {
    /// The field's value after the transform, given its value before (nil when missing).
    public func apply(to current: Value?, commitTime: Timestamp) -> Value {
        switch self {
        case .serverTimestamp:
            return .timestamp(commitTime)
        case .increment(let operand):
            guard let current, current.isNumber else { return operand }
            switch (current, operand) {
            case (.int(let a), .int(let b)):
                let (sum, overflow) = a.addingReportingOverflow(b)
                if overflow { return .int(b > 0 ? .max : .min) }
                return .int(sum)
            default:
                return .double(current.doubleValue! + operand.doubleValue!)
            }
        case .maximum(let operand):
            guard let current, current.isNumber else { return operand }
            return Self.extreme(current, operand, wantLarger: true)
        case .minimum(let operand):
            guard let current, current.isNumber else { return operand }
            return Self.extreme(current, operand, wantLarger: false)
        case .arrayUnion(let elements):
            // Hashed, so that the work grows with the lengths of the arrays, not with their product.
            var items = current?.arrayValue ?? []
            var present = Set(items.map(QueryEqual.init))
            for element in elements where present.insert(QueryEqual(element)).inserted {
                items.append(element)
            }
            return .array(items)
        case .arrayRemove(let elements):
            let items = current?.arrayValue ?? []
            let removed = Set(elements.map(QueryEqual.init))
            return .array(items.filter { !removed.contains(QueryEqual($0)) })
        }
    }

    /// Firestore's maximum/minimum: NaN wins; equal values keep the stored one; mixed types take the
    /// type of the winning operand.
    static func extreme(_ current: Value, _ operand: Value, wantLarger: Bool) -> Value {
        if current.isNaN { return current }
        if operand.isNaN { return operand }
        let c = Value.compare(operand, current)
        if c == 0 { return current }
        return (c > 0) == wantLarger ? operand : current
    }
}

extension Value {
    /// The number as a double, or nil when not a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
}

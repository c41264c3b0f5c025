/// The data of a write, decoded: plain fields, the transforms its sentinels asked for, and (for merges and
/// updates) the mask of fields it touches.
public struct WriteData: Sendable, Equatable {
    /// How the data is read.
    public enum Mode: Sendable {
        /// A whole document (set or create): sentinels anywhere outside arrays, `$delete` refused.
        case set
        /// A merge: like set, and `$delete` allowed; the mask is the leaf fields.
        case merge
        /// An update: top-level keys are field paths; `$delete` only as a key's whole value.
        case update
    }

    /// The plain fields.
    public var fields: [String: Value] = [:]
    /// The transforms, in document order.
    public var transforms: [FieldTransformEntry] = []
    /// The fields touched (merge and update only).
    public var mask: [FieldPath] = []

    /// Makes empty data.
    public init() {}

    /// Decodes write data from JSON.
    public init(json: JSON, mode: Mode) throws(HearthError) {
        guard case .object(let pairs) = json else {
            throw .invalidArgument("write data must be a JSON object, got \(json.kind)")
        }
        switch mode {
        case .set, .merge:
            var fields: [String: Value] = [:]
            try decodeMap(pairs, at: nil, into: &fields, mode: mode)
            self.fields = fields
        case .update:
            var seen: [FieldPath] = []
            for (key, item) in pairs {
                let path = try FieldPath(parsing: key)
                for s in path.segments { try validateFieldName(s, at: key) }
                if path.isDocumentName { throw .invalidArgument("__name__ cannot be updated") }
                if path.segments.count > Limits.maxDepth {
                    throw .invalidArgument("field path '\(key.prefix(200))' is nested more than \(Limits.maxDepth) levels deep")
                }
                for other in seen where other.hasPrefix(path) || path.hasPrefix(other) {
                    throw .invalidArgument("field paths '\(other)' and '\(path)' overlap in one update")
                }
                seen.append(path)
                if let tag = Self.sentinelTag(item) {
                    if tag.0 == "$delete" {
                        try Self.checkTrue(tag, at: path)
                        mask.append(path)
                        continue
                    }
                    // A transformed field is not in the mask: the transform reads the stored value.
                    transforms.append(FieldTransformEntry(field: path, transform: try Self.transform(tag, at: path)))
                    continue
                }
                mask.append(path)
                var holder: [String: Value] = [:]
                if case .object(let inner) = item, !(inner.count == 1 && inner[0].0.hasPrefix("$")) {
                    try decodeMap(inner, at: path, into: &holder, mode: .set)
                    fields.set(.map(holder), at: path)
                } else {
                    fields.set(try Value(wire: item, field: path.description, depth: path.segments.count - 1), at: path)
                }
            }
            if pairs.isEmpty { throw .invalidArgument("an update must name at least one field") }
        }
        var transformFields: [FieldPath] = []
        for t in transforms {
            for other in transformFields where other.hasPrefix(t.field) || t.field.hasPrefix(other) {
                throw .invalidArgument("field '\(t.field)' has more than one transform in one write")
            }
            transformFields.append(t.field)
        }
    }

    /// Decodes one map level of set or merge data. `at` is the map's path (nil at the top).
    private mutating func decodeMap(_ pairs: [(String, JSON)], at base: FieldPath?, into out: inout [String: Value], mode: Mode) throws(HearthError) {
        let depth = base?.segments.count ?? 0
        for (key, item) in pairs {
            let path = base?.appending(key) ?? FieldPath(uncheckedSegments: [key])
            try validateFieldName(key, at: path.description)
            if let tag = Self.sentinelTag(item) {
                if tag.0 == "$delete" {
                    guard mode == .merge else {
                        throw .invalidArgument("$delete at \(path) is only allowed in an update or a set with merge")
                    }
                    try Self.checkTrue(tag, at: path)
                    mask.append(path)
                    continue
                }
                transforms.append(FieldTransformEntry(field: path, transform: try Self.transform(tag, at: path)))
                continue
            }
            if case .object(let inner) = item, !(inner.count == 1 && inner[0].0.hasPrefix("$")) {
                if depth + 1 >= Limits.maxDepth {
                    throw .invalidArgument("\(path) is nested more than \(Limits.maxDepth) levels deep")
                }
                var child: [String: Value] = [:]
                try decodeMap(inner, at: path, into: &child, mode: mode)
                let onlySentinels = child.isEmpty && !inner.isEmpty
                if !onlySentinels { out[key] = .map(child) }
                if mode == .merge, inner.isEmpty { mask.append(path) }
                continue
            }
            let value = try Value(wire: item, field: path.description, depth: depth)
            out[key] = value
            if mode == .merge { mask.append(path) }
        }
    }

    static func sentinelTag(_ json: JSON) -> (String, JSON)? {
        guard case .object(let pairs) = json, pairs.count == 1, WireTag.sentinelTags.contains(pairs[0].0) else { return nil }
        return pairs[0]
    }

    static func checkTrue(_ tag: (String, JSON), at path: FieldPath) throws(HearthError) {
        guard tag.1 == .bool(true) else { throw .invalidArgument("\(tag.0) at \(path) must be true") }
    }

    static func transform(_ tag: (String, JSON), at path: FieldPath) throws(HearthError) -> FieldTransform {
        let (name, body) = tag
        let depth = path.segments.count
        switch name {
        case "$serverTimestamp":
            try checkTrue(tag, at: path)
            return .serverTimestamp
        case "$increment", "$maximum", "$minimum":
            let operand = try Value(wire: body, field: path.description, depth: depth)
            guard operand.isNumber else {
                throw .invalidArgument("\(name) at \(path) needs a number, got \(operand.typeName)")
            }
            switch name {
            case "$increment": return .increment(operand)
            case "$maximum": return .maximum(operand)
            default: return .minimum(operand)
            }
        case "$arrayUnion", "$arrayRemove":
            guard case .array = body else { throw .invalidArgument("\(name) at \(path) needs an array, got \(body.kind)") }
            guard case .array(let items) = try Value(wire: body, field: path.description, depth: depth - 1) else {
                throw .invalidArgument("\(name) at \(path) needs an array")
            }
            return name == "$arrayUnion" ? .arrayUnion(items) : .arrayRemove(items)
        default:
            throw .invalidArgument("unknown sentinel \(name) at \(path)")
        }
    }
}

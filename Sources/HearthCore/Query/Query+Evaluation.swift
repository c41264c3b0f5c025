/// The reference evaluator: Firestore's query semantics written for clarity, not speed. The indexed engine
/// is tested against it.
extension Query {
    /// The value a query sees for a field: the document's path (as a reference) for `__name__`, nil when missing.
    public static func value(of field: FieldPath, in doc: Document) -> Value? {
        field.isDocumentName ? .reference(doc.path) : doc.fields[path: field]
    }

    /// True when the document belongs to the source, passes the filter, and has every field of the normalized
    /// order (Firestore leaves out documents lacking an ordered field). Cursors and limits are not considered.
    public func matches(_ doc: Document) -> Bool {
        matches(doc, order: normalizedOrder)
    }

    /// `matches` with the normalized order computed once by the caller (it builds sets and arrays), for
    /// checking many documents.
    public func matches(_ doc: Document, order: [Order]) -> Bool {
        guard contains(path: doc.path) else { return false }
        for o in order where Query.value(of: o.field, in: doc) == nil { return false }
        return filter?.matches(doc) ?? true
    }

    /// Compares two documents under the normalized order; returns -1, 0 or 1 (0 only for the same path).
    public func compare(_ a: Document, _ b: Document) -> Int {
        Query.compare(a, b, order: normalizedOrder)
    }

    /// `compare` under an order the caller computed once (`normalizedOrder`).
    public static func compare(_ a: Document, _ b: Document, order: [Order]) -> Int {
        for o in order {
            // Missing values sort first; matching documents always have them, this only keeps the order total.
            let c: Int
            switch (value(of: o.field, in: a), value(of: o.field, in: b)) {
            case (nil, nil): c = 0
            case (nil, _): c = -1
            case (_, nil): c = 1
            case (let x?, let y?): c = Value.compare(x, y)
            }
            if c != 0 { return o.direction == .ascending ? c : -c }
        }
        return 0
    }

    /// Whether a cursor names a document, whose values it stands for once resolved (`resolvingCursors`).
    public var hasDocumentCursor: Bool {
        if case .document? = start?.position { return true }
        if case .document? = end?.position { return true }
        return false
    }

    /// The documents the cursors name.
    public var cursorDocuments: [DocumentPath] {
        [start, end].compactMap { cursor in
            guard case .document(let path)? = cursor?.position else { return nil }
            return path
        }
    }

    /// Turns document cursors into value cursors over the whole normalized order, reading the cursor documents
    /// through `lookup`. Fails when a cursor document is missing or lacks an ordered field (Firestore's rule).
    public func resolvingCursors(_ lookup: (DocumentPath) -> Document?) throws(HearthError) -> Query {
        var q = self
        q.start = try resolve(start, name: start?.inclusive == false ? "startAfter" : "startAt", lookup)
        q.end = try resolve(end, name: end?.inclusive == false ? "endBefore" : "endAt", lookup)
        return q
    }

    func resolve(_ cursor: Cursor?, name: String, _ lookup: (DocumentPath) -> Document?) throws(HearthError) -> Cursor? {
        guard let cursor, case .document(let path) = cursor.position else { return cursor }
        guard let doc = lookup(path) else {
            throw .invalidArgument("Invalid query. The \(name) cursor document '\(path)' does not exist.")
        }
        var values: [Value] = []
        for o in normalizedOrder {
            guard let v = Query.value(of: o.field, in: doc) else {
                throw .invalidArgument(
                    "Invalid query. You are trying to start or end a query using a document for which the field "
                        + "'\(o.field)' (used as the orderBy) does not exist.")
            }
            values.append(v)
        }
        return Cursor(.values(values), inclusive: cursor.inclusive)
    }

    /// True when the document lies between the cursors. Document cursors must be resolved first
    /// (`resolvingCursors`); an unresolved one admits nothing.
    public func withinCursors(_ doc: Document) -> Bool {
        if start == nil && end == nil { return true }
        return withinCursors(doc, order: normalizedOrder)
    }

    /// `withinCursors` under an order the caller computed once (`normalizedOrder`).
    public func withinCursors(_ doc: Document, order: [Order]) -> Bool {
        if let start {
            guard let c = Query.compareBound(start, to: doc, order: order) else { return false }
            if start.inclusive ? c > 0 : c >= 0 { return false }
        }
        if let end {
            guard let c = Query.compareBound(end, to: doc, order: order) else { return false }
            if end.inclusive ? c < 0 : c <= 0 { return false }
        }
        return true
    }

    /// The cursor's position against the document, over the cursor's prefix of the order; nil if unresolved.
    static func compareBound(_ cursor: Cursor, to doc: Document, order: [Order]) -> Int? {
        guard case .values(let values) = cursor.position else { return nil }
        for (k, bound) in values.enumerated() {
            guard let v = value(of: order[k].field, in: doc) else { return -1 }
            let c = Value.compare(bound, v)
            if c != 0 { return order[k].direction == .ascending ? c : -c }
        }
        return 0
    }

    /// The same query read backwards: every direction flipped and the cursors swapped (how `limitToLast` runs).
    public var reversed: Query {
        var q = self
        // Flipping the explicit order flips the implicit fields too, since they follow the last explicit direction.
        // A query without explicit order gets its implicit order made explicit first.
        q.orderBy = normalizedOrder.map { Order($0.field, $0.direction.reversed) }
        q.start = end
        q.end = start
        q.limit = limitToLast ?? limit
        q.limitToLast = nil
        return q
    }

    /// Runs the query over documents (any documents: the source is checked here): filter, existence rules,
    /// order, cursors, offset, limit or limit-to-last, projection. Document cursors are looked up in `docs`.
    public func run(over docs: [Document]) throws(HearthError) -> [Document] {
        var byPath: [DocumentPath: Document] = [:]
        for d in docs { byPath[d.path] = d }
        return try run(over: docs, lookup: { byPath[$0] })
    }

    /// Runs the query, looking document cursors up through `lookup`.
    public func run(over docs: [Document], lookup: (DocumentPath) -> Document?) throws(HearthError) -> [Document] {
        let resolved = try resolvingCursors(lookup)
        if limitToLast != nil {
            return Array(resolved.reversed.runForward(docs).reversed())
        }
        return resolved.runForward(docs)
    }

    func runForward(_ docs: [Document]) -> [Document] {
        let order = normalizedOrder
        var out = docs.filter { matches($0) && withinCursors($0) }
        out.sort { Query.compare($0, $1, order: order) < 0 }
        out = Array(out.dropFirst(offset))
        if let limit { out = Array(out.prefix(limit)) }
        return out.map(project)
    }

    /// The document with only the selected fields (Firestore's projection); whole when nothing is selected.
    public func project(_ doc: Document) -> Document {
        guard let select else { return doc }
        var fields: [String: Value] = [:]
        for path in select where !path.isDocumentName {
            if let v = doc.fields[path: path] { fields.set(v, at: path) }
        }
        var out = doc
        out.fields = fields
        return out
    }
}

extension Filter {
    /// True when the document satisfies the filter tree.
    public func matches(_ doc: Document) -> Bool {
        switch self {
        case .field(let f): return f.matches(doc)
        case .and(let items): return items.allSatisfy { $0.matches(doc) }
        case .or(let items): return items.contains { $0.matches(doc) }
        }
    }
}

extension FieldFilter {
    /// Firestore's semantics for one comparison. A missing field matches nothing. Equality is query equality
    /// (`1 == 1.0`, `NaN == NaN`, `0.0 == -0.0`). Range operators only match values of the operand's type class
    /// and never NaN. `!=` matches any other value, null included; `not-in` also leaves out null, and a
    /// `not-in` list holding null matches nothing.
    public func matches(_ doc: Document) -> Bool {
        guard let v = Query.value(of: field, in: doc) else { return false }
        switch op {
        case .equal:
            return Value.compare(v, value) == 0
        case .notEqual:
            return Value.compare(v, value) != 0
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard v.typeOrder == value.typeOrder, !v.isNaN, !value.isNaN else { return false }
            let c = Value.compare(v, value)
            switch op {
            case .lessThan: return c < 0
            case .lessThanOrEqual: return c <= 0
            case .greaterThan: return c > 0
            default: return c >= 0
            }
        case .arrayContains:
            guard case .array(let items) = v else { return false }
            return items.contains { Value.compare($0, value) == 0 }
        case .arrayContainsAny:
            guard case .array(let items) = v else { return false }
            return items.contains { item in values.contains { Value.compare(item, $0) == 0 } }
        case .in:
            return values.contains { Value.compare(v, $0) == 0 }
        case .notIn:
            if values.contains(.null) { return false }
            if case .null = v { return false }
            return !values.contains { Value.compare(v, $0) == 0 }
        }
    }
}

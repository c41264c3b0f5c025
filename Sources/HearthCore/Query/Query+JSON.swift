/// Reading queries from their JSON form (docs/api.md, Queries).
extension Query {
    static let jsonKeys = [
        "from", "where", "orderBy", "startAt", "startAfter", "endAt", "endBefore", "limit", "limitToLast",
        "offset", "select",
    ]

    /// Reads a query from its JSON form and validates it with Firestore's rules.
    public init(json: JSON) throws(HearthError) {
        let pairs = try QueryJSON.object(json, "query")
        try QueryJSON.checkKeys(pairs, allowed: Query.jsonKeys, in: "query")
        guard let from = json["from"] else { throw .invalidArgument("Invalid query. 'from' is required") }
        self.init(source: try Source(json: from))
        if let w = json["where"] { filter = try Query.parseWhere(w, source: source) }
        if let o = json["orderBy"] { orderBy = try Query.parseOrderBy(o) }
        start = try parseCursorPair(json, inclusive: "startAt", exclusive: "startAfter")
        end = try parseCursorPair(json, inclusive: "endAt", exclusive: "endBefore")
        limit = try QueryJSON.optionalInt(json["limit"], "limit")
        limitToLast = try QueryJSON.optionalInt(json["limitToLast"], "limitToLast")
        offset = try QueryJSON.optionalInt(json["offset"], "offset") ?? 0
        if let s = json["select"], s != .null { select = try Query.parseSelect(s) }
        try validate()
    }

    /// Reads a query from JSON text.
    public init(jsonText: String) throws(HearthError) {
        try self.init(json: JSON.parse(jsonText))
    }

    // MARK: where

    static func parseWhere(_ json: JSON, source: Source) throws(HearthError) -> Filter? {
        switch json {
        case .null:
            return nil
        case .array(let items):
            if items.isEmpty { return nil }
            // A lone triple, `["f", "==", v]`, or the short AND form, `[["f", "==", v], ...]`.
            if case .string = items[0] { return try parseFilter(json, at: "where", source: source) }
            var out: [Filter] = []
            for (k, item) in items.enumerated() {
                out.append(try parseFilter(item, at: "where[\(k)]", source: source))
            }
            return out.count == 1 ? out[0] : .and(out)
        case .object:
            return try parseFilter(json, at: "where", source: source)
        default:
            throw .invalidArgument("Invalid query. 'where' must be an object or an array of filters, got \(json.kind)")
        }
    }

    static func parseFilter(_ json: JSON, at place: String, source: Source) throws(HearthError) -> Filter {
        switch json {
        case .array(let parts):
            guard parts.count == 3, case .string(let field) = parts[0], case .string(let op) = parts[1] else {
                throw .invalidArgument("Invalid query. \(place) must be a [field, operator, value] triple")
            }
            return .field(try fieldFilter(field: field, op: op, value: parts[2], at: place, source: source))
        case .object(let pairs):
            if pairs.count == 1, pairs[0].0 == "and" || pairs[0].0 == "or" {
                let kind = pairs[0].0
                guard case .array(let items) = pairs[0].1 else {
                    throw .invalidArgument("Invalid query. \(place).\(kind) must be an array of filters")
                }
                var out: [Filter] = []
                for (k, item) in items.enumerated() {
                    out.append(try parseFilter(item, at: "\(place).\(kind)[\(k)]", source: source))
                }
                return kind == "and" ? .and(out) : .or(out)
            }
            try QueryJSON.checkKeys(pairs, allowed: ["field", "op", "value"], in: place,
                                    hint: "a filter is {\"field\", \"op\", \"value\"}, {\"and\": [...]} or {\"or\": [...]}")
            guard case .string(let field)? = json["field"] else {
                throw .invalidArgument("Invalid query. \(place).field must be a field path string")
            }
            guard case .string(let op)? = json["op"] else {
                throw .invalidArgument("Invalid query. \(place).op must be an operator string")
            }
            guard let value = json["value"] else { throw .invalidArgument("Invalid query. \(place).value is required") }
            return .field(try fieldFilter(field: field, op: op, value: value, at: place, source: source))
        default:
            throw .invalidArgument("Invalid query. \(place) must be a filter object or a triple, got \(json.kind)")
        }
    }

    static func fieldFilter(field text: String, op text2: String, value: JSON, at place: String,
                            source: Source) throws(HearthError) -> FieldFilter {
        let field = try parseFieldPath(text, at: "\(place).field")
        guard let op = FilterOperator(rawValue: text2) else {
            throw .invalidArgument(
                "Invalid query. \(place): unknown operator '\(text2)'; use one of "
                    + FilterOperator.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let valuePlace = "\(place).value"
        if op.takesList {
            guard case .array(let items) = value else {
                throw .invalidArgument("Invalid query. A non-empty array is required for '\(op.rawValue)' filters (at \(valuePlace)).")
            }
            var out: [Value] = []
            for (k, item) in items.enumerated() {
                out.append(try filterValue(item, field: field, at: "\(valuePlace)[\(k)]", source: source))
            }
            return FieldFilter(field: field, op: op, value: .array(out))
        }
        return FieldFilter(field: field, op: op, value: try filterValue(value, field: field, at: valuePlace, source: source))
    }

    /// A filter operand: wire JSON, or a document path when the field is `__name__`.
    static func filterValue(_ json: JSON, field: FieldPath, at place: String, source: Source) throws(HearthError) -> Value {
        if field.isDocumentName { return try documentNameValue(json, at: place, collection: source.collection) }
        return try Value(wire: json, field: place)
    }

    /// A `__name__` value: `{"$ref": path}`, a document path, or (for collection queries) a plain document id.
    static func documentNameValue(_ json: JSON, at place: String, collection: CollectionPath?) throws(HearthError) -> Value {
        switch json {
        case .string(let s):
            if !s.utf8.contains(UInt8(ascii: "/")), let collection {
                return .reference(try collection.document(s))
            }
            do {
                return .reference(try DocumentPath(s))
            } catch {
                throw .invalidArgument(
                    "Invalid query. \(place): a __name__ value must be a document path or {\"$ref\": path}: \(error.message)")
            }
        default:
            let v = try Value(wire: json, field: place)
            guard case .reference = v else {
                throw .invalidArgument(
                    "Invalid query. \(place): a __name__ value must be a document path or {\"$ref\": path}, got \(v.typeName)")
            }
            return v
        }
    }

    /// Parses a query field path: dotted with backticks; `__name__` is the document path; other reserved names
    /// (`__x__`) are refused.
    static func parseFieldPath(_ text: String, at place: String) throws(HearthError) -> FieldPath {
        let path: FieldPath
        do { path = try FieldPath(parsing: text) } catch {
            throw .invalidArgument("Invalid query. \(place): \(error.message)")
        }
        if path.isDocumentName { return .documentName }
        for s in path.segments where s.utf8.count >= 4 && s.hasPrefix("__") && s.hasSuffix("__") {
            throw .invalidArgument("Invalid query. \(place): field name '\(s)' is reserved (names matching __.*__)")
        }
        return path
    }

    // MARK: orderBy

    static func parseOrderBy(_ json: JSON) throws(HearthError) -> [Order] {
        guard case .array(let items) = json else {
            if json == .null { return [] }
            throw .invalidArgument("Invalid query. 'orderBy' must be an array, got \(json.kind)")
        }
        var out: [Order] = []
        for (k, item) in items.enumerated() {
            let place = "orderBy[\(k)]"
            var fieldText: String?
            var directionJSON: JSON?
            switch item {
            case .string(let s):
                fieldText = s
            case .array(let parts):
                guard (1...2).contains(parts.count), case .string(let s) = parts[0] else {
                    throw .invalidArgument("Invalid query. \(place) must be [field] or [field, \"asc\"|\"desc\"]")
                }
                fieldText = s
                directionJSON = parts.count == 2 ? parts[1] : nil
            case .object(let pairs):
                try QueryJSON.checkKeys(pairs, allowed: ["field", "direction"], in: place)
                guard case .string(let s)? = item["field"] else {
                    throw .invalidArgument("Invalid query. \(place).field must be a field path string")
                }
                fieldText = s
                directionJSON = item["direction"]
            default:
                throw .invalidArgument("Invalid query. \(place) must be a field path, [field, direction] or {\"field\", \"direction\"}")
            }
            let field = try parseFieldPath(fieldText!, at: "\(place).field")
            out.append(Order(field, try parseDirection(directionJSON, at: "\(place).direction")))
        }
        return out
    }

    static func parseDirection(_ json: JSON?, at place: String) throws(HearthError) -> Direction {
        switch json {
        case nil, .null?: return .ascending
        case .string(let s)?:
            switch s.lowercased() {
            case "asc", "ascending": return .ascending
            case "desc", "descending": return .descending
            default: break
            }
        default: break
        }
        throw .invalidArgument("Invalid query. \(place) must be \"asc\" or \"desc\"")
    }

    // MARK: cursors

    func parseCursorPair(_ json: JSON, inclusive: String, exclusive: String) throws(HearthError) -> Cursor? {
        let a = json[inclusive].flatMap { $0 == .null ? nil : $0 }
        let b = json[exclusive].flatMap { $0 == .null ? nil : $0 }
        if a != nil && b != nil {
            throw .invalidArgument("Invalid query. '\(inclusive)' and '\(exclusive)' cannot both be given")
        }
        if let a { return Cursor(try parseCursorPosition(a, name: inclusive), inclusive: true) }
        if let b { return Cursor(try parseCursorPosition(b, name: exclusive), inclusive: false) }
        return nil
    }

    /// A cursor is a list of values for a prefix of the normalized order, or a document path
    /// (a string or `{"$ref": path}`).
    func parseCursorPosition(_ json: JSON, name: String) throws(HearthError) -> Cursor.Position {
        switch json {
        case .array(let items):
            let order = normalizedOrder
            if items.count > order.count {
                throw .invalidArgument(
                    "Invalid query. Too many arguments provided to \(name): \(items.count) values, but the query is ordered by "
                        + "only \(order.count) field(s) (\(order.map(\.field.description).joined(separator: ", "))). "
                        + "The number of values must be less than or equal to the number of orderings.")
            }
            var out: [Value] = []
            for (k, item) in items.enumerated() {
                if order[k].field.isDocumentName {
                    out.append(try Query.documentNameValue(item, at: "\(name)[\(k)]", collection: source.collection))
                } else {
                    out.append(try Value(wire: item, field: "\(name)[\(k)]"))
                }
            }
            return .values(out)
        case .string(let s):
            do { return .document(try DocumentPath(s)) } catch {
                throw .invalidArgument("Invalid query. \(name) must be a list of values or a document path: \(error.message)")
            }
        case .object:
            guard case .reference(let path) = try Value(wire: json, field: name) else {
                throw .invalidArgument("Invalid query. \(name) must be a list of values or a document path")
            }
            return .document(path)
        default:
            throw .invalidArgument("Invalid query. \(name) must be a list of values or a document path, got \(json.kind)")
        }
    }

    // MARK: select

    static func parseSelect(_ json: JSON) throws(HearthError) -> [FieldPath] {
        guard case .array(let items) = json else {
            throw .invalidArgument("Invalid query. 'select' must be an array of field paths, got \(json.kind)")
        }
        var out: [FieldPath] = []
        for (k, item) in items.enumerated() {
            guard case .string(let s) = item else {
                throw .invalidArgument("Invalid query. select[\(k)] must be a field path string")
            }
            out.append(try parseFieldPath(s, at: "select[\(k)]"))
        }
        return out
    }
}

extension Query.Source {
    /// Reads `"coll/path"` or `{"collectionGroup": id, "under"?: docPath}`.
    public init(json: JSON) throws(HearthError) {
        switch json {
        case .string(let s):
            do { self = .collection(try CollectionPath(s)) } catch {
                throw .invalidArgument("Invalid query. 'from' must be a collection path: \(error.message)")
            }
        case .object(let pairs):
            try QueryJSON.checkKeys(pairs, allowed: ["collectionGroup", "under"], in: "from")
            guard case .string(let id)? = json["collectionGroup"] else {
                throw .invalidArgument("Invalid query. from.collectionGroup must be a collection id string")
            }
            do { try validateID(id, kind: "collection group id") } catch {
                throw .invalidArgument("Invalid query. \(error.message)")
            }
            var under: DocumentPath?
            switch json["under"] {
            case nil, .null?: break
            case .string(let s)?:
                do { under = try DocumentPath(s) } catch {
                    throw .invalidArgument("Invalid query. from.under must be a document path: \(error.message)")
                }
            default:
                throw .invalidArgument("Invalid query. from.under must be a document path string")
            }
            self = .collectionGroup(id: id, under: under)
        default:
            throw .invalidArgument(
                "Invalid query. 'from' must be a collection path or {\"collectionGroup\": id, \"under\"?: path}, got \(json.kind)")
        }
    }
}

/// Small readers shared by the query and aggregation parsers.
enum QueryJSON {
    static func object(_ json: JSON, _ what: String) throws(HearthError) -> [(String, JSON)] {
        guard case .object(let pairs) = json else {
            throw .invalidArgument("Invalid \(what). It must be a JSON object, got \(json.kind)")
        }
        return pairs
    }

    /// Refuses keys outside `allowed`, naming them.
    static func checkKeys(_ pairs: [(String, JSON)], allowed: [String], in place: String, hint: String? = nil) throws(HearthError) {
        let unknown = pairs.map(\.0).filter { !allowed.contains($0) }
        guard !unknown.isEmpty else { return }
        let names = unknown.map { "'\($0)'" }.joined(separator: ", ")
        throw .invalidArgument(
            "Invalid query. Unknown key\(unknown.count > 1 ? "s" : "") \(names) in \(place); allowed: "
                + allowed.joined(separator: ", ") + (hint.map { " (\($0))" } ?? ""))
    }

    static func optionalInt(_ json: JSON?, _ name: String) throws(HearthError) -> Int? {
        switch json {
        case nil, .null?: return nil
        case .int(let i)?: return Int(i)
        default: throw .invalidArgument("Invalid query. '\(name)' must be an integer, got \(json!.kind)")
        }
    }
}

/// Writing queries back as JSON, in the long form `init(json:)` reads.
extension Query {
    /// Writes the query's canonical JSON (long form; values in the wire encoding).
    public func write(to w: inout JSONWriter) {
        w.raw("{\"from\":")
        switch source {
        case .collection(let c):
            w.string(c.description)
        case .collectionGroup(let id, let under):
            w.raw("{\"collectionGroup\":")
            w.string(id)
            if let under {
                w.raw(",\"under\":")
                w.string(under.description)
            }
            w.raw("}")
        }
        if let filter {
            w.raw(",\"where\":")
            Query.write(filter, to: &w)
        }
        if !orderBy.isEmpty {
            w.raw(",\"orderBy\":[")
            for (k, o) in orderBy.enumerated() {
                if k > 0 { w.raw(",") }
                w.raw("{\"field\":")
                w.string(o.field.description)
                w.raw(",\"direction\":\"\(o.direction.rawValue)\"}")
            }
            w.raw("]")
        }
        if let start { Query.write(start, name: start.inclusive ? "startAt" : "startAfter", to: &w) }
        if let end { Query.write(end, name: end.inclusive ? "endAt" : "endBefore", to: &w) }
        if let limit { w.raw(",\"limit\":\(limit)") }
        if let limitToLast { w.raw(",\"limitToLast\":\(limitToLast)") }
        if offset != 0 { w.raw(",\"offset\":\(offset)") }
        if let select {
            w.raw(",\"select\":[")
            for (k, f) in select.enumerated() {
                if k > 0 { w.raw(",") }
                w.string(f.description)
            }
            w.raw("]")
        }
        w.raw("}")
    }

    /// The query's canonical JSON text.
    public var jsonText: String {
        var w = JSONWriter()
        write(to: &w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    static func write(_ filter: Filter, to w: inout JSONWriter) {
        switch filter {
        case .field(let f):
            w.raw("{\"field\":")
            w.string(f.field.description)
            w.raw(",\"op\":")
            w.string(f.op.rawValue)
            w.raw(",\"value\":")
            f.value.write(to: &w)
            w.raw("}")
        case .and(let items), .or(let items):
            if case .and = filter { w.raw("{\"and\":[") } else { w.raw("{\"or\":[") }
            for (k, item) in items.enumerated() {
                if k > 0 { w.raw(",") }
                write(item, to: &w)
            }
            w.raw("]}")
        }
    }

    static func write(_ cursor: Cursor, name: String, to w: inout JSONWriter) {
        w.raw(",\"\(name)\":")
        switch cursor.position {
        case .document(let path):
            w.string(path.description)
        case .values(let values):
            Value.array(values).write(to: &w)
        }
    }
}

import HearthCore
import HearthSQLite

/// One range scan of the field index: the rows of one scope and `field` column with keys in a range, in
/// (key, doc) order, optionally keeping only documents that also have given entries (probes: index lookups
/// that stand in for equality and array-contains filters on other fields).
struct IndexScan {
    /// One end of a range.
    struct Bound {
        var key: [UInt8]
        var inclusive: Bool
    }

    /// The `scope` column.
    var scope: String
    /// The collection of a collection-scope scan (its `doc` column holds ids); nil for a group scan (whole paths).
    var collection: CollectionPath?
    /// For a root collection's query, served from its group scope: the collection, whose rows are those of
    /// two-segment paths starting with it (others in the range are skipped).
    var rootCollection: CollectionPath?
    /// The `field` column.
    var field: String
    var lower: Bound?
    var upper: Bound?
    var docLower: Bound?
    var docUpper: Bound?
    /// For a group scan: rows of documents whose `doc` starts with this are left out (a path prefix, which
    /// ends with a segment's terminator 00 01).
    var excludedDocPrefix: [UInt8]?
    /// Descending key (and document) order.
    var descending = false
    /// True when the key range applies every range filter on the scanned field.
    var appliesRanges = false
    /// For a root collection's scan: select only its own rows in SQL (used to count rows without reading
    /// them), instead of skipping the others in `path(ofDoc:)`.
    var onlyRootRowsInSQL = false
    /// `field` and `key` columns a document must also have entries for.
    var probes: [(field: String, key: [UInt8])] = []

    /// True when the key range holds a single key (every row has the same key).
    var isSingleKey: Bool {
        guard let lower, let upper else { return false }
        return lower.inclusive && upper.inclusive && lower.key == upper.key
    }

    /// True when the range can hold no key.
    var isEmpty: Bool {
        Self.empty(lower, upper) || Self.empty(docLower, docUpper)
    }

    static func empty(_ lower: Bound?, _ upper: Bound?) -> Bool {
        guard let lower, let upper else { return false }
        let c = compareKeys(lower.key, upper.key)
        return c > 0 || (c == 0 && !(lower.inclusive && upper.inclusive))
    }

    /// Raises the lower key bound (only ever narrows).
    mutating func narrowLower(_ b: Bound) { lower = Self.higher(lower, b) }
    /// Lowers the upper key bound.
    mutating func narrowUpper(_ b: Bound) { upper = Self.lower(upper, b) }
    /// Raises the lower document bound.
    mutating func narrowDocLower(_ b: Bound) { docLower = Self.higher(docLower, b) }
    /// Lowers the upper document bound.
    mutating func narrowDocUpper(_ b: Bound) { docUpper = Self.lower(docUpper, b) }

    static func higher(_ a: Bound?, _ b: Bound) -> Bound {
        guard let a else { return b }
        let c = compareKeys(a.key, b.key)
        if c != 0 { return c > 0 ? a : b }
        return Bound(key: a.key, inclusive: a.inclusive && b.inclusive)
    }

    static func lower(_ a: Bound?, _ b: Bound) -> Bound {
        guard let a else { return b }
        let c = compareKeys(a.key, b.key)
        if c != 0 { return c < 0 ? a : b }
        return Bound(key: a.key, inclusive: a.inclusive && b.inclusive)
    }

    /// The SQL and its parameters (text or blob) for the scan; `limit` caps the rows.
    func sql(limit: Int? = nil) -> (String, [SQLParameter]) {
        var (sql, params) = conditions(selecting: "key, doc")
        sql += descending ? " ORDER BY key DESC, doc DESC" : " ORDER BY key, doc"
        if let limit {
            sql += " LIMIT ?"
            params.append(.int(Int64(limit)))
        }
        return (sql, params)
    }

    /// The SQL counting the scan's rows, at most `limit` of them, in any order.
    func countSQL(limit: Int? = nil) -> (String, [SQLParameter]) {
        guard let limit else { return conditions(selecting: "count(*)") }
        var (sql, params) = conditions(selecting: "1")
        params.append(.int(Int64(limit)))
        sql = "SELECT count(*) FROM (\(sql) LIMIT ?)"
        return (sql, params)
    }

    /// `SELECT columns FROM field_index ... WHERE` the scan's conditions, and their parameters.
    private func conditions(selecting columns: String) -> (String, [SQLParameter]) {
        var sql = "SELECT \(columns) FROM field_index AS i WHERE scope = ? AND field = ?"
        var params: [SQLParameter] = [.text(scope), .text(field)]
        if isSingleKey {
            sql += " AND key = ?"
            params.append(.blob(lower!.key))
        } else {
            if let lower { sql += lower.inclusive ? " AND key >= ?" : " AND key > ?"; params.append(.blob(lower.key)) }
            if let upper { sql += upper.inclusive ? " AND key <= ?" : " AND key < ?"; params.append(.blob(upper.key)) }
        }
        if let docLower { sql += docLower.inclusive ? " AND doc >= ?" : " AND doc > ?"; params.append(.blob(docLower.key)) }
        if let docUpper { sql += docUpper.inclusive ? " AND doc <= ?" : " AND doc < ?"; params.append(.blob(docUpper.key)) }
        if let excludedDocPrefix {
            var end = excludedDocPrefix
            end[end.count - 1] += 1
            sql += " AND NOT (doc >= ? AND doc < ?)"
            params += [.blob(excludedDocPrefix), .blob(end)]
        }
        if onlyRootRowsInSQL, let rootCollection {
            // A root collection's rows in its group scope: paths of two segments that start with it. Every
            // segment ends with 00 01 (a NUL inside one is 00 FF) and the path with 00 00, so after the
            // collection's prefix the first 00 01 must be the last one.
            let prefix = IndexKey.prefix(segments: [rootCollection.id])
            var end = prefix
            end[end.count - 1] += 1
            sql += " AND doc >= ? AND doc < ? AND instr(substr(doc, ?), X'0001') = length(doc) - ?"
            params += [.blob(prefix), .blob(end), .int(Int64(prefix.count + 1)), .int(Int64(prefix.count + 3))]
        }
        for probe in probes {
            sql += " AND EXISTS (SELECT 1 FROM field_index AS p WHERE p.scope = i.scope AND p.field = ? AND p.key = ? AND p.doc = i.doc)"
            params.append(.text(probe.field))
            params.append(.blob(probe.key))
        }
        return (sql, params)
    }

    /// The document a row's `doc` column names.
    func path(ofDoc doc: [UInt8]) -> DocumentPath? {
        guard let segments = IndexKey.decodeSegments(doc) else { return nil }
        if let collection {
            guard segments.count == 1 else { return nil }
            return DocumentPath(uncheckedSegments: collection.segments + segments)
        }
        guard segments.count >= 2, segments.count % 2 == 0 else { return nil }
        if let rootCollection, segments.count != 2 || segments[0] != rootCollection.id { return nil }
        return DocumentPath(uncheckedSegments: segments)
    }

    /// The `doc` column value naming a path in this scan's scope, or nil when the path cannot be in it.
    func docKey(_ path: DocumentPath) -> [UInt8]? {
        if let collection {
            guard path.parent == collection else { return nil }
            return IndexKey.encode(segments: [path.id])
        }
        if let rootCollection, path.parent != rootCollection { return nil }
        return IndexKey.encode(segments: path.segments)
    }
}

/// A statement parameter.
enum SQLParameter {
    case text(String)
    case blob([UInt8])
    case int(Int64)
}

extension Statement {
    /// Binds parameters from 1 on.
    func bind(_ params: [SQLParameter]) {
        for (k, p) in params.enumerated() {
            let index = Int32(k + 1)
            switch p {
            case .text(let s): bind(index, s)
            case .blob(let b): bind(index, b)
            case .int(let i): bind(index, i)
            }
        }
    }
}

func compareKeys(_ a: [UInt8], _ b: [UInt8]) -> Int {
    for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

import HearthCore

/// One entry of the field index for one document, before it is placed in a scope.
///
/// Every field gets a value entry (nested map fields too, and the map itself); array fields also get one
/// "contains" entry per distinct element; every document gets a `__name__` entry. The `key` is the value's
/// `IndexKey`, so SQLite's BLOB order is Firestore's value order. Rows are stored per scope: collection group
/// (`doc` = the whole path's key, every collection with that id) and, for documents of subcollections,
/// collection too (`doc` = the id's key, documents of one collection only), so that a query on one
/// subcollection never reads its siblings' rows. A root collection's documents are contiguous in the group
/// scope (their keys start with the collection id), so they need no second copy: writes stay cheaper.
/// Within equal keys, rows sort by `doc`, which is Firestore's `__name__` order in both scopes.
struct IndexEntry: Hashable {
    /// The `field` column: the canonical field path, prefixed by `containsMarker` for array-contains entries.
    var field: String
    /// The value's key.
    var key: [UInt8]

    /// Hashes the key's bytes at once: hashed element by element, keys cost every write more than they should.
    func hash(into hasher: inout Hasher) {
        hasher.combine(field)
        key.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// Marks array-contains entries, which a canonical field path never starts with.
    static let containsMarker = "\u{1}"
    /// The `field` column of the `__name__` entries (their key is empty).
    static let nameField = "__name__"

    /// The `field` column for a field's value entries.
    static func valueField(_ path: FieldPath) -> String { path.isDocumentName ? nameField : path.description }
    /// The `field` column for a field's array-contains entries.
    static func containsField(_ path: FieldPath) -> String { containsMarker + path.description }

    /// The `scope` column for a collection.
    static func collectionScope(_ collection: CollectionPath) -> String { "c" + collection.description }
    /// The `scope` column for a collection group.
    static func groupScope(_ id: String) -> String { "g" + id }

    /// The scopes (and `doc` column values) a document's rows go to.
    static func scopes(of path: DocumentPath) -> [(scope: String, doc: [UInt8])] {
        let group = (groupScope(path.collectionID), IndexKey.encode(segments: path.segments))
        if path.segments.count == 2 { return [group] }
        return [group, (collectionScope(path.parent), IndexKey.encode(segments: [path.id]))]
    }

    /// The entries of a document's fields, or an error past Firestore's per-document limit.
    /// `overrides` are those of the document's collection id (nil: every field indexed).
    static func entries(of fields: [String: Value], limit: Int = Limits.maxIndexEntriesPerDocument,
                        overrides: FieldOverrides? = nil) throws(HearthError) -> Set<IndexEntry> {
        // Room for an entry per top-level field, so that the set is not rehashed as it grows (its keys can be long).
        var out = Set<IndexEntry>(minimumCapacity: fields.count + 1)
        out.insert(IndexEntry(field: nameField, key: []))
        for (name, value) in fields {
            add(value, at: FieldPath(uncheckedSegments: [name]), inherited: .automatic, overrides: overrides,
                limit: limit, to: &out)
        }
        if out.count > limit {
            throw .invalidArgument(
                "the document needs \(out.count) index entries; the limit is \(limit) "
                    + "(every field, nested map field and distinct array element is indexed)")
        }
        return out
    }

    /// Adds a field's entries, then its subfields': the field's own override, else its parent's indexing,
    /// decides which of its entries it gets, and its subfields start from that.
    private static func add(_ value: Value, at path: FieldPath, inherited: FieldIndexing, overrides: FieldOverrides?,
                            limit: Int, to out: inout Set<IndexEntry>) {
        // Stop early on enormous documents; the caller reports the limit.
        if out.count > limit { return }
        let indexing = overrides?.own(path) ?? inherited
        if indexing.values { out.insert(IndexEntry(field: path.description, key: IndexKey.encode(value))) }
        switch value {
        case .array(let items) where indexing.contains:
            let field = containsField(path)
            for item in items { out.insert(IndexEntry(field: field, key: IndexKey.encode(item))) }
        case .map(let m):
            for (name, child) in m {
                add(child, at: path.appending(name), inherited: indexing, overrides: overrides, limit: limit, to: &out)
            }
        default:
            break
        }
    }

    /// The entries of a document's fields in composite indexes (each index's `entryField`): one per index
    /// whose every field the document has, or one per distinct element of its `contains` field.
    static func compositeEntries(of fields: [String: Value], indexes: [CompositeIndex]) -> Set<IndexEntry> {
        var out: Set<IndexEntry> = []
        indexes: for index in indexes {
            var keys: [[UInt8]] = [[]]
            for component in index.fields {
                guard let value = fields[path: component.field] else { continue indexes }
                switch component.kind {
                case .ascending, .descending:
                    let descending = index.storedDescending(component)
                    for k in keys.indices { IndexKey.append(value, descending: descending, to: &keys[k]) }
                case .contains:
                    guard case .array(let items) = value else { continue indexes }
                    let elements = Set(items.map(IndexKey.encode))
                    keys = keys.flatMap { prefix in elements.map { prefix + $0 } }
                }
            }
            for key in keys { out.insert(IndexEntry(field: index.entryField, key: key)) }
        }
        return out
    }
}

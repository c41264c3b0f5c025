/// A query over documents, with Firestore's semantics: a source (a collection, or every collection with one
/// id), a filter tree, an ordering, cursors, offset, limit or limit-to-last, and a projection.
///
/// `init(json:)` reads the JSON of `POST /v1/query` (docs/api.md, Queries) and validates with Firestore's
/// rules; a query built in code is checked with `validate()`. `Query+Evaluation.swift` holds the reference
/// evaluator the indexed engine is tested against.
public struct Query: Sendable, Equatable {
    /// Where the documents come from.
    public enum Source: Sendable, Equatable {
        /// The documents directly in one collection.
        case collection(CollectionPath)
        /// The documents of every collection with this id, at any depth, optionally only below a document;
        /// with no document, not below the reserved root of other databases (`CollectionPath.namespacesRoot`).
        case collectionGroup(id: String, under: DocumentPath?)

        /// The id of the collection, or of the collections of the group.
        public var collectionID: String {
            switch self {
            case .collection(let c): return c.id
            case .collectionGroup(let id, _): return id
            }
        }
    }

    /// A sort direction.
    public enum Direction: String, Sendable, Hashable {
        /// Smallest first.
        case ascending = "asc"
        /// Largest first.
        case descending = "desc"

        /// The other direction.
        public var reversed: Direction { self == .ascending ? .descending : .ascending }
    }

    /// One ordering: a field and a direction.
    public struct Order: Sendable, Equatable {
        /// The ordered field (`__name__` for the document path).
        public var field: FieldPath
        /// The direction.
        public var direction: Direction

        /// Makes an ordering.
        public init(_ field: FieldPath, _ direction: Direction = .ascending) {
            self.field = field
            self.direction = direction
        }
    }

    /// A cursor: a position in the query's order, and whether the document at that position is included.
    public struct Cursor: Sendable, Equatable {
        /// How the position is given.
        public enum Position: Sendable, Equatable {
            /// Values for a prefix of the normalized order (`__name__` positions hold references).
            case values([Value])
            /// A document whose values for the whole normalized order make the position.
            case document(DocumentPath)
        }

        /// The position.
        public var position: Position
        /// For a start cursor, `startAt` (true) or `startAfter` (false); for an end cursor, `endAt` (true) or
        /// `endBefore` (false).
        public var inclusive: Bool

        /// Makes a cursor.
        public init(_ position: Position, inclusive: Bool) {
            self.position = position
            self.inclusive = inclusive
        }
    }

    /// Where the documents come from.
    public var source: Source
    /// The filter, or nil for every document of the source.
    public var filter: Filter?
    /// The explicit ordering, as asked; `normalizedOrder` adds the implicit fields.
    public var orderBy: [Order]
    /// `startAt` (inclusive) or `startAfter` (exclusive).
    public var start: Cursor?
    /// `endAt` (inclusive) or `endBefore` (exclusive).
    public var end: Cursor?
    /// At most this many documents, from the front.
    public var limit: Int?
    /// At most this many documents, from the back (results still in query order).
    public var limitToLast: Int?
    /// Documents skipped before the limit applies.
    public var offset: Int
    /// The fields returned, or nil for whole documents.
    public var select: [FieldPath]?

    /// Makes a query; call `validate()` before running one built in code.
    public init(source: Source, filter: Filter? = nil, orderBy: [Order] = [], start: Cursor? = nil,
                end: Cursor? = nil, limit: Int? = nil, limitToLast: Int? = nil, offset: Int = 0,
                select: [FieldPath]? = nil) {
        self.source = source
        self.filter = filter
        self.orderBy = orderBy
        self.start = start
        self.end = end
        self.limit = limit
        self.limitToLast = limitToLast
        self.offset = offset
        self.select = select
    }

    /// The fields with range or inequality filters (`< <= > >= != not-in`), anywhere in the filter tree,
    /// distinct and in field-path order.
    public var inequalityFields: [FieldPath] {
        var seen = Set<FieldPath>()
        var out: [FieldPath] = []
        for f in filter?.fieldFilters ?? [] where f.op.isInequality && seen.insert(f.field).inserted {
            out.append(f.field)
        }
        return out.sorted()
    }

    /// Firestore's full ordering: the explicit `orderBy`, then every inequality field not already ordered
    /// (in field-path order), then `__name__` unless already ordered; appended fields take the direction of
    /// the last explicit ordering (ascending when there is none).
    public var normalizedOrder: [Order] {
        var out = orderBy
        var ordered = Set(orderBy.map(\.field))
        let direction = orderBy.last?.direction ?? .ascending
        for field in inequalityFields where !field.isDocumentName && ordered.insert(field).inserted {
            out.append(Order(field, direction))
        }
        if !ordered.contains(.documentName) { out.append(Order(.documentName, direction)) }
        return out
    }

    /// True when a document at this path belongs to the query's source.
    public func contains(path: DocumentPath) -> Bool {
        switch source {
        case .collection(let c):
            return path.segments.count == c.segments.count + 1 && path.segments.starts(with: c.segments)
        case .collectionGroup(let id, let under):
            guard path.collectionID == id else { return false }
            guard let under else { return path.segments[0] != CollectionPath.namespacesRoot }
            return path.segments.count > under.segments.count && path.segments.starts(with: under.segments)
        }
    }
}

extension Query.Source {
    /// The collection a plain document id in a `__name__` value is relative to, for collection queries.
    var collection: CollectionPath? {
        if case .collection(let c) = self { return c }
        return nil
    }

    /// The number of segments of the parent document path (Firestore counts it in its component limit).
    var parentDepth: Int {
        switch self {
        case .collection(let c): return c.segments.count > 1 ? 1 : 0
        case .collectionGroup(_, let under): return under == nil ? 0 : 1
        }
    }
}

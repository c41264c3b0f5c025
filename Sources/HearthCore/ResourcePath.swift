#if canImport(Glibc)
import Glibc
#endif
/// Checks one collection or document id against Firestore's rules: 1 to 1,500 UTF-8 bytes, no `/`,
/// not `.` or `..`, not `__.*__`; and no NUL (U+0000): whatever handles a path as a C string (tools reading
/// the database file, logs, client libraries) would cut it there, so that two paths could read as one.
public func validateID(_ id: String, kind: String = "id") throws(HearthError) {
    let n = id.utf8.count
    if n == 0 { throw .invalidArgument("empty \(kind): paths may not have empty segments") }
    if n > Limits.maxIDBytes { throw .invalidArgument("\(kind) is \(n) bytes long; the limit is \(Limits.maxIDBytes)") }
    // One pass over the bytes for both: every request validates the ids of its path.
    var nul: Int?
    var slash = false
    let scanned: Void? = id.utf8.withContiguousStorageIfAvailable { bytes in
        for (offset, byte) in bytes.enumerated() {
            if byte == 0 { nul = offset; return }
            if byte == UInt8(ascii: "/") { slash = true }
        }
    }
    if scanned == nil {
        nul = id.utf8.firstIndex(of: 0).map { id.utf8.distance(from: id.utf8.startIndex, to: $0) }
        slash = id.utf8.contains(UInt8(ascii: "/"))
    }
    if let nul {
        // Quoting the id would put the NUL in the message; name where it is instead.
        throw .invalidArgument("\(kind) contains a NUL character (U+0000) at byte \(nul); ids may not contain NUL")
    }
    if slash { throw .invalidArgument("\(kind) '\(id)' contains '/'") }
    if n <= 2, id == "." || id == ".." { throw .invalidArgument("\(kind) may not be '\(id)'") }
    // The byte test only skips the character test for the ids that cannot start with "__".
    if n >= 4, id.utf8.starts(with: "__".utf8), id.hasPrefix("__"), id.hasSuffix("__") {
        throw .invalidArgument("\(kind) '\(id)' is reserved: ids matching __.*__ are not allowed")
    }
}

/// Splits a slash-separated path into validated segments. Percent-decodes each segment when asked (URL paths).
public func parsePathSegments(_ raw: String, percentDecoded: Bool = false) throws(HearthError) -> [String] {
    var text = Substring(raw)
    while text.hasPrefix("/") { text = text.dropFirst() }
    if text.isEmpty { throw .invalidArgument("empty path") }
    var segments: [String] = []
    for bytes in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
        let part = Substring(bytes)
        let segment: String
        if percentDecoded {
            guard let decoded = percentDecode(part) else {
                throw .invalidArgument("path segment '\(part)' is not valid percent-encoded UTF-8")
            }
            segment = decoded
        } else {
            segment = String(part)
        }
        try validateID(segment, kind: "path segment")
        segments.append(segment)
    }
    return segments
}

/// Decodes `%XX` escapes; nil on a bad escape or invalid UTF-8.
public func percentDecode(_ s: Substring) -> String? {
    if !s.utf8.contains(UInt8(ascii: "%")) { return String(s) }
    var out: [UInt8] = []
    out.reserveCapacity(s.utf8.count)
    var it = Array(s.utf8)[...]
    while let c = it.popFirst() {
        if c == UInt8(ascii: "%") {
            guard let h = it.popFirst(), let l = it.popFirst(), let hv = hexValue(h), let lv = hexValue(l) else { return nil }
            out.append(hv << 4 | lv)
        } else {
            out.append(c)
        }
    }
    return String(validating: out, as: UTF8.self)
}

@inline(__always)
func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case 48...57: return c - 48
    case 65...70: return c - 55
    case 97...102: return c - 87
    default: return nil
    }
}

extension CollectionPath {
    /// The reserved root collection that holds the documents of other databases than the default one, each
    /// below `__databases__/{database}` (Firestore's named databases, docs/firestore-compat.md): no path of the
    /// HTTP API names it, and a collection group over the whole database does not reach into it.
    public static let namespacesRoot = "__databases__"
}

/// The path of a document: an even, non-zero number of segments (`users/alice`, `a/b/c/d`).
public struct DocumentPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The path's segments, alternating collection and document ids.
    public let segments: [String]

    /// Makes a path from already-validated segments.
    public init(uncheckedSegments segments: [String]) { self.segments = segments }

    /// Parses and validates a document path.
    public init(_ raw: String, percentDecoded: Bool = false) throws(HearthError) {
        let segments = try parsePathSegments(raw, percentDecoded: percentDecoded)
        guard segments.count % 2 == 0 else {
            throw .invalidArgument("'\(raw)' is a collection path; a document path has an even number of segments")
        }
        self.segments = segments
    }

    /// The document's id (its last segment).
    public var id: String { segments[segments.count - 1] }
    /// The collection that holds the document.
    public var parent: CollectionPath { CollectionPath(uncheckedSegments: Array(segments.dropLast())) }
    /// The id of the collection that holds the document.
    public var collectionID: String { segments[segments.count - 2] }
    /// The path as text, `users/alice`.
    public var description: String { segments.joined(separator: "/") }
    /// The path of a subcollection of this document.
    public func collection(_ id: String) -> CollectionPath { CollectionPath(uncheckedSegments: segments + [id]) }

    /// Segment-by-segment order (Firestore's reference and `__name__` order). Returns -1, 0 or 1.
    public func compare(_ other: DocumentPath) -> Int {
        for (a, b) in zip(segments, other.segments) {
            let c = compareUTF8(a, b)
            if c != 0 { return c }
        }
        return segments.count == other.segments.count ? 0 : (segments.count < other.segments.count ? -1 : 1)
    }

    public static func < (a: DocumentPath, b: DocumentPath) -> Bool { a.compare(b) < 0 }

    /// Equal when every segment is the same UTF-8 bytes, as the store keys documents (see `sameUTF8`).
    public static func == (a: DocumentPath, b: DocumentPath) -> Bool { sameSegments(a.segments, b.segments) }

    public func hash(into hasher: inout Hasher) { hashSegments(segments, into: &hasher) }
}

/// Whether two paths' segments are the same UTF-8 bytes, one by one (see `sameUTF8`).
@inlinable
public func sameSegments(_ a: some Collection<String>, _ b: some Collection<String>) -> Bool {
    guard a.count == b.count else { return false }
    for (x, y) in zip(a, b) where !sameUTF8(x, y) { return false }
    return true
}

/// Hashes a path's segments by their UTF-8 bytes, agreeing with `sameSegments`.
func hashSegments(_ segments: [String], into hasher: inout Hasher) {
    hasher.combine(segments.count)
    for s in segments { hashUTF8(s, into: &hasher) }
}

/// The path of a collection: an odd number of segments (`users`, `users/alice/posts`).
public struct CollectionPath: Sendable, Hashable, CustomStringConvertible {
    /// The path's segments.
    public let segments: [String]

    /// Makes a path from already-validated segments.
    public init(uncheckedSegments segments: [String]) { self.segments = segments }

    /// Parses and validates a collection path.
    public init(_ raw: String, percentDecoded: Bool = false) throws(HearthError) {
        let segments = try parsePathSegments(raw, percentDecoded: percentDecoded)
        guard segments.count % 2 == 1 else {
            throw .invalidArgument("'\(raw)' is a document path; a collection path has an odd number of segments")
        }
        self.segments = segments
    }

    /// The collection's id (its last segment).
    public var id: String { segments[segments.count - 1] }
    /// The document that holds this collection, or nil at the root.
    public var parentDocument: DocumentPath? {
        segments.count > 1 ? DocumentPath(uncheckedSegments: Array(segments.dropLast())) : nil
    }
    /// The path as text, `users/alice/posts`.
    public var description: String { segments.joined(separator: "/") }
    /// The path of a document in this collection; the id is validated.
    public func document(_ id: String) throws(HearthError) -> DocumentPath {
        try validateID(id, kind: "document id")
        return DocumentPath(uncheckedSegments: segments + [id])
    }
}

extension CollectionPath {
    /// Equal when every segment is the same UTF-8 bytes (see `sameUTF8`).
    public static func == (a: CollectionPath, b: CollectionPath) -> Bool { sameSegments(a.segments, b.segments) }

    public func hash(into hasher: inout Hasher) { hashSegments(segments, into: &hasher) }
}

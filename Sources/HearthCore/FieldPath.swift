/// A path to a field inside a document: `a.b.c`, with backticks to quote segments holding dots or other
/// characters (`` `a.b`.c ``), as in Firestore.
public struct FieldPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The field names from the top of the document down.
    public let segments: [String]

    /// The document's name pseudo-field, `__name__`.
    public static let documentName = FieldPath(uncheckedSegments: ["__name__"])

    /// Makes a field path from already-validated segments.
    public init(uncheckedSegments segments: [String]) { self.segments = segments }

    /// Makes a field path from segments, validating each name.
    public init(segments: [String]) throws(HearthError) {
        guard !segments.isEmpty else { throw .invalidArgument("empty field path") }
        for s in segments where s.isEmpty { throw .invalidArgument("field path has an empty segment") }
        self.segments = segments
        try checkLength()
    }

    /// Parses a dotted field path; segments that are not simple identifiers are quoted with backticks,
    /// and a backtick or backslash inside backticks is escaped with a backslash.
    public init(parsing text: String) throws(HearthError) {
        var segments: [String] = []
        var current: [UInt8] = []
        var quoted = false
        var wasQuoted = false
        var bytes = Array(text.utf8)[...]
        while let c = bytes.popFirst() {
            if quoted {
                if c == UInt8(ascii: "\\") {
                    guard let next = bytes.popFirst() else { throw .invalidArgument("field path '\(text)' ends in an escape") }
                    current.append(next)
                } else if c == UInt8(ascii: "`") {
                    quoted = false
                } else {
                    current.append(c)
                }
                continue
            }
            switch c {
            case UInt8(ascii: "`"):
                guard current.isEmpty, !wasQuoted else {
                    throw .invalidArgument("field path '\(text)' has a backtick inside a segment")
                }
                quoted = true
                wasQuoted = true
            case UInt8(ascii: "."):
                guard !current.isEmpty || wasQuoted else { throw .invalidArgument("field path '\(text)' has an empty segment") }
                segments.append(String(decoding: current, as: UTF8.self))
                current = []
                wasQuoted = false
            default:
                guard !wasQuoted else { throw .invalidArgument("field path '\(text)' has characters after a closing backtick") }
                current.append(c)
            }
        }
        if quoted { throw .invalidArgument("field path '\(text)' has an unclosed backtick") }
        guard !current.isEmpty || wasQuoted else {
            throw .invalidArgument(text.isEmpty ? "empty field path" : "field path '\(text)' has an empty segment")
        }
        segments.append(String(decoding: current, as: UTF8.self))
        for s in segments where s.isEmpty { throw .invalidArgument("field path '\(text)' has an empty segment") }
        self.segments = segments
        try checkLength()
    }

    private func checkLength() throws(HearthError) {
        let bytes = segments.reduce(0) { $0 + $1.utf8.count } + segments.count - 1
        if bytes > Limits.maxFieldPathBytes {
            throw .invalidArgument("field path is \(bytes) bytes long; the limit is \(Limits.maxFieldPathBytes)")
        }
    }

    /// True for `__name__`.
    public var isDocumentName: Bool { segments.count == 1 && segments[0] == "__name__" }

    /// The canonical text: simple segments bare, others in backticks.
    public var description: String {
        // Most fields are one simple name: no array to join (every write indexes every field).
        if segments.count == 1, Self.isSimple(segments[0]) { return segments[0] }
        return segments.map { s -> String in
            if Self.isSimple(s) { return s }
            var out = "`"
            for ch in s {
                if ch == "`" || ch == "\\" { out.append("\\") }
                out.append(ch)
            }
            return out + "`"
        }.joined(separator: ".")
    }

    static func isSimple(_ s: String) -> Bool {
        guard let first = s.utf8.first, !(48...57).contains(first) else { return false }
        return s.utf8.allSatisfy { c in
            (65...90).contains(c) || (97...122).contains(c) || (48...57).contains(c) || c == UInt8(ascii: "_")
        }
    }

    /// True when `self` is `other` or lies below it.
    public func hasPrefix(_ other: FieldPath) -> Bool {
        other.segments.count <= segments.count && zip(other.segments, segments).allSatisfy { $0 == $1 }
    }

    /// The path one level down.
    public func appending(_ name: String) -> FieldPath { FieldPath(uncheckedSegments: segments + [name]) }

    public static func < (a: FieldPath, b: FieldPath) -> Bool {
        for (x, y) in zip(a.segments, b.segments) {
            let c = compareUTF8(x, y)
            if c != 0 { return c < 0 }
        }
        return a.segments.count < b.segments.count
    }
}

extension Dictionary where Key == String, Value == HearthCore.Value {
    /// The value at a field path, or nil when a segment is missing or not a map.
    public subscript(path path: FieldPath) -> HearthCore.Value? {
        var fields = self
        for (i, name) in path.segments.enumerated() {
            guard let v = fields[name] else { return nil }
            if i == path.segments.count - 1 { return v }
            guard case .map(let m) = v else { return nil }
            fields = m
        }
        return nil
    }

    /// Sets the value at a field path, creating (or replacing non-map values with) maps on the way.
    public mutating func set(_ value: HearthCore.Value, at path: FieldPath) {
        Self.set(&self, value, path.segments[...])
    }

    /// Removes the field at a path; a missing path is left alone.
    public mutating func remove(at path: FieldPath) {
        Self.remove(&self, path.segments[...])
    }

    private static func set(_ fields: inout [String: HearthCore.Value], _ value: HearthCore.Value, _ path: ArraySlice<String>) {
        let name = path.first!
        if path.count == 1 {
            fields[name] = value
            return
        }
        var child: [String: HearthCore.Value]
        if case .map(let m)? = fields[name] { child = m } else { child = [:] }
        fields[name] = nil  // keep the child uniquely referenced while it changes
        set(&child, value, path.dropFirst())
        fields[name] = .map(child)
    }

    private static func remove(_ fields: inout [String: HearthCore.Value], _ path: ArraySlice<String>) {
        let name = path.first!
        if path.count == 1 {
            fields[name] = nil
            return
        }
        guard case .map(var child)? = fields[name] else { return }
        fields[name] = nil
        remove(&child, path.dropFirst())
        fields[name] = .map(child)
    }
}

/// The name of a stored object: `/`-separated segments (`avatars/alice/me.jpg`), at most 1,024 UTF-8 bytes,
/// with no empty, `.` or `..` segment and no control character, so a name is never read as a directory walk
/// or split differently by two readers.
public struct FilePath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Most UTF-8 bytes in a name.
    public static let maxBytes = 1_024

    /// The name as given.
    public let name: String

    /// Checks a name; the error says what is wrong and where.
    public init(_ name: String) throws(HearthError) {
        let bytes = name.utf8
        guard !bytes.isEmpty else { throw .invalidArgument("file path is empty") }
        guard bytes.count <= Self.maxBytes else {
            throw .invalidArgument("file path is \(bytes.count) bytes; the limit is \(Self.maxBytes) (UTF-8)")
        }
        var offset = 0
        for scalar in name.unicodeScalars {
            let v = scalar.value
            if v < 0x20 || v == 0x7F || (0x80...0x9F).contains(v) {
                let code = String(v, radix: 16, uppercase: true)
                throw .invalidArgument("file path has a control character (U+\(String(repeating: "0", count: 4 - code.count) + code)) at byte \(offset)")
            }
            offset += String(scalar).utf8.count
        }
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        for (i, segment) in segments.enumerated() {
            let which = "segment \(i + 1) of '\(name.prefix(200))'"
            if segment.isEmpty {
                throw .invalidArgument("file path has an empty segment (\(which)): no leading, trailing or doubled '/'")
            }
            if segment == "." || segment == ".." {
                throw .invalidArgument("file path has a '\(segment)' segment (\(which))")
            }
        }
        self.name = name
    }

    /// The segments between the slashes.
    public var segments: [String] { name.split(separator: "/", omittingEmptySubsequences: false).map(String.init) }

    public var description: String { name }

    /// Cloud Storage's order: by UTF-8 bytes.
    public static func < (a: FilePath, b: FilePath) -> Bool { a.name.utf8.lexicographicallyPrecedes(b.name.utf8) }

    /// The smallest byte string greater than every string that starts with `bytes` (nil when every byte is
    /// 0xFF): where a prefix's range of names ends.
    public static func successor(of bytes: [UInt8]) -> [UInt8]? {
        var out = bytes
        while let last = out.last {
            if last < 0xFF {
                out[out.count - 1] = last + 1
                return out
            }
            out.removeLast()
        }
        return nil
    }
}

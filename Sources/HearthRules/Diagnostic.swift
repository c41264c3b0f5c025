/// A place in a rules source: 1-based line and column (columns count Unicode scalars).
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The 1-based line.
    public let line: Int
    /// The 1-based column, in Unicode scalars.
    public let column: Int
    /// The byte offset in the UTF-8 source.
    public let offset: Int

    /// Makes a location.
    public init(line: Int, column: Int, offset: Int) {
        self.line = line
        self.column = column
        self.offset = offset
    }

    public var description: String { "\(line):\(column)" }
}

/// One compile-time problem in a rules file: where, what, and the offending source line for the caret.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    /// The file the problem is in.
    public let fileName: String
    /// Where it is.
    public let location: SourceLocation
    /// What is wrong.
    public let message: String
    /// The source line holding the location, without its newline.
    public let sourceLine: String

    /// Makes a diagnostic.
    public init(fileName: String, location: SourceLocation, message: String, sourceLine: String) {
        self.fileName = fileName
        self.location = location
        self.message = message
        self.sourceLine = sourceLine
    }

    /// `file:line:column: error: message`, the source line, and a caret under the column.
    public var description: String {
        // Tabs stay tabs under the caret so that it lines up in any tab width.
        var caret = ""
        var col = 1
        for scalar in sourceLine.unicodeScalars {
            if col >= location.column { break }
            caret.append(scalar == "\t" ? "\t" : " ")
            col += 1
        }
        while col < location.column { caret.append(" "); col += 1 }
        return "\(fileName):\(location.line):\(location.column): error: \(message)\n\(sourceLine)\n\(caret)^"
    }
}

/// A rules file that did not compile: every diagnostic found, in source order.
public struct RulesCompileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problems, in source order.
    public let diagnostics: [Diagnostic]

    /// Makes an error from diagnostics.
    public init(diagnostics: [Diagnostic]) { self.diagnostics = diagnostics }

    /// Every diagnostic with its caret, separated by newlines.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// The text of a rules file with a line table, for locations and caret lines.
struct SourceText: Sendable {
    let fileName: String
    let bytes: [UInt8]
    /// Byte offsets where each line starts.
    let lineStarts: [Int]

    init(fileName: String, text: String) {
        self.fileName = fileName
        self.bytes = Array(text.utf8)
        var starts = [0]
        for (i, b) in bytes.enumerated() where b == UInt8(ascii: "\n") { starts.append(i + 1) }
        self.lineStarts = starts
    }

    /// The location of a byte offset.
    func location(at offset: Int) -> SourceLocation {
        let off = max(0, min(offset, bytes.count))
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= off { lo = mid } else { hi = mid - 1 }
        }
        var column = 1
        var i = lineStarts[lo]
        while i < off {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        // A continuation byte at the offset itself still belongs to the scalar counted above.
        if off < bytes.count, bytes[off] & 0xC0 == 0x80 { column -= 1 }
        return SourceLocation(line: lo + 1, column: max(1, column), offset: off)
    }

    /// The text of a 1-based line, without its newline.
    func line(_ number: Int) -> String {
        guard number >= 1, number <= lineStarts.count else { return "" }
        let start = lineStarts[number - 1]
        var end = number < lineStarts.count ? lineStarts[number] - 1 : bytes.count
        if end > start, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return String(decoding: bytes[start..<max(start, end)], as: UTF8.self)
    }

    /// The source between two byte offsets, as written.
    func text(from start: Int, to end: Int) -> String {
        let s = max(0, min(start, bytes.count)), e = max(s, min(end, bytes.count))
        return String(decoding: bytes[s..<e], as: UTF8.self)
    }

    func diagnostic(_ message: String, at offset: Int) -> Diagnostic {
        let loc = location(at: offset)
        return Diagnostic(fileName: fileName, location: loc, message: message, sourceLine: line(loc.line))
    }
}

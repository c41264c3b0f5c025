import HearthCore

/// The documents of a fixture file (`{"users": [...], "documents": {"path": {fields}, ...}}`, as `hearth
/// fixtures export` writes it), read one member of `documents` at a time so that a file of any size is never
/// held whole. Accounts are counted and left out: an import writes documents only.
final class FixtureStreamReader: ImportReader {
    let file: ImportFile
    private(set) var accounts = 0

    private enum State {
        case start
        /// In the top-level object, before a member (`first`: before the first).
        case top(first: Bool)
        /// In `documents`, before a document.
        case documents(first: Bool)
        case done
    }
    private var state: State

    /// A reader at the start of the file, or (`resuming`) at a point the progress record names, which is
    /// always just after a document of `documents`.
    init(_ file: ImportFile, resuming: Bool) {
        self.file = file
        state = resuming ? .documents(first: false) : .start
    }

    func next() throws(HearthError) -> ImportItem? {
        while true {
            switch state {
            case .start:
                try skipWhitespace()
                guard try file.peek() == UInt8(ascii: "{") else {
                    throw failure(file.line, #"a fixture file must hold a JSON object with "users" and "documents""#)
                }
                file.position += 1
                state = .top(first: true)
            case .top(let first):
                guard try beforeMember(first: first) else {
                    try skipWhitespace()
                    if try file.peek() != nil { throw failure(file.line, "unexpected text after the fixture's object") }
                    state = .done
                    continue
                }
                let line = file.line
                let key = try string()
                try colon()
                switch key {
                case "documents":
                    guard try file.peek() == UInt8(ascii: "{") else {
                        throw failure(line, "'documents' must map document paths to their fields")
                    }
                    file.position += 1
                    state = .documents(first: true)
                case "users":
                    accounts += try skipValue()
                    state = .top(first: false)
                default:
                    throw failure(line, "unknown key '\(key)' in the fixture file; expected documents, users")
                }
            case .documents(let first):
                guard try beforeMember(first: first) else {
                    state = .top(first: false)
                    continue
                }
                let line = file.line
                let path = try string()
                try colon()
                let data = try value()
                state = .documents(first: false)
                return ImportItem(write: try setWrite(path, data, line: line), line: line, end: file.offset, endLine: file.line)
            case .done:
                return nil
            }
        }
    }

    // MARK: scanning

    private func skipWhitespace() throws(HearthError) {
        while let b = try file.peek() {
            switch b {
            case 0x20, 0x09, 0x0D: file.position += 1
            case 0x0A: file.position += 1; file.line += 1
            default: return
            }
        }
    }

    /// Steps to the next member of an object: past `,` unless `first`; false (having stepped past it) at the
    /// object's end.
    private func beforeMember(first: Bool) throws(HearthError) -> Bool {
        try skipWhitespace()
        guard let b = try file.peek() else { throw failure(file.line, "the file ends inside the fixture's object") }
        if b == UInt8(ascii: "}") {
            file.position += 1
            return false
        }
        if !first {
            guard b == UInt8(ascii: ",") else { throw failure(file.line, "expected ',' or '}'") }
            file.position += 1
            try skipWhitespace()
        }
        return true
    }

    private func colon() throws(HearthError) {
        try skipWhitespace()
        guard try file.peek() == UInt8(ascii: ":") else { throw failure(file.line, "expected ':'") }
        file.position += 1
        try skipWhitespace()
    }

    /// A JSON string token, decoded.
    private func string() throws(HearthError) -> String {
        let line = file.line
        guard case .string(let s) = try value() else { throw failure(line, "expected a string") }
        return s
    }

    /// The next JSON value, parsed.
    private func value() throws(HearthError) -> JSON {
        let line = file.line
        file.mark = file.position
        defer { file.mark = nil }
        try scanValue()
        let bytes = file.buffer[file.mark!..<file.position]
        do { return try JSON.parse(bytes) } catch { throw failure(line, error.message) }
    }

    /// Steps over the next JSON value; answers how many elements it has when it is an array (else 0).
    private func skipValue() throws(HearthError) -> Int {
        try scanValue()
    }

    /// Steps over one JSON value (strings with their escapes, nested objects and arrays), counting lines and
    /// the elements of the outermost array. The parser checks the value's text afterwards.
    @discardableResult
    private func scanValue() throws(HearthError) -> Int {
        var depth = 0
        var elements = 0
        var outerIsArray = false
        var inString = false
        var escaped = false
        var started = false
        while let b = try file.peek() {
            if inString {
                file.position += 1
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return elements }
                }
                continue
            }
            switch b {
            case UInt8(ascii: "\""):
                inString = true
                if depth == 1 && outerIsArray && !started { elements += 1; started = true }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if depth == 0 { outerIsArray = b == UInt8(ascii: "[") } else if depth == 1 && outerIsArray && !started {
                    elements += 1; started = true
                }
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return elements }
                depth -= 1
                if depth == 0 { file.position += 1; return elements }
            case UInt8(ascii: ","):
                if depth == 0 { return elements }
                if depth == 1 { started = false }
            case 0x0A:
                file.line += 1
            case 0x20, 0x09, 0x0D:
                if depth == 0 { return elements }
            default:
                if depth == 1 && outerIsArray && !started { elements += 1; started = true }
            }
            file.position += 1
        }
        if depth > 0 || inString { throw failure(file.line, "the file ends inside a value") }
        return elements
    }
}

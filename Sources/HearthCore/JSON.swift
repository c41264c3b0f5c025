#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A parsed JSON text. Keeps integers and doubles apart (`3` vs `3.0`) and object keys in order,
/// which `Value`'s wire encoding needs and Foundation's parser does not give.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent.
    case int(Int64)
    /// A number written with a fraction or exponent.
    case double(Double)
    case string(String)
    case array([JSON])
    /// An object; keys are unique and kept in document order (equality ignores the order).
    case object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            // Objects are unordered: equal when they hold the same keys with equal values.
            guard x.count == y.count else { return false }
            let lookup = Dictionary(y, uniquingKeysWith: { first, _ in first })
            return x.allSatisfy { key, value in lookup[key].map { $0 == value } ?? false }
        default: return false
        }
    }

    /// The object's value for a key, or nil.
    public subscript(key: String) -> JSON? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    /// The JSON type's name, for error messages.
    public var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The string, or nil for other kinds.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// Parses UTF-8 JSON text; the whole input must be one value.
    public static func parse(_ bytes: some Collection<UInt8>) throws(HearthError) -> JSON {
        do {
            // Arrays and their slices are parsed in place; other collections are copied first.
            let parsed = try bytes.withContiguousStorageIfAvailable { buffer throws(JSONParser.Failure) in
                var parser = JSONParser(buffer)
                return try parser.parseDocument()
            }
            if let parsed { return parsed }
            return try Array(bytes).withUnsafeBufferPointer { buffer throws(JSONParser.Failure) in
                var parser = JSONParser(buffer)
                return try parser.parseDocument()
            }
        } catch let error as JSONParser.Failure {
            throw .invalidArgument("malformed JSON at byte \(error.offset): \(error.reason)")
        } catch {
            throw .invalidArgument("malformed JSON")  // the parser throws nothing else
        }
    }

    /// The members of a JSON object, each key with the byte range of its value, the values left unparsed
    /// (their structure is checked; `parse` checks the rest when one is read).
    public static func objectMembers(_ bytes: [UInt8]) throws(HearthError) -> [(key: String, value: Range<Int>)] {
        do {
            return try bytes.withUnsafeBufferPointer { buffer throws(JSONParser.Failure) in
                var parser = JSONParser(buffer)
                return try parser.objectMembers()
            }
        } catch {
            throw .invalidArgument("malformed JSON at byte \(error.offset): \(error.reason)")
        }
    }

    /// The byte range of the value under `key` in a JSON object (the first, if the key repeats), or nil when
    /// the object has no such key or the input is not an object. Steps over the other values unparsed.
    public static func objectMember(_ key: String, in bytes: [UInt8]) -> Range<Int>? {
        var key = key
        return key.withUTF8 { target in
            bytes.withUnsafeBufferPointer { buffer in
                var parser = JSONParser(buffer)
                return try? parser.objectMember(target)
            }
        } ?? nil
    }

    /// Parses JSON text.
    public static func parse(_ text: String) throws(HearthError) -> JSON {
        try parse(Array(text.utf8))
    }

    /// Serializes compactly; object keys keep their order.
    public func serialized() -> [UInt8] {
        var w = JSONWriter()
        w.write(self)
        return w.bytes
    }

    /// Serializes compactly, as a string.
    public var text: String { String(decoding: serialized(), as: UTF8.self) }
}

/// The keys of one object seen so far, to refuse duplicates: a look through the few keys most objects
/// have, and a set once there are many.
struct DistinctKeys {
    private var set: Set<String>?

    /// False when `key` is already among `earlier` (the object's keys so far, in order).
    mutating func insert(_ key: String, among earlier: some Collection<String>) -> Bool {
        if set == nil {
            if earlier.count < 16 { return !earlier.contains(key) }
            set = Set(earlier)
        }
        return set!.insert(key).inserted
    }
}

/// A byte-level JSON parser with a depth limit and exact UTF-8 validation.
struct JSONParser {
    struct Failure: Error {
        let offset: Int
        let reason: String
    }

    let b: UnsafeBufferPointer<UInt8>
    var i = 0
    var depth = 0

    init(_ buffer: UnsafeBufferPointer<UInt8>) { self.b = buffer }

    func fail(_ reason: String) -> Failure { Failure(offset: i, reason: reason) }

    mutating func parseDocument() throws(Failure) -> JSON {
        skipSpace()
        let value = try parseValue()
        skipSpace()
        guard i == b.count else { throw fail("unexpected data after the value") }
        return value
    }

    @inline(__always)
    mutating func skipSpace() {
        while i < b.count {
            let c = b[i]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 } else { return }
        }
    }

    mutating func parseValue() throws(Failure) -> JSON {
        guard i < b.count else { throw fail("unexpected end of input") }
        switch b[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character '\(printable(b[i]))'")
        }
    }

    func printable(_ c: UInt8) -> String {
        c >= 0x20 && c < 0x7F ? String(UnicodeScalar(c)) : "\\x" + String(c, radix: 16)
    }

    mutating func literal(_ word: StaticString) throws(Failure) {
        let n = word.utf8CodeUnitCount
        guard i + n <= b.count else { throw fail("unexpected end of input") }
        let p = word.utf8Start
        for k in 0..<n where b[i + k] != p[k] { throw fail("invalid literal") }
        i += n
    }

    mutating func enter() throws(Failure) {
        depth += 1
        if depth > Limits.maxJSONDepth { throw fail("nesting deeper than \(Limits.maxJSONDepth) levels") }
    }

    mutating func parseObject() throws(Failure) -> JSON {
        try enter()
        i += 1
        var pairs: [(String, JSON)] = []
        var keys = DistinctKeys()
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "}") {
            i += 1
            depth -= 1
            return .object(pairs)
        }
        while true {
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let keyStart = i
            let key = try parseString()
            guard keys.insert(key, among: pairs.lazy.map(\.0)) else {
                throw Failure(offset: keyStart, reason: "duplicate key \"\(key)\"")
            }
            try colon()
            pairs.append((key, try parseValue()))
            if try !another(before: UInt8(ascii: "}")) { break }
        }
        depth -= 1
        return .object(pairs)
    }

    /// The members of the object that is the whole input, as keys and value ranges.
    mutating func objectMembers() throws(Failure) -> [(key: String, value: Range<Int>)] {
        var members: [(key: String, value: Range<Int>)] = []
        var keys = DistinctKeys()
        let buffer = b
        try walkObject { quoted, value throws(Failure) in
            let key = try Self.key(quoted, in: buffer)
            guard keys.insert(key, among: members.lazy.map(\.key)) else {
                throw Failure(offset: quoted.lowerBound, reason: "duplicate key \"\(key)\"")
            }
            members.append((key, value))
            return true
        }
        skipSpace()
        guard i == b.count else { throw fail("unexpected data after the value") }
        return members
    }

    /// The value range under the key whose UTF-8 is `target`, in the object that starts the input.
    mutating func objectMember(_ target: UnsafeBufferPointer<UInt8>) throws(Failure) -> Range<Int>? {
        var found: Range<Int>?
        let buffer = b
        try walkObject { quoted, value throws(Failure) in
            // Keys without escapes are compared as they are, without making a string.
            let raw = UnsafeBufferPointer(rebasing: buffer[(quoted.lowerBound + 1)..<(quoted.upperBound - 1)])
            let matches = raw.contains(UInt8(ascii: "\\")) ? try Self.key(quoted, in: buffer).utf8.elementsEqual(target)
                : raw.elementsEqual(target)
            if matches { found = value }
            return !matches
        }
        return found
    }

    /// Walks the members of the object that starts the input, stepping over their values: `visit` gets each
    /// key's range (quotes included) and its value's range, and stops the walk by returning false.
    mutating func walkObject(_ visit: (_ key: Range<Int>, _ value: Range<Int>) throws(Failure) -> Bool) throws(Failure) {
        skipSpace()
        guard i < b.count, b[i] == UInt8(ascii: "{") else { throw fail("expected an object") }
        try enter()
        i += 1
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "}") {
            i += 1
            depth -= 1
            return
        }
        while true {
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let keyStart = i
            try skipString()
            let key = keyStart..<i
            try colon()
            let start = i
            try skipValue()
            guard try visit(key, start..<i) else { return }
            if try !another(before: UInt8(ascii: "}")) { break }
        }
        depth -= 1
    }

    /// The ':' after an object's key, with the space around it.
    mutating func colon() throws(Failure) {
        skipSpace()
        guard i < b.count, b[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
        i += 1
        skipSpace()
    }

    /// What follows a member of an object or an element of an array: true past a ',' (another comes), false
    /// past `close` (the end).
    mutating func another(before close: UInt8) throws(Failure) -> Bool {
        let container = close == UInt8(ascii: "}") ? "an object" : "an array"
        skipSpace()
        guard i < b.count else { throw fail("unexpected end of input in \(container)") }
        if b[i] == UInt8(ascii: ",") { i += 1; return true }
        if b[i] == close { i += 1; return false }
        throw fail(close == UInt8(ascii: "}") ? "expected ',' or '}'" : "expected ',' or ']'")
    }

    /// The text of the key whose quoted form spans `quoted` in `buffer`.
    static func key(_ quoted: Range<Int>, in buffer: UnsafeBufferPointer<UInt8>) throws(Failure) -> String {
        var parser = JSONParser(buffer)
        parser.i = quoted.lowerBound
        return try parser.parseString()
    }

    /// Steps over one value, checking its structure but not decoding it.
    mutating func skipValue() throws(Failure) {
        guard i < b.count else { throw fail("unexpected end of input") }
        switch b[i] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = b[i] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            let isObject = close == UInt8(ascii: "}")
            try enter()
            i += 1
            skipSpace()
            if i < b.count, b[i] == close {
                i += 1
                depth -= 1
                return
            }
            while true {
                skipSpace()
                if isObject {
                    guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                    try skipString()
                    try colon()
                }
                try skipValue()
                if try !another(before: close) { break }
            }
            depth -= 1
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
        default: throw fail("unexpected character '\(printable(b[i]))'")
        }
    }

    /// Steps over a string to just past its closing quote.
    mutating func skipString() throws(Failure) {
        i += 1
        let base = b.baseAddress!
        while i < b.count {
            // The next quote; it ends the string unless an odd number of backslashes escapes it.
            guard let found = memchr(base + i, Int32(UInt8(ascii: "\"")), b.count - i) else { break }
            var q = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            i = q + 1
            var backslashes = 0
            while q > 0, b[q - 1] == UInt8(ascii: "\\") {
                backslashes += 1
                q -= 1
            }
            if backslashes % 2 == 0 { return }
        }
        i = b.count
        throw fail("unterminated string")
    }

    mutating func parseArray() throws(Failure) -> JSON {
        try enter()
        i += 1
        var items: [JSON] = []
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "]") {
            i += 1
            depth -= 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try parseValue())
            if try !another(before: UInt8(ascii: "]")) { break }
        }
        depth -= 1
        return .array(items)
    }

    mutating func parseNumber() throws(Failure) -> JSON {
        let start = i
        if b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count, isDigit(b[i]) else { throw fail("invalid number") }
        if b[i] == UInt8(ascii: "0") {
            i += 1
            if i < b.count, isDigit(b[i]) { throw fail("numbers may not have leading zeros") }
        } else {
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        var isInteger = true
        if i < b.count, b[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            guard i < b.count, isDigit(b[i]) else { throw fail("expected a digit after '.'") }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count, isDigit(b[i]) else { throw fail("expected a digit in the exponent") }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        if isInteger && i - start <= 18 {
            // Up to 18 digits (and a sign) cannot overflow: no text to make.
            var k = start
            let negative = b[k] == UInt8(ascii: "-")
            if negative { k += 1 }
            var v: Int64 = 0
            while k < i {
                v = v * 10 + Int64(b[k] - 48)
                k += 1
            }
            return .int(negative ? -v : v)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
        if isInteger {
            guard let v = Int64(text) else {
                throw Failure(offset: start, reason: "integer \(text) is outside the 64-bit range")
            }
            return .int(v)
        }
        guard let d = Double(text), d.isFinite else {
            throw Failure(offset: start, reason: "number \(text) is outside the range of a double")
        }
        return .double(d)
    }

    @inline(__always) func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }

    mutating func parseString() throws(Failure) -> String {
        i += 1
        let start = i
        // Fast path: no escapes and ASCII or valid UTF-8.
        var hasEscape = false
        var hasHigh = false
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "\"") { break }
            if c == UInt8(ascii: "\\") { hasEscape = true; break }
            if c < 0x20 { throw fail("control character in a string") }
            if c >= 0x80 { hasHigh = true }
            i += 1
        }
        guard i < b.count else { throw fail("unterminated string") }
        if !hasEscape {
            let slice = UnsafeBufferPointer(rebasing: b[start..<i])
            i += 1
            if hasHigh {
                guard let s = String(validating: slice, as: UTF8.self) else {
                    throw Failure(offset: start, reason: "string is not valid UTF-8")
                }
                return s
            }
            return String(decoding: slice, as: UTF8.self)
        }
        var out = Array(UnsafeBufferPointer(rebasing: b[start..<i]))
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                guard let s = String(validating: out, as: UTF8.self) else {
                    throw Failure(offset: start, reason: "string is not valid UTF-8")
                }
                return s
            }
            if c < 0x20 { throw fail("control character in a string") }
            if c != UInt8(ascii: "\\") {
                out.append(c)
                i += 1
                continue
            }
            i += 1
            guard i < b.count else { throw fail("unterminated escape") }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 1 < b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
                        throw fail("unpaired surrogate in \\u escape")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate in \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("unpaired surrogate in \\u escape")
                }
                out.append(contentsOf: Array(String(UnicodeScalar(scalar)!).utf8))
            default:
                throw fail("invalid escape '\\\(printable(e))'")
            }
        }
        throw fail("unterminated string")
    }

    mutating func hex4() throws(Failure) -> UInt32 {
        guard i + 4 <= b.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for k in 0..<4 {
            guard let h = hexValue(b[i + k]) else { throw fail("invalid \\u escape") }
            v = v << 4 | UInt32(h)
        }
        i += 4
        return v
    }
}

/// Appends compact JSON to a byte buffer.
public struct JSONWriter {
    /// The bytes written so far.
    public var bytes: [UInt8] = []

    /// Makes an empty writer.
    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Writes a JSON value.
    public mutating func write(_ json: JSON) {
        switch json {
        case .null: raw("null")
        case .bool(let v): raw(v ? "true" : "false")
        case .int(let v): raw(String(v))
        case .double(let v): writeDouble(v)
        case .string(let s): string(s)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { bytes.append(UInt8(ascii: ",")) }
                write(item)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let pairs):
            bytes.append(UInt8(ascii: "{"))
            for (k, (key, value)) in pairs.enumerated() {
                if k > 0 { bytes.append(UInt8(ascii: ",")) }
                string(key)
                bytes.append(UInt8(ascii: ":"))
                write(value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Writes a finite double so that it reads back as a double (always a fraction or an exponent).
    public mutating func writeDouble(_ v: Double) {
        var text = v.description
        if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) { text += ".0" }
        raw(text)
    }

    /// Writes text as is.
    public mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// Writes bytes as is (already-encoded JSON).
    public mutating func raw(_ data: [UInt8]) { bytes.append(contentsOf: data) }

    /// Writes a quoted, escaped string.
    public mutating func string(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        escaped(s)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes a string's escaped contents, without quotes: in one copy when nothing needs escaping.
    public mutating func escaped(_ s: String) {
        let copied = s.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied == true { return }
        for c in s.utf8 {
            switch c {
            case 0x22: bytes.append(0x5C); bytes.append(0x22)
            case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
            case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 15)]])
            default: bytes.append(c)
            }
        }
    }

    /// Writes a timestamp's RFC 3339 text (`Timestamp.rfc3339`), without quotes.
    public mutating func rfc3339(_ t: Timestamp) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Timestamp.rfc3339Bytes) { buffer in
            let n = t.writeRFC3339(buffer)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<n]))
        }
    }
}

import HearthCore
import Hummingbird
import HummingbirdCore
import NIOCore

/// Starts a `{"documents": [...]` answer (listings and queries); the caller adds its other fields and `}`.
func writeDocumentsArray(_ documents: [StoredDocument], to w: inout JSONWriter) {
    w.raw("{\"documents\":[")
    for (i, doc) in documents.enumerated() {
        if i > 0 { w.raw(",") }
        doc.write(to: &w)
    }
    w.raw("]")
}

/// A JSON answer from already-encoded bytes, before it becomes the router's `Response` or is written
/// straight to a connection (`InlineAnswerHandler`).
struct JSONReply {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var bytes: [UInt8]

    init(_ bytes: [UInt8], status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) {
        self.bytes = bytes
        self.status = status
        headers = extra
        headers[.contentType] = "application/json"
    }

    /// `204 No Content`: no body, no headers of its own.
    static let noContent: JSONReply = {
        var reply = JSONReply([], status: .noContent)
        reply.headers = [:]
        return reply
    }()

    var response: Response {
        Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// Whether a `Content-Type` names JSON (`application/json`, any parameters, any case): what request bodies
/// must be.
func isJSONContentType(_ contentType: String) -> Bool {
    // Byte by byte: this runs on every request with a body, and Foundation's trimming bridges to NSString.
    let type = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }
    let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    guard let first = type.firstIndex(where: { !blank($0) }), let last = type.lastIndex(where: { !blank($0) }) else { return false }
    let expected = "application/json".utf8
    let trimmed = type[first...last]
    let lower: (UInt8) -> UInt8 = { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }
    return trimmed.count == expected.count && zip(trimmed, expected).allSatisfy { lower($0) == $1 }
}

/// A JSON response from already-encoded bytes.
func jsonResponse(_ bytes: [UInt8], status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response {
    JSONReply(bytes, status: status, headers: extra).response
}

/// A document as the document API answers it, with its update time as the ETag.
func documentReply(_ doc: StoredDocument, status: HTTPResponse.Status = .ok) -> JSONReply {
    var w = JSONWriter(capacity: doc.data.count + 200)
    doc.write(to: &w)
    var headers = HTTPFields()
    headers[.eTag] = "\"\(doc.updateTime.rfc3339)\""
    return JSONReply(w.bytes, status: status, headers: headers)
}

extension Request {
    /// Reads the body as JSON: refuses non-JSON content types (415) and bodies over 10 MiB (413, checked
    /// from `Content-Length` before reading and again while streaming). An empty body reads as `{}`.
    mutating func jsonBody(context: some RequestContext) async throws -> JSON {
        if let type = headers[.contentType], !isJSONContentType(type) {
            throw HearthError(.unsupportedMediaType, "Content-Type must be application/json, got '\(type.prefix(100))'")
        }
        if let length = headers[.contentLength].flatMap({ Int($0) }), length > Limits.maxRequestBody {
            throw HearthError.payloadTooLarge("request body of \(length) bytes is over the \(Limits.maxRequestBody)-byte (10 MiB) limit")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await collectBody(upTo: Limits.maxRequestBody)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw HearthError.payloadTooLarge("request body is over the \(Limits.maxRequestBody)-byte (10 MiB) limit")
        } catch is NIOTooManyBytesError {
            // A body without `Content-Length` (chunked) is refused while streaming, with NIO's error.
            throw HearthError.payloadTooLarge("request body is over the \(Limits.maxRequestBody)-byte (10 MiB) limit")
        }
        if buffer.readableBytes == 0 { return .object([]) }
        return try buffer.withUnsafeReadableBytes { raw throws(HearthError) in try JSON.parse(raw) }
    }

    /// The raw (still percent-encoded) path after a prefix, or nil when the path does not start with it.
    func rawPath(after prefix: String) -> Substring? {
        let path = uri.path
        guard path.hasPrefix(prefix) else { return nil }
        return path.dropFirst(prefix.count)
    }
}

/// Query-string parameters, checked against the names a route accepts.
struct QueryParameters {
    let values: [String: String]

    init(_ request: Request, allowed: Set<String>) throws(HearthError) {
        try self.init(request.uri, allowed: allowed)
    }

    init(_ uri: URI, allowed: Set<String>) throws(HearthError) {
        var values: [String: String] = [:]
        for (key, value) in uri.queryParameters {
            let name = String(key)
            guard allowed.contains(name) else {
                let expected = allowed.isEmpty ? "none" : allowed.sorted().joined(separator: ", ")
                throw .invalidArgument("unknown query parameter '\(name.prefix(64))' (expected: \(expected))")
            }
            guard values[name] == nil else { throw .invalidArgument("query parameter '\(name)' is given twice") }
            values[name] = String(value)
        }
        self.values = values
    }

    subscript(_ name: String) -> String? { values[name] }

    func bool(_ name: String) throws(HearthError) -> Bool {
        switch values[name] {
        case nil, "false": return false
        case "true": return true
        case let other?: throw .invalidArgument("query parameter '\(name)' must be true or false, got '\(other.prefix(64))'")
        }
    }

    func int(_ name: String, range: ClosedRange<Int>, default value: Int) throws(HearthError) -> Int {
        guard let text = values[name] else { return value }
        guard let n = Int(text), range.contains(n) else {
            throw .invalidArgument("query parameter '\(name)' must be an integer from \(range.lowerBound) to \(range.upperBound), got '\(text.prefix(64))'")
        }
        return n
    }
}

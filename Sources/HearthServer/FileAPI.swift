import Foundation
import HearthCore
import HearthEngine
import HearthImages
import Hummingbird
import HummingbirdCore
import HTTPTypes

/// The file API over HTTP (docs/api.md, Files): how a `/v1/files` request becomes a `FileOperation`, and how
/// its outcome is answered. Plain functions of the request's parts; `FileRoutes` streams the bytes.
struct FileAPI: Sendable {
    /// The largest object a put stores (`--max-file-size`).
    let maxFileSize: Int64

    static let listing = "/v1/files"
    static let objects = "/v1/files/"
    /// Custom metadata headers: `X-Hearth-Meta-<key>`.
    static let metadataPrefix = "x-hearth-meta-"
    static let sha256Header = HTTPField.Name("X-Hearth-SHA256")!

    /// The object named by the (percent-encoded) path after `/v1/files/`.
    static func path(_ uri: URI) throws(HearthError) -> FilePath {
        let raw = Substring(uri.path).dropFirst(objects.count)
        guard let name = percentDecode(raw) else {
            throw .invalidArgument("file path '\(raw.prefix(200))' is not valid percent-encoded UTF-8")
        }
        return try FilePath(name)
    }

    // MARK: Put

    /// A put of `bytes` as the request's headers describe it. `Content-Length` over the limit is refused
    /// here, before any of the body is read; a body that ends before its announced length fails the put.
    func upload(_ uri: URI, headers: HTTPFields, bytes: ByteChunks) throws(HearthError) -> FileUpload {
        let path = try Self.path(uri)
        _ = try QueryParameters(uri, allowed: [])
        var announced: Int64?
        if let text = headers[.contentLength] {
            guard let length = Int64(text), length >= 0 else { throw .invalidArgument("Content-Length is not a length") }
            guard length <= maxFileSize else {
                throw .payloadTooLarge("the body of \(length) bytes is over the \(maxFileSize)-byte limit of a file (--max-file-size)")
            }
            announced = length
        }
        var metadata: [String: String] = [:]
        for field in headers {
            let name = field.name.canonicalName
            guard name.hasPrefix(Self.metadataPrefix) else { continue }
            let key = String(name.dropFirst(Self.metadataPrefix.count))
            metadata[key] = metadata[key].map { $0 + ", " + field.value } ?? field.value
        }
        var sha256: [UInt8]?
        if let text = headers[Self.sha256Header] {
            guard let digest = Self.hexBytes(text), digest.count == 32 else {
                throw .invalidArgument("X-Hearth-SHA256 must be 64 hexadecimal digits, got '\(text.prefix(80))'")
            }
            sha256 = digest
        }
        let (ifMatch, ifNoneMatch) = try Self.preconditions(headers, noneMatchAllowed: true)
        return FileUpload(path: path, contentType: headers[.contentType], metadata: metadata,
                          bytes: announced.map { Self.exactly($0, bytes) } ?? bytes, maxSize: maxFileSize,
                          ifMatch: ifMatch, ifNoneMatch: ifNoneMatch, sha256: sha256)
    }

    /// The chunks, failing at their end unless exactly `length` bytes came: a body cut short (a client gone
    /// mid-upload) must not be stored as if whole.
    static func exactly(_ length: Int64, _ bytes: ByteChunks) -> ByteChunks {
        let counter = ByteCounter()
        let box = IteratorHolder(bytes)
        return ByteChunks(next: {
            guard let chunk = try await box.next() else {
                guard counter.count == length else {
                    throw HearthError.invalidArgument("the body ended after \(counter.count) of the \(length) bytes announced by Content-Length")
                }
                return nil
            }
            counter.count += Int64(chunk.count)
            return chunk
        })
    }

    /// `If-Match: "<etag>"` and `If-None-Match: *` (on a put only).
    static func preconditions(_ headers: HTTPFields, noneMatchAllowed: Bool) throws(HearthError) -> (String?, Bool) {
        var ifMatch: String?
        if let text = headers[.ifMatch] {
            var tag = Substring(text.trimmingCharacters(in: .whitespaces))
            if tag.hasPrefix("W/") { throw .invalidArgument("If-Match takes a strong ETag, not a weak one") }
            if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = tag.dropFirst().dropLast() }
            guard !tag.isEmpty, tag != "*", !tag.contains(",") else {
                throw .invalidArgument("If-Match must hold one file's ETag, e.g. \"1764150000000000-1\"")
            }
            ifMatch = String(tag)
        }
        var ifNoneMatch = false
        if let text = headers[.ifNoneMatch] {
            guard noneMatchAllowed, text.trimmingCharacters(in: .whitespaces) == "*" else {
                throw .invalidArgument(noneMatchAllowed ? "If-None-Match on a write supports only * (create only)"
                                       : "If-None-Match applies to a read or a put, not to this call")
            }
            ifNoneMatch = true
        }
        return (ifMatch, ifNoneMatch)
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[i]), let low = value(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }

    // MARK: Get

    /// What a `GET` or `HEAD` asks beside the object: its token, the metadata instead of the bytes, an
    /// attachment, a thumbnail instead of the bytes.
    struct Read: Sendable {
        var path: FilePath
        var token: String?
        var metadataOnly: Bool
        var download: Bool
        var thumb: ThumbnailSize?

        /// The operation that reads what was asked.
        var operation: FileOperation {
            thumb.map { .thumbnail(path, token: token, size: $0) } ?? .get(path, token: token)
        }
    }

    static func read(_ uri: URI) throws(HearthError) -> Read {
        let path = try path(uri)
        let params = try QueryParameters(uri, allowed: ["alt", "download", "token", "thumb"])
        let metadataOnly: Bool
        switch params["alt"] {
        case nil, "media": metadataOnly = false
        case "json": metadataOnly = true
        case let other?: throw .invalidArgument("query parameter 'alt' must be json or media, got '\(other.prefix(64))'")
        }
        let download: Bool
        switch params["download"] {
        case nil, "0", "false": download = false
        case "1", "true": download = true
        case let other?: throw .invalidArgument("query parameter 'download' must be 1, 0, true or false, got '\(other.prefix(64))'")
        }
        let thumb = try params["thumb"].map { text throws(HearthError) in try ThumbnailSize(parsing: text) }
        if thumb != nil, metadataOnly { throw .invalidArgument("query parameters 'thumb' and 'alt=json' cannot be combined") }
        return Read(path: path, token: params["token"], metadataOnly: metadataOnly, download: download, thumb: thumb)
    }

    // MARK: Patch, list

    /// `{"contentType"?, "metadata"?, "downloadToken": "rotate"?}` with `If-Match`.
    static func metadataChange(_ body: JSON, headers: HTTPFields) throws(HearthError) -> FileMetadataChange {
        guard case .object(let pairs) = body else { throw .invalidArgument("the body must be a JSON object") }
        var change = FileMetadataChange()
        for (key, value) in pairs {
            switch (key, value) {
            case ("contentType", .string(let type)):
                change.contentType = type
            case ("metadata", .object(let entries)):
                var metadata: [String: String] = [:]
                for (name, entry) in entries {
                    guard case .string(let text) = entry else {
                        throw .invalidArgument("metadata.\(name.prefix(64)) must be a string")
                    }
                    metadata[name] = text
                }
                change.metadata = metadata
            case ("metadata", .null):
                change.metadata = [:]
            case ("downloadToken", .string("rotate")):
                change.rotateDownloadToken = true
            case ("contentType", _): throw .invalidArgument("contentType must be a string")
            case ("metadata", _): throw .invalidArgument("metadata must be an object of strings (or null to clear it)")
            case ("downloadToken", _): throw .invalidArgument("downloadToken takes only \"rotate\"")
            default:
                throw .invalidArgument("unknown field '\(key.prefix(64))' (expected: contentType, metadata, downloadToken)")
            }
        }
        (change.ifMatch, _) = try preconditions(headers, noneMatchAllowed: false)
        return change
    }

    static func list(_ uri: URI) throws(HearthError) -> FileListRequest {
        let params = try QueryParameters(uri, allowed: ["prefix", "delimiter", "pageSize", "pageToken"])
        let size = try params.int("pageSize", range: 1...FileListRequest.maxPageSize, default: FileListRequest.maxPageSize)
        return FileListRequest(prefix: params["prefix"] ?? "", delimiter: params["delimiter"], pageSize: size,
                               pageToken: params["pageToken"])
    }

    // MARK: Answers

    /// An object's metadata as JSON; `downloadToken` only when it was just issued (only its hash is kept).
    static func metadataJSON(_ file: StoredFile, downloadToken: String? = nil) -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        file.write(to: &w, downloadToken: downloadToken)
        return w.bytes
    }

    static func listingJSON(_ listing: FileListing) -> [UInt8] {
        var w = JSONWriter(capacity: 400 * listing.files.count + 64)
        w.raw("{\"files\":[")
        for (i, file) in listing.files.enumerated() {
            if i > 0 { w.raw(",") }
            file.write(to: &w)
        }
        w.raw("],\"prefixes\":[")
        for (i, prefix) in listing.prefixes.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(prefix)
        }
        w.raw("]")
        if let token = listing.nextPageToken {
            w.raw(",\"nextPageToken\":")
            w.string(token)
        }
        w.raw("}")
        return w.bytes
    }

    /// The headers every answer about an object carries.
    static func objectHeaders(_ file: StoredFile) -> HTTPFields {
        var headers = HTTPFields()
        headers[.eTag] = "\"\(file.etag)\""
        headers[.lastModified] = HTTPDate.format(Int(file.updateTime.microseconds / 1_000_000))
        headers[.acceptRanges] = "bytes"
        headers[.cacheControl] = "private, max-age=0"
        // A browser takes the declared type as it is, never guessing a more dangerous one from the bytes.
        headers[.xContentTypeOptions] = "nosniff"
        return headers
    }

    /// `attachment`, with the last segment as the file name: RFC 6266's ASCII fallback and its UTF-8 form.
    static func contentDisposition(_ path: FilePath) -> String {
        let name = path.segments.last ?? "file"
        let fallback = String(name.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && scalar != "\"" && scalar != "\\" && scalar.value >= 0x20 ? Character(scalar) : "_"
        })
        var encoded = ""
        for byte in name.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if byte < 0x80, c.isLetter || c.isNumber || "!#$&+-.^_`|~".contains(c) {
                encoded.append(c)
            } else {
                encoded += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return "attachment; filename=\"\(fallback)\"; filename*=UTF-8''\(encoded)"
    }
}

/// How many bytes have passed, counted by the one task that reads the chunks.
private final class ByteCounter: @unchecked Sendable {
    var count: Int64 = 0
}

/// An iterator used by one task at a time, in turn.
private final class IteratorHolder: @unchecked Sendable {
    var iterator: ByteChunks.AsyncIterator

    init(_ chunks: ByteChunks) { iterator = chunks.makeAsyncIterator() }

    func next() async throws -> [UInt8]? { try await iterator.next() }
}

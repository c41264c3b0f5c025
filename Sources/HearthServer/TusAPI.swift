import Foundation
import HearthCore
import HearthEngine
import Hummingbird
import HTTPTypes

/// Resumable uploads over HTTP by the tus 1.0.0 protocol (docs/api.md, Resumable uploads): how tus's headers
/// become upload operations, and how their outcomes and refusals are answered. Plain functions of the
/// request's parts; `UploadRoutes` streams the bytes.
struct TusAPI: Sendable {
    /// The largest object (`--max-file-size`), announced as `Tus-Max-Size`.
    let maxFileSize: Int64
    /// How long an upload may take (`Upload-Expires`).
    let lifetime: Duration

    static let collection = "/v1/uploads"
    static let version = "1.0.0"
    static let extensions = "creation,creation-with-upload,termination,expiration,checksum"
    static let checksumAlgorithms = UploadChecksum.Algorithm.allCases.map(\.rawValue).joined(separator: ",")
    /// The content type of bytes sent to an upload.
    static let offsetOctetStream = "application/offset+octet-stream"

    static let tusResumable = HTTPField.Name("Tus-Resumable")!
    static let tusVersion = HTTPField.Name("Tus-Version")!
    static let tusExtension = HTTPField.Name("Tus-Extension")!
    static let tusMaxSize = HTTPField.Name("Tus-Max-Size")!
    static let tusChecksumAlgorithm = HTTPField.Name("Tus-Checksum-Algorithm")!
    static let uploadOffset = HTTPField.Name("Upload-Offset")!
    static let uploadLength = HTTPField.Name("Upload-Length")!
    static let uploadDeferLength = HTTPField.Name("Upload-Defer-Length")!
    static let uploadConcat = HTTPField.Name("Upload-Concat")!
    static let uploadMetadata = HTTPField.Name("Upload-Metadata")!
    static let uploadExpires = HTTPField.Name("Upload-Expires")!
    static let uploadChecksum = HTTPField.Name("Upload-Checksum")!

    /// The headers a browser's script must be allowed to read from tus answers: a CORS layer lists these in
    /// `Access-Control-Expose-Headers` for `/v1/uploads`.
    static let exposedHeaders = ["Location", "Tus-Resumable", "Tus-Version", "Tus-Extension", "Tus-Max-Size",
                                 "Tus-Checksum-Algorithm", "Upload-Offset", "Upload-Length", "Upload-Expires",
                                 "Upload-Metadata"]
    /// The request headers tus clients send: a CORS layer lists these in `Access-Control-Allow-Headers`.
    static let requestHeaders = ["Tus-Resumable", "Upload-Length", "Upload-Metadata", "Upload-Offset",
                                 "Upload-Checksum", "Upload-Defer-Length", "Upload-Concat", "Content-Type"]

    /// Metadata keys with a meaning of their own; every other key is custom metadata of the object.
    static let pathKey = "path"
    static let contentTypeKey = "contentType"

    // MARK: Requests

    /// Every request but `OPTIONS` names the protocol version it speaks.
    static func checkResumable(_ headers: HTTPFields) throws(TusRefusal) {
        guard let version = headers[tusResumable] else {
            throw TusRefusal(status: .preconditionFailed, error: .failedPrecondition(
                "Tus-Resumable is missing: a tus request names its protocol version (Tus-Resumable: \(version))"))
        }
        guard version.trimmingCharacters(in: .whitespaces) == Self.version else {
            throw TusRefusal(status: .preconditionFailed, error: .failedPrecondition(
                "Tus-Resumable '\(version.prefix(32))' is not a version this server speaks (Tus-Version: \(Self.version))"))
        }
    }

    /// A creation (`POST /v1/uploads`): `Upload-Length`, and `Upload-Metadata` with the object's path.
    func start(_ headers: HTTPFields) throws(HearthError) -> UploadStart {
        if headers[Self.uploadDeferLength] != nil {
            throw .invalidArgument("Upload-Defer-Length is not supported (the creation-defer-length extension is not served): send Upload-Length")
        }
        if headers[Self.uploadConcat] != nil {
            throw .invalidArgument("Upload-Concat is not supported (the concatenation extension is not served)")
        }
        guard let text = headers[Self.uploadLength] else {
            throw .invalidArgument("Upload-Length is missing: a creation announces the upload's size in bytes")
        }
        guard let length = Self.nonNegative(text) else {
            throw .invalidArgument("Upload-Length '\(text.prefix(32))' is not a non-negative integer")
        }
        guard length <= maxFileSize else {
            throw .payloadTooLarge("Upload-Length \(length) is over the \(maxFileSize)-byte limit of a file (Tus-Max-Size, --max-file-size)")
        }
        var metadata = try Self.metadata(headers[Self.uploadMetadata] ?? "")
        guard let name = metadata.removeValue(forKey: Self.pathKey) else {
            throw .invalidArgument("Upload-Metadata has no 'path': it names the object the upload becomes")
        }
        let contentType = metadata.removeValue(forKey: Self.contentTypeKey)
        return UploadStart(path: try FilePath(name), contentType: contentType, metadata: metadata, length: length,
                           maxSize: maxFileSize, lifetime: lifetime)
    }

    /// `Upload-Metadata`: comma-separated pairs of a key and its value in base64 (the value may be absent).
    static func metadata(_ text: String) throws(HearthError) -> [String: String] {
        var pairs: [String: String] = [:]
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true)
            if parts.isEmpty, text.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            guard (1...2).contains(parts.count), let key = parts.first,
                  key.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
                throw .invalidArgument("Upload-Metadata must be comma-separated 'key base64value' pairs, got '\(item.prefix(64))'")
            }
            var value = ""
            if parts.count == 2 {
                guard let bytes = Base64.decode(String(parts[1])), let decoded = String(validating: bytes, as: UTF8.self) else {
                    throw .invalidArgument("Upload-Metadata's value of '\(key.prefix(64))' is not base64 of UTF-8 text")
                }
                value = decoded
            }
            guard pairs.updateValue(value, forKey: String(key)) == nil else {
                throw .invalidArgument("Upload-Metadata names '\(key.prefix(64))' twice")
            }
        }
        return pairs
    }

    /// `Upload-Offset` of a `PATCH`.
    static func offset(_ headers: HTTPFields) throws(HearthError) -> Int64 {
        guard let text = headers[uploadOffset] else {
            throw .invalidArgument("Upload-Offset is missing: a PATCH names the offset its bytes go at")
        }
        guard let offset = nonNegative(text) else {
            throw .invalidArgument("Upload-Offset '\(text.prefix(32))' is not a non-negative integer")
        }
        return offset
    }

    /// `Upload-Checksum: <algorithm> <base64 digest>`.
    static func checksum(_ headers: HTTPFields) throws(HearthError) -> UploadChecksum? {
        guard let text = headers[uploadChecksum] else { return nil }
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else {
            throw .invalidArgument("Upload-Checksum must be '<algorithm> <base64 digest>', got '\(text.prefix(80))'")
        }
        guard let algorithm = UploadChecksum.Algorithm(rawValue: String(parts[0]).lowercased()) else {
            throw .invalidArgument("Upload-Checksum's algorithm '\(parts[0].prefix(32))' is not served (Tus-Checksum-Algorithm: \(checksumAlgorithms))")
        }
        let size = algorithm == .sha1 ? 20 : 32
        guard let digest = Base64.decode(String(parts[1])), digest.count == size else {
            throw .invalidArgument("Upload-Checksum's digest must be the base64 of \(size) bytes for \(algorithm.rawValue)")
        }
        return UploadChecksum(algorithm: algorithm, digest: digest)
    }

    /// A `PATCH`'s body must be `application/offset+octet-stream`.
    static func checkPatchType(_ headers: HTTPFields) throws(HearthError) {
        guard isOffsetOctetStream(headers) else {
            throw HearthError(.unsupportedMediaType,
                "a PATCH's Content-Type must be \(offsetOctetStream), got '\((headers[.contentType] ?? "none").prefix(80))'")
        }
    }

    static func isOffsetOctetStream(_ headers: HTTPFields) -> Bool {
        let type = headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        return type == offsetOctetStream
    }

    /// `Content-Length`, when given.
    static func contentLength(_ headers: HTTPFields) throws(HearthError) -> Int64? {
        guard let text = headers[.contentLength] else { return nil }
        guard let length = nonNegative(text) else { throw .invalidArgument("Content-Length is not a length") }
        return length
    }

    static func nonNegative(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int64(text) else { return nil }
        return value
    }

    // MARK: Answers

    /// What every tus answer carries.
    static func baseHeaders() -> HTTPFields {
        var headers = HTTPFields()
        headers[tusResumable] = version
        return headers
    }

    /// The answer to `OPTIONS`: what this server serves.
    func discoveryHeaders() -> HTTPFields {
        var headers = Self.baseHeaders()
        headers[Self.tusVersion] = Self.version
        headers[Self.tusExtension] = Self.extensions
        headers[Self.tusMaxSize] = String(maxFileSize)
        headers[Self.tusChecksumAlgorithm] = Self.checksumAlgorithms
        return headers
    }

    /// Where an upload stands: its offset, length, expiry and metadata; never cached.
    static func statusHeaders(_ upload: ResumableUpload, metadata withMetadata: Bool = false) -> HTTPFields {
        var headers = baseHeaders()
        headers[uploadOffset] = String(upload.offset)
        headers[uploadLength] = String(upload.length)
        headers[uploadExpires] = HTTPDate.format(Int(upload.expireTime / 1_000_000))
        headers[.cacheControl] = "no-store"
        if withMetadata {
            var pairs = [(pathKey, upload.path)]
            if let type = upload.contentType { pairs.append((contentTypeKey, type)) }
            pairs += upload.metadata.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            headers[uploadMetadata] = pairs.map { "\($0.0) \(Base64.encode(Array($0.1.utf8)))" }.joined(separator: ",")
        }
        return headers
    }

    /// The one error shape for a refusal, with tus's own statuses where tus gives one (410, 460, 412).
    static func reply(for error: any Error) -> JSONReply? {
        var reply: JSONReply
        switch error {
        case let refusal as TusRefusal:
            reply = errorReply(refusal.error)
            reply.status = refusal.status
            if refusal.status == .preconditionFailed { reply.headers[tusVersion] = version }
        case let refusal as UploadRefusal:
            switch refusal.kind {
            case .expired:
                reply = errorReply(.notFound(refusal.message))
                reply.status = .gone
            case .checksumMismatch:
                reply = errorReply(.invalidArgument(refusal.message))
                reply.status = checksumMismatch
            }
        case let error as HearthError:
            reply = errorReply(error)
        default:
            return nil
        }
        reply.headers[tusResumable] = version
        return reply
    }

    /// tus's status for bytes whose checksum differs from `Upload-Checksum`.
    static let checksumMismatch = HTTPResponse.Status(code: 460, reasonPhrase: "Checksum Mismatch")
}

/// A refusal with a status of tus's own (412 for a version this server does not speak).
struct TusRefusal: Error {
    var status: HTTPResponse.Status
    var error: HearthError
}

import Foundation
import HearthCore
import HTTPTypes

extension HearthClient {
    /// `PUT /v1/files/{path}` with the bytes and a declared content type (nil: none, which the server takes as
    /// `application/octet-stream`).
    public func putFile(_ path: String, _ bytes: [UInt8], contentType: String?, headers: [String: String] = [:],
                        as caller: Caller? = nil) async throws -> HTTPResult {
        try await request(.put, "/v1/files/" + path, body: bytes, contentType: contentType, headers: headers, as: caller)
    }
}

/// An upload an app's storage rules refuse: who tries it, where, how many bytes, of which declared type.
public struct RefusedUpload: Sendable {
    /// What the case shows, for failure messages.
    public var what: String
    /// The object's path.
    public var path: String
    /// The number of bytes sent.
    public var size: Int
    /// The declared content type (nil: none).
    public var contentType: String?
    /// Who uploads (nil: the client the check is given).
    public var caller: Caller?

    /// Makes a case.
    public init(_ what: String, _ path: String, size: Int, contentType: String?, as caller: Caller? = nil) {
        self.what = what
        self.path = path
        self.size = size
        self.contentType = contentType
        self.caller = caller
    }
}

extension Harness {
    /// Bytes of a file of the project (a fixture image, say), found as `projectFile` finds it.
    public static func projectBytes(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: projectFile(path)) else {
            throw ExpectationFailure("cannot read \(path)")
        }
        return Array(data)
    }

    /// Expects each upload to be refused by the rules (403 `permission-denied`, decided once the bytes are in)
    /// and to leave the object as it was: missing stays missing, a stored object keeps its version.
    public func expectUploadsRefused(_ uploads: [RefusedUpload], by client: HearthClient) async throws {
        let admin = self.client()
        do {
            for upload in uploads {
                let before = try await admin.get("/v1/files/\(upload.path)?alt=json")
                try expectDenied(try await client.putFile(upload.path, [UInt8](repeating: 0x5A, count: upload.size),
                                                          contentType: upload.contentType, as: upload.caller), upload.what)
                let after = try await admin.get("/v1/files/\(upload.path)?alt=json")
                guard after.status == before.status, after.json?["etag"] == before.json?["etag"] else {
                    throw ExpectationFailure("\(upload.what): a refused upload changed \(upload.path): "
                                             + "\(before.status) \(before.text) → \(after.status) \(after.text)")
                }
            }
        } catch {
            await admin.close()
            throw error
        }
        await admin.close()
    }

    /// Expects the owner to replace a stored object (`200`, a new etag, the new bytes read back by `reader`)
    /// and then to delete it (`204`; a read answers `404`). Answers the replacement's metadata.
    @discardableResult
    public func expectReplacedThenDeleted(_ path: String, with bytes: [UInt8], contentType: String,
                                          owner: HearthClient, reader: HearthClient) async throws -> HTTPResult {
        let before = try expectAllowed(try await owner.get("/v1/files/\(path)?alt=json"), "reading \(path)'s metadata")
        let replaced = try expectAllowed(try await owner.putFile(path, bytes, contentType: contentType), "replacing \(path)")
        guard replaced.status == 200, let etag = replaced.json?["etag"]?.stringValue, etag != before.json?["etag"]?.stringValue else {
            throw ExpectationFailure("replacing \(path): expected 200 with a new etag, got \(replaced.status) \(replaced.text)")
        }
        let read = try expectAllowed(try await reader.get("/v1/files/\(path)"), "reading \(path) after the replacement")
        guard read.body == bytes, read.header("ETag") == "\"\(etag)\"", read.header("Content-Type") == contentType else {
            throw ExpectationFailure("reading \(path) after the replacement: \(read.body.count) bytes, ETag \(read.header("ETag") ?? "none")")
        }
        let deleted = try await owner.delete("/v1/files/\(path)")
        guard deleted.status == 204 else { throw ExpectationFailure("deleting \(path): \(deleted.status) \(deleted.text)") }
        let gone = try await owner.get("/v1/files/\(path)")
        guard gone.status == 404 else { throw ExpectationFailure("\(path) after its deletion: \(gone.status) \(gone.text)") }
        return replaced
    }

    /// Expects the thumbnail an app's feed asks for (`?thumb=WxH`) to follow the object's rules as its bytes do:
    /// each of `readers` gets an image of `path`'s format that fits within `width`×`height` with the object's
    /// aspect ratio (one side at its bound, or the image's own size when it is smaller), and each of `strangers`
    /// is refused (403) as for the bytes. Answers the first reader's thumbnail.
    @discardableResult
    public func expectThumbnail(_ path: String, width: Int, height: Int, readers: [HearthClient],
                                strangers: [HearthClient], _ what: String) async throws -> HTTPResult {
        let admin = self.client()
        let original = try await admin.get("/v1/files/\(path)")
        await admin.close()
        guard original.status == 200, let source = TestImages.describe(original.body) else {
            throw ExpectationFailure("\(what): \(path) is not a stored image (\(original.status))")
        }
        // Never enlarged; otherwise the side that binds first is at its bound, the other in proportion (±1 for rounding).
        let scale = min(Double(width) / Double(source.width), Double(height) / Double(source.height), 1)
        let expected = (Double(source.width) * scale, Double(source.height) * scale)
        var first: HTTPResult?
        for reader in readers {
            let thumbnail = try expectAllowed(try await reader.get("/v1/files/\(path)?thumb=\(width)x\(height)"), "\(what): a reader")
            guard let image = TestImages.describe(thumbnail.body) else {
                throw ExpectationFailure("\(what): the thumbnail of \(path) is not an image (\(thumbnail.body.count) bytes)")
            }
            guard image.width <= width, image.height <= height, abs(Double(image.width) - expected.0) <= 1,
                  abs(Double(image.height) - expected.1) <= 1 else {
                throw ExpectationFailure("\(what): the \(width)x\(height) thumbnail of a \(source.width)x\(source.height) image "
                                         + "is \(image.width)x\(image.height)")
            }
            guard thumbnail.header("Content-Type") == original.header("Content-Type") else {
                throw ExpectationFailure("\(what): the thumbnail's type is \(thumbnail.header("Content-Type") ?? "none"), the "
                                         + "image's \(original.header("Content-Type") ?? "none")")
            }
            first = first ?? thumbnail
        }
        for stranger in strangers {
            try expectDenied(try await stranger.get("/v1/files/\(path)?thumb=\(width)x\(height)"), "\(what): someone the rules refuse")
        }
        guard let first else { throw ExpectationFailure("\(what): no reader") }
        return first
    }
}

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
}

import HearthCore
import HearthEngine
import HearthImages

/// Each file operation as a typed call, for tests that drive the engine without HTTP: every one is
/// `perform(.file(...))`.
extension Database {
    /// A put of `bytes` (in chunks of `chunkSize`).
    public func putFile(_ path: String, _ bytes: [UInt8], as identity: Identity, contentType: String? = nil,
                        metadata: [String: String] = [:], maxSize: Int64 = 1 << 30, ifMatch: String? = nil,
                        ifNoneMatch: Bool = false, sha256: [UInt8]? = nil, chunkSize: Int = 64 * 1_024) async throws -> FileWritten {
        let upload = FileUpload(path: try FilePath(path), contentType: contentType, metadata: metadata,
                                bytes: ByteChunks(bytes, chunkSize: chunkSize), maxSize: maxSize, ifMatch: ifMatch,
                                ifNoneMatch: ifNoneMatch, sha256: sha256)
        return try await putFile(upload, as: identity)
    }

    /// A put.
    public func putFile(_ upload: FileUpload, as identity: Identity) async throws -> FileWritten {
        guard case .written(let written) = try await performFile(.put(upload), as: identity) else { throw Self.unexpected }
        return written
    }

    /// A read: the metadata and the bytes of `range` (all when nil).
    public func readFile(_ path: String, as identity: Identity, token: String? = nil,
                         range: Range<Int64>? = nil) async throws -> (file: StoredFile, bytes: [UInt8]) {
        guard case .read(let read) = try await performFile(.get(try FilePath(path), token: token), as: identity) else {
            throw Self.unexpected
        }
        return (read.file, try await read.bytes(range).collect())
    }

    /// A thumbnail fitting `width`×`height`: its object's metadata, its format and its bytes.
    public func thumbnailFile(_ path: String, _ width: Int, _ height: Int, as identity: Identity,
                              token: String? = nil) async throws -> (file: StoredFile, format: ImageFormat, bytes: [UInt8]) {
        let size = try ThumbnailSize(width: width, height: height)
        guard case .read(let read) = try await performFile(.thumbnail(try FilePath(path), token: token, size: size), as: identity),
              let thumbnail = read.thumbnail else {
            throw Self.unexpected
        }
        return (read.file, thumbnail.format, try await read.bytes().collect())
    }

    /// A metadata change.
    public func updateFile(_ path: String, _ change: FileMetadataChange, as identity: Identity) async throws -> FileWritten {
        guard case .written(let written) = try await performFile(.update(try FilePath(path), change), as: identity) else {
            throw Self.unexpected
        }
        return written
    }

    /// A delete; whether the object existed.
    @discardableResult
    public func deleteFile(_ path: String, as identity: Identity, ifMatch: String? = nil) async throws -> Bool {
        guard case .deleted(let existed) = try await performFile(.delete(try FilePath(path), ifMatch: ifMatch), as: identity) else {
            throw Self.unexpected
        }
        return existed
    }

    /// One page of a listing.
    public func listFiles(prefix: String = "", delimiter: String? = nil, pageSize: Int = FileListRequest.maxPageSize,
                          pageToken: String? = nil, as identity: Identity) async throws -> FileListing {
        let request = FileListRequest(prefix: prefix, delimiter: delimiter, pageSize: pageSize, pageToken: pageToken)
        guard case .listed(let listing) = try await performFile(.list(request), as: identity) else { throw Self.unexpected }
        return listing
    }

    /// The start of a resumable upload.
    public func startUpload(_ path: String, length: Int64, as identity: Identity, contentType: String? = nil,
                            metadata: [String: String] = [:], maxSize: Int64 = 1 << 30,
                            lifetime: Duration = .seconds(3600)) async throws -> ResumableUpload {
        let start = UploadStart(path: try FilePath(path), contentType: contentType, metadata: metadata, length: length,
                                maxSize: maxSize, lifetime: lifetime)
        guard case .upload(let status) = try await performFile(.startUpload(start), as: identity) else { throw Self.unexpected }
        return status.upload
    }

    /// Bytes for a resumable upload at `offset`.
    public func appendUpload(_ id: String, at offset: Int64, _ bytes: ByteChunks, as identity: Identity,
                             checksum: UploadChecksum? = nil) async throws -> UploadStatus {
        let append = UploadAppend(id: id, offset: offset, bytes: bytes, checksum: checksum)
        guard case .upload(let status) = try await performFile(.appendUpload(append), as: identity) else { throw Self.unexpected }
        return status
    }

    /// Where a resumable upload stands.
    public func uploadStatus(_ id: String, as identity: Identity) async throws -> ResumableUpload {
        guard case .upload(let status) = try await performFile(.uploadStatus(id: id), as: identity) else { throw Self.unexpected }
        return status.upload
    }
}

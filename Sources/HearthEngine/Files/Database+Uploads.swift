import HearthCore
import HearthRules

/// Resumable uploads (tus, docs/api.md, Resumable uploads). An upload is a record and its bytes so far in
/// `UploadStorage`, never an object: the storage rules decide the object as declared when the upload starts,
/// so a refused one fails before any byte is sent, and the call that brings the last byte stores the object
/// by a put of the upload's bytes (`performFile(.put)`, the same operation as `PUT /v1/files`), which
/// decides the rules again with the real size.
extension Database {
    /// The file operations that run in the caller's task (a put, an upload's calls, a thumbnail); nil for the
    /// others.
    func performFileInTask(_ operation: FileOperation, as identity: Identity) async throws -> FileOutcome? {
        switch operation {
        case .put(let upload): return .written(try await put(upload, as: identity))
        case .startUpload(let start): return .upload(try await startUpload(start, as: identity))
        case .appendUpload(let append): return .upload(try await appendUpload(append, as: identity))
        case .uploadStatus(let id): return .upload(UploadStatus(upload: try await loadUpload(id, as: identity), written: nil))
        case .cancelUpload(let id):
            try await cancelUpload(id, as: identity)
            return .deleted(existed: true)
        case .thumbnail(let path, let token, let size):
            return .read(try await thumbnail(path, token: token, size: size, identity: identity))
        case .get, .update, .delete, .list: return nil
        }
    }

    private func startUpload(_ start: UploadStart, as identity: Identity) async throws -> UploadStatus {
        guard start.length >= 0 else { throw HearthError.invalidArgument("Upload-Length must be 0 or more") }
        guard start.length <= start.maxSize else {
            throw HearthError.payloadTooLarge(
                "the upload of \(start.length) bytes is over the \(start.maxSize)-byte limit of a file (--max-file-size)")
        }
        try Self.checkAttributes(contentType: start.contentType, metadata: start.metadata)
        if let program = try enforcedStorageProgram(for: identity) {
            // The object as declared; the put at the end decides again with the bytes that came.
            let now = Timestamp.now()
            let existing = try storage.pointRead { try $0.file(at: start.path) }
            let declared = StoredFile(
                path: start.path, generation: now.microseconds, metageneration: 1, size: start.length,
                contentType: start.contentType ?? FileUpload.defaultContentType, sha256: [], md5: [],
                createTime: now, updateTime: now, metadata: start.metadata, tokenHash: [])
            try authorizeFile(existing == nil ? .create : .update, name: start.path.name, resource: existing,
                              requestResource: declared, time: now, identity: identity, program: program,
                              lookup: StoreDocumentLookup(storage: storage))
        }
        let now = Timestamp.now().microseconds
        let upload = ResumableUpload(
            id: ResumableUpload.makeID(), path: start.path.name, contentType: start.contentType, metadata: start.metadata,
            length: start.length, offset: 0, creator: identity.uploadOwner, createTime: now,
            expireTime: now + start.lifetime.microseconds)
        let uploads = storage.uploads
        // Held while its files are made, so a sweep does not take them for leftovers.
        _ = uploads.claim(upload.id)
        defer { uploads.release(upload.id) }
        try await uploads.create(upload)
        return UploadStatus(upload: upload, written: nil)
    }

    private func appendUpload(_ append: UploadAppend, as identity: Identity) async throws -> UploadStatus {
        let uploads = storage.uploads
        guard uploads.claim(append.id) else {
            throw HearthError.aborted("upload \(append.id) is receiving another request's bytes; ask its offset (HEAD) and go on from there")
        }
        defer { uploads.release(append.id) }
        var upload = try await loadUpload(append.id, as: identity)
        guard append.offset == upload.offset else {
            throw HearthError.aborted("Upload-Offset is \(append.offset), but upload \(upload.id) is at \(upload.offset)")
        }
        if let announced = append.announcedLength, upload.offset + announced > upload.length {
            throw HearthError.payloadTooLarge(
                "\(announced) bytes at offset \(upload.offset) go past the upload's length of \(upload.length) (Upload-Length)")
        }
        if upload.offset < upload.length {
            upload = try await uploads.append(upload, append.bytes, checksum: append.checksum)
        } else {
            // Complete already (its put failed earlier): an empty request tries the put again.
            for try await chunk in append.bytes where !chunk.isEmpty {
                throw HearthError.payloadTooLarge("upload \(upload.id) has all its \(upload.length) bytes")
            }
        }
        guard upload.offset == upload.length else { return UploadStatus(upload: upload, written: nil) }
        return UploadStatus(upload: upload, written: try await finishUpload(upload, as: identity))
    }

    /// Stores the object by a put of the upload's bytes, then removes the upload. A put the rules or the
    /// object's attributes refuse ends the upload too (it could never succeed); after any other failure the
    /// upload stays, complete, for an empty `PATCH` to try again.
    private func finishUpload(_ upload: ResumableUpload, as identity: Identity) async throws -> FileWritten {
        let uploads = storage.uploads
        let handle = try uploads.open(upload.id)
        let bytes = handle.chunks(0..<upload.length, chunkSize: 1 << 20, offPool: true)
        let put = FileUpload(path: try FilePath(upload.path), contentType: upload.contentType, metadata: upload.metadata,
                             bytes: bytes, maxSize: upload.length)
        do {
            guard case .written(let written) = try await performFile(.put(put), as: identity) else {
                throw HearthError.internal("a put comes to a written file")
            }
            try await uploads.remove(upload.id)
            return written
        } catch let error as HearthError where [.permissionDenied, .invalidArgument].contains(error.code) {
            try? await uploads.remove(upload.id)
            throw error
        }
    }

    private func cancelUpload(_ id: String, as identity: Identity) async throws {
        let uploads = storage.uploads
        guard uploads.claim(id) else {
            throw HearthError.aborted("upload \(id) is receiving a request's bytes; cancel it once that request ends")
        }
        defer { uploads.release(id) }
        _ = try await loadUpload(id, as: identity, expiredToo: true)
        try await uploads.remove(id)
    }

    /// The upload, if the caller may continue it: 404 for an unknown one, 403 for another caller's, and the
    /// tus refusal `expired` past its expiry (a sweep removes it later).
    private func loadUpload(_ id: String, as identity: Identity, expiredToo: Bool = false) async throws -> ResumableUpload {
        guard ResumableUpload.isWellFormedID(id), let upload = try await storage.uploads.load(id) else {
            throw HearthError.notFound("No upload \(id.prefix(64)): it never existed, finished, was cancelled or expired.")
        }
        guard upload.creator == identity.uploadOwner else {
            throw HearthError.permissionDenied("upload \(id) belongs to another caller; only its creator may continue it")
        }
        if !expiredToo, upload.expired(at: .now()) {
            throw UploadRefusal(kind: .expired, message: "upload \(id) expired at \(Timestamp(microseconds: upload.expireTime))")
        }
        return upload
    }

    /// Removes expired uploads (and what a crash left half made); the server runs it periodically.
    public func sweepUploads() async throws -> Int {
        try await BlockingIO.run { [uploads = storage.uploads] in try uploads.sweep(now: .now()) }
    }
}

extension Duration {
    /// Whole microseconds.
    var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}

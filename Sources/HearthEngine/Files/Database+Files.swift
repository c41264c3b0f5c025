import HearthAuth
import HearthCore
import HearthRules
import Logging

/// The one implementation of every file operation (docs/layout.md, Stored objects). Bytes are received and
/// made durable under their SHA-256 before the writer's job that names them runs; the job decides the storage
/// rules with the stored object and the one written, checks preconditions, and commits the metadata row. Bytes
/// no row names any more are removed once the commit is durable.
extension Database {
    func performFile(_ operation: FileOperation, as identity: Identity, placement: Placement,
                     completion: @escaping @Sendable (Result<Outcome, any Error>) -> Void) {
        do {
            switch operation {
            case .put, .startUpload, .appendUpload, .uploadStatus, .cancelUpload:
                // A put reads its bytes as they arrive, in the caller's task, and an upload's calls work on
                // files: `perform(_:as:) async` runs them.
                throw HearthError.internal("a put or an upload call works in a task: perform it with the async perform(_:as:)")
            case .thumbnail:
                // Images are decoded on the thumbnailer's threads, awaited in the caller's task.
                throw HearthError.internal("a thumbnail is made asynchronously: perform it with the async perform(_:as:)")
            case .get(let path, let token):
                completion(.success(.file(.read(try readFile(path, token: token, identity: identity)))))
            case .update(let path, let change):
                let program = try enforcedStorageProgram(for: identity)
                try Self.checkAttributes(contentType: change.contentType, metadata: change.metadata ?? [:])
                let token = change.rotateDownloadToken ? Tokens.generate(.download) : nil
                storage.write({ context in
                    try self.updateFile(path, change, token: token, program: program, identity: identity, context: context)
                }) { completion($0.map { .file(.written($0)) }) }
            case .delete(let path, let ifMatch):
                let program = try enforcedStorageProgram(for: identity)
                storage.write({ context in
                    try self.deleteFile(path, ifMatch: ifMatch, program: program, identity: identity, context: context)
                }) { [self] result in
                    if case .success(let previous?) = result {
                        releaseBlob(previous.sha256)
                        functions.committedEvents()
                    }
                    completion(result.map { .file(.deleted(existed: $0 != nil)) })
                }
            case .list(let request):
                let program = try enforcedStorageProgram(for: identity)
                try Self.checkListing(request)
                let start = try request.pageToken.map(Self.decodeListToken)
                if let program {
                    try authorizeFile(.list, name: request.prefix, resource: nil, requestResource: nil, time: .now(),
                                      identity: identity, program: program, lookup: StoreDocumentLookup(storage: storage))
                }
                read(placement, { try Self.listFiles(request, start: start, reader: $0) }) {
                    completion($0.map { .file(.listed($0)) })
                }
            }
        } catch {
            completion(.failure(error))
        }
    }

    /// `perform(.file(...))` for callers that are tasks.
    public func performFile(_ operation: FileOperation, as identity: Identity) async throws -> FileOutcome {
        guard case .file(let outcome) = try await perform(.file(operation), as: identity) else {
            preconditionFailure("a file operation comes to a file outcome")
        }
        return outcome
    }

    // MARK: Put

    /// A put, in the caller's task: the bytes are read as the caller's stream yields them.
    func put(_ upload: FileUpload, as identity: Identity) async throws -> FileWritten {
        let program = try enforcedStorageProgram(for: identity)
        try Self.checkAttributes(contentType: upload.contentType, metadata: upload.metadata)
        let blobs = storage.blobs
        let token = Tokens.generate(.download)
        // The row's commit is queued by the thread that made the bytes durable, and its end completes the put.
        return try await blobs.store(upload.bytes, maxSize: upload.maxSize, expectedSHA256: upload.sha256) { [self] stored, done in
            storage.write({ context -> (StoredFile, StoredFile?) in
                let commitTime = context.nextCommitTime()
                let existing = try context.reader.file(at: upload.path)
                let file = StoredFile(
                    path: upload.path, generation: commitTime.microseconds, metageneration: 1, size: stored.size,
                    contentType: upload.contentType ?? FileUpload.defaultContentType, sha256: stored.sha256,
                    md5: stored.md5, createTime: commitTime, updateTime: commitTime, metadata: upload.metadata,
                    tokenHash: Tokens.hash(token).bytes)
                if let program {
                    try self.authorizeFile(existing == nil ? .create : .update, name: upload.path.name, resource: existing,
                                           requestResource: file, time: commitTime, identity: identity, program: program,
                                           lookup: BatchDocumentLookup(context: context, after: [:]))
                }
                try Self.checkPreconditions(upload.path, existing, ifMatch: upload.ifMatch, ifNoneMatch: upload.ifNoneMatch)
                try context.putFile(file)
                try self.queueFileEvents(before: existing, after: file, commitTime: commitTime, in: context)
                return (file, existing)
            }) { [self] result in
                blobs.unpin(stored.sha256)
                switch result {
                case .success(let (written, previous)):
                    functions.committedEvents()
                    if let previous, previous.sha256 != written.sha256 { releaseBlob(previous.sha256) }
                    done(.success(FileWritten(file: written, created: previous == nil, downloadToken: token)))
                case .failure(let error):
                    releaseBlob(stored.sha256)
                    done(.failure(error))
                }
            }
        }
    }

    // MARK: Get

    func readFile(_ path: FilePath, token: String?, identity: Identity) throws -> FileRead {
        // The bytes are opened after the metadata is read; a replacement or delete in between removes the
        // blob the metadata names, and the read starts again with the new metadata.
        var missing: StoredFile?
        for _ in 0..<3 {
            let file = try authorizedFile(path, token: token, identity: identity)
            if let missing, missing == file {
                logger.error("the bytes of file \(path) (\(missing.sha256Hex)) are missing from the data folder")
                throw HearthError.internal("the bytes of file \(path) are missing from the data folder")
            }
            storage.blobs.pin(file.sha256)
            defer { storage.blobs.unpin(file.sha256) }
            if let handle = try storage.blobs.open(file.sha256) { return FileRead(file: file, handle: handle) }
            missing = file
        }
        throw HearthError.aborted("file \(path) changed while it was read; retry")
    }

    /// An object's metadata, once its download token or the `get` rule allows the caller to read it.
    func authorizedFile(_ path: FilePath, token: String?, identity: Identity) throws -> StoredFile {
        let file = try storage.pointRead { try $0.file(at: path) }
        if !Self.tokenMatches(token, file) {
            let program = try enforcedStorageProgram(for: identity)
            if let program {
                try authorizeFile(.get, name: path.name, resource: file, requestResource: nil, time: .now(),
                                  identity: identity, program: program, lookup: StoreDocumentLookup(storage: storage))
            }
        }
        guard let file else { throw HearthError.notFound("No file at \(path).") }
        return file
    }

    /// Whether `token` is the object's download token.
    static func tokenMatches(_ token: String?, _ file: StoredFile?) -> Bool {
        guard let token, let file, Tokens.isWellFormed(token, .download) else { return false }
        return Tokens.hash(token).matches(TokenHash(bytes: file.tokenHash))
    }

    // MARK: Update and delete

    private func updateFile(_ path: FilePath, _ change: FileMetadataChange, token: String?, program: RulesProgram?,
                            identity: Identity, context: any DocumentWriter) throws -> FileWritten {
        let commitTime = context.nextCommitTime()
        let lookup = BatchDocumentLookup(context: context, after: [:])
        guard let existing = try context.reader.file(at: path) else {
            if let program {
                try authorizeFile(.update, name: path.name, resource: nil, requestResource: nil, time: commitTime,
                                  identity: identity, program: program, lookup: lookup)
            }
            throw HearthError.notFound("No file at \(path).")
        }
        var changed = existing
        if let contentType = change.contentType { changed.contentType = contentType }
        if let metadata = change.metadata { changed.metadata = metadata }
        if let token { changed.tokenHash = Tokens.hash(token).bytes }
        changed.metageneration += 1
        changed.updateTime = commitTime
        if let program {
            try authorizeFile(.update, name: path.name, resource: existing, requestResource: changed, time: commitTime,
                              identity: identity, program: program, lookup: lookup)
        }
        try Self.checkPreconditions(path, existing, ifMatch: change.ifMatch, ifNoneMatch: false)
        try context.putFile(changed)
        try queueFileEvents(before: existing, after: changed, commitTime: commitTime, in: context)
        return FileWritten(file: changed, created: false, downloadToken: token)
    }

    /// Deletes inside the writer's job; returns the object deleted, if there was one.
    private func deleteFile(_ path: FilePath, ifMatch: String?, program: RulesProgram?, identity: Identity,
                            context: any DocumentWriter) throws -> StoredFile? {
        let commitTime = context.nextCommitTime()
        let existing = try context.reader.file(at: path)
        if let program {
            try authorizeFile(.delete, name: path.name, resource: existing, requestResource: nil, time: commitTime,
                              identity: identity, program: program, lookup: BatchDocumentLookup(context: context, after: [:]))
        }
        try Self.checkPreconditions(path, existing, ifMatch: ifMatch, ifNoneMatch: false)
        guard let existing else { return nil }
        try context.deleteFile(path)
        try queueFileEvents(before: existing, after: nil, commitTime: commitTime, in: context)
        return existing
    }

    /// Removes a blob once no object names it and no upload holds it (a failure only leaves bytes for the
    /// next start's sweep).
    func releaseBlob(_ sha256: [UInt8]) {
        do {
            try storage.blobs.release(sha256) { hash in try storage.pointRead { try $0.fileBlobNamed(hash) } }
        } catch {
            logger.warning("could not remove unnamed bytes \(StoredFile.hex(sha256)): \(error)")
        }
    }

    // MARK: Checks

    /// Most bytes of custom metadata, keys and values together (Cloud Storage's limit).
    static let maxMetadataBytes = 8 * 1_024
    /// Longest content type.
    static let maxContentTypeBytes = 256

    static func checkAttributes(contentType: String?, metadata: [String: String]) throws(HearthError) {
        if let contentType {
            guard !contentType.isEmpty, contentType.utf8.count <= maxContentTypeBytes,
                  contentType.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) else {
                throw .invalidArgument("contentType must be 1 to \(maxContentTypeBytes) printable ASCII characters")
            }
        }
        var total = 0
        for (key, value) in metadata {
            guard !key.isEmpty else { throw .invalidArgument("a custom metadata key is empty") }
            guard (key + value).unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
                throw .invalidArgument("custom metadata '\(key.prefix(64))' holds a control character")
            }
            total += key.utf8.count + value.utf8.count
        }
        guard total <= maxMetadataBytes else {
            throw .invalidArgument("custom metadata is \(total) bytes; the limit is \(maxMetadataBytes)")
        }
    }

    /// Rules decide first; a caller they allow may learn that the precondition failed.
    static func checkPreconditions(_ path: FilePath, _ existing: StoredFile?, ifMatch: String?,
                                   ifNoneMatch: Bool) throws(HearthError) {
        if ifNoneMatch, existing != nil {
            throw .failedPrecondition("file \(path) exists (If-None-Match: *)")
        }
        if let ifMatch, existing?.etag != ifMatch {
            throw .failedPrecondition(existing == nil ? "file \(path) does not exist (If-Match)"
                                      : "file \(path) has etag \(existing!.etag), not \(ifMatch) (If-Match)")
        }
    }

    static func checkListing(_ request: FileListRequest) throws(HearthError) {
        guard (1...FileListRequest.maxPageSize).contains(request.pageSize) else {
            throw .invalidArgument("pageSize must be 1 to \(FileListRequest.maxPageSize), not \(request.pageSize)")
        }
        guard request.prefix.utf8.count <= FilePath.maxBytes else {
            throw .invalidArgument("prefix is \(request.prefix.utf8.count) bytes; the limit is \(FilePath.maxBytes)")
        }
        if request.prefix.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw .invalidArgument("prefix holds a control character")
        }
        if let delimiter = request.delimiter {
            guard delimiter.utf8.count <= 16, !delimiter.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw .invalidArgument("delimiter must be at most 16 bytes, with no control character")
            }
        }
    }

    // MARK: Listing

    /// One page: objects under the prefix in name order, with names that hold the delimiter after the
    /// prefix rolled up into their common prefix, which skips past every name under it. Each entry, object or
    /// prefix, counts toward the page size.
    static func listFiles(_ request: FileListRequest, start: ListStart?, reader: any DocumentReader) throws -> FileListing {
        let prefix = Array(request.prefix.utf8)
        let delimiter = Array((request.delimiter ?? "").utf8)
        var files: [StoredFile] = []
        var prefixes: [String] = []
        var cursor = start
        var last: ListStart?
        while true {
            let room = request.pageSize - files.count - prefixes.count
            let batch = try reader.files(prefix: request.prefix, from: cursor?.key, inclusive: cursor?.inclusive ?? false,
                                         limit: room + 1)
            if batch.isEmpty { return FileListing(files: files, prefixes: prefixes, nextPageToken: nil) }
            var rolledUp = false
            for file in batch {
                if files.count + prefixes.count == request.pageSize {
                    return FileListing(files: files, prefixes: prefixes, nextPageToken: last.map(encodeListToken))
                }
                let name = Array(file.path.name.utf8)
                if !delimiter.isEmpty, let at = firstRange(of: delimiter, in: name, from: prefix.count) {
                    let common = Array(name[..<at])
                    prefixes.append(String(decoding: common, as: UTF8.self))
                    // Every name under the common prefix sorts before its successor.
                    guard let next = FilePath.successor(of: common) else {
                        return FileListing(files: files, prefixes: prefixes, nextPageToken: nil)
                    }
                    last = ListStart(key: next, inclusive: true)
                    cursor = last
                    rolledUp = true
                    break
                }
                files.append(file)
                last = ListStart(key: name, inclusive: false)
                cursor = last
            }
            if !rolledUp && batch.count < room + 1 {
                return FileListing(files: files, prefixes: prefixes, nextPageToken: nil)
            }
        }
    }


    /// The end of the first `needle` in `haystack` at or after `from` (the index just past it).
    static func firstRange(of needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard haystack.count >= needle.count, from <= haystack.count - needle.count else { return nil }
        for i in from...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) {
            return i + needle.count
        }
        return nil
    }

    /// Where a listing page starts: after a name, or from a key (the successor of a common prefix).
    struct ListStart: Sendable {
        var key: [UInt8]
        var inclusive: Bool
    }

    static func encodeListToken(_ start: ListStart) -> String {
        Base64.encode([start.inclusive ? 1 : 0] + start.key)
    }

    static func decodeListToken(_ token: String) throws(HearthError) -> ListStart {
        guard let bytes = Base64.decode(token), let flag = bytes.first, flag <= 1 else {
            throw .invalidArgument("pageToken '\(token.prefix(64))' is not a token this server issued")
        }
        return ListStart(key: Array(bytes.dropFirst()), inclusive: flag == 1)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import HearthAuth
import HearthCore
import Synchronization

/// Blobs as files under a folder (the data folder's `files/`): `tmp/` holds uploads being received, and
/// `blobs/ab/abcdef…` each stored blob, named by the lowercase hex of its SHA-256 (the first two digits a
/// folder of their own, so no folder holds millions of names). A received file is renamed into place, then
/// it and its folder are synced before `store` returns, so a blob a row names is whole on disk. What is derived
/// from a blob (thumbnails) lives in `thumbs/ab/abcdef…/<name>`, and goes with the blob.
final class DiskBlobStorage: BlobStorage, @unchecked Sendable {
    let directory: String
    var temporaryDirectory: String { directory + "/tmp" }
    var blobDirectory: String { directory + "/blobs" }
    var derivedDirectory: String { directory + "/thumbs" }

    /// Pins by SHA-256; `lock` also makes "check the pins, then remove" and "pin, then look for the blob"
    /// exclusive, so a blob is never removed under a `store` that found it.
    private var pins: [[UInt8]: Int] = [:]
    /// Blobs named by a `store` whose syncs have not yet returned; `lock` is signalled as each leaves.
    private var syncing: Set<[UInt8]> = []
    private let lock = NSCondition()
    /// Temporary files are named by this storage's random prefix and a count, so naming one costs no call
    /// of the CSPRNG; the prefix keeps them apart from any other process's.
    private let temporaryPrefix = makeAutoID()
    private let temporaryCount = Atomic<Int>(0)

    init(directory: String) { self.directory = directory }

    /// A new name in `tmp/`, ending in `suffix`.
    private func temporaryPath(_ suffix: String) -> String {
        let n = temporaryCount.add(1, ordering: .relaxed).newValue
        return "\(temporaryDirectory)/\(temporaryPrefix)-\(n).\(suffix)"
    }

    func blobPath(_ sha256: [UInt8]) -> String {
        let hex = StoredFile.hex(sha256)
        return "\(blobDirectory)/\(hex.prefix(2))/\(hex)"
    }

    /// Bytes gathered from the stream before they are written, so the pool is not hopped to for every small chunk.
    static let writeSize = 1 << 20
    /// A chunk smaller than this is joined to the next before it is written. Well under a socket read's 64 KiB,
    /// so the first chunk of a body (a read less the request's head) is written as it came, not copied again.
    static let joinedSize = 16 << 10

    func derivedFolder(_ sha256: [UInt8]) -> String {
        let hex = StoredFile.hex(sha256)
        return "\(derivedDirectory)/\(hex.prefix(2))/\(hex)"
    }

    func store<T: Sendable>(_ chunks: ByteChunks, maxSize: Int64, expectedSHA256: [UInt8]?,
                            then next: @escaping @Sendable (StoredBlob, @escaping @Sendable (Result<T, any Error>) -> Void) -> Void)
        async throws -> T {
        let file = TemporaryFile(path: temporaryPath("part"))
        var digests = BlobDigests()
        var size: Int64 = 0
        // The chunks as they came, written in turn, so their bytes are not copied again into one buffer; a
        // small chunk is joined to the one before, so a trickling client cannot make a batch of many tiny arrays.
        var pending: [[UInt8]] = []
        var pendingCount = 0
        let stored: StoredBlob
        do {
            for try await chunk in chunks {
                size += Int64(chunk.count)
                guard size <= maxSize else {
                    throw HearthError.payloadTooLarge("the file is larger than the limit of \(maxSize) bytes")
                }
                digests.update(chunk)
                if let last = pending.last, last.count < Self.joinedSize {
                    pending[pending.count - 1] += chunk
                } else {
                    pending.append(chunk)
                }
                pendingCount += chunk.count
                if pendingCount >= Self.writeSize {
                    try await BlockingIO.run { [self, batch = pending] in try append(batch, to: file) }
                    pending.removeAll(keepingCapacity: true)
                    pendingCount = 0
                }
            }
            let (sha256, md5) = digests.finalize()
            stored = StoredBlob(sha256: sha256, md5: md5, size: size)
            if let expectedSHA256, expectedSHA256 != stored.sha256 {
                throw HearthError.invalidArgument(
                    "the bytes' SHA-256 is \(StoredFile.hex(stored.sha256)), not the \(StoredFile.hex(expectedSHA256)) announced")
            }
        } catch {
            try? await BlockingIO.run { Self.discard(file) }
            throw error
        }
        // One hop for the rest (all of an object smaller than a batch), the name and the syncs, on the threads
        // kept for syncs; `next` starts from there (a put's commit is queued without a hop back to this task).
        return try await withCheckedThrowingContinuation { continuation in
            BlockingIO.onSyncThread { [self, rest = pending] active in
                do {
                    guard active else { throw CancellationError() }
                    try append(rest, to: file)
                    try place(file, stored.sha256)
                } catch {
                    Self.discard(file)
                    continuation.resume(throwing: error)
                    return
                }
                next(stored) { continuation.resume(with: $0) }
            }
        }
    }

    /// Closes and removes an upload's temporary file (a name `place` moved is gone already).
    private static func discard(_ file: TemporaryFile) {
        if file.fd >= 0 { close(file.fd) }
        unlink(file.path)
    }

    /// Appends the chunks to the upload's temporary file, created by the first write (so a small object's
    /// whole life on the pool is one hop).
    private func append(_ chunks: [[UInt8]], to file: TemporaryFile) throws {
        if file.fd < 0 { file.fd = try createTemporary(file.path) }
        for chunk in chunks where !chunk.isEmpty { try Self.writeAll(file.fd, chunk, file.path) }
    }

    /// Names the written file by its SHA-256 (or drops it when those bytes are stored already), pins the blob,
    /// then syncs the blob and its folder. Named before it is synced, so one round of syncs makes bytes and
    /// name durable: a crash in between leaves a named blob that may be torn, which no row names and the next
    /// start's sweep removes before anything is served. A put that finds the name while another syncs it waits
    /// for that sync (one that fails takes the name away, so no row names bytes whose sync failed), then
    /// syncs it too.
    private func place(_ file: TemporaryFile, _ sha256: [UInt8]) throws {
        let target = blobPath(sha256)
        let folder = (target as NSString).deletingLastPathComponent
        lock.lock()
        while syncing.contains(sha256) { lock.wait() }
        pins[sha256, default: 0] += 1
        let stored = access(target, F_OK) == 0
        do {
            if !stored {
                guard try inFolder(folder, { rename(file.path, target) }) == 0 else {
                    throw HearthError.internal("cannot move an upload into \(target): \(Self.errnoText())")
                }
                syncing.insert(sha256)
            }
        } catch {
            unpinLocked(sha256)
            lock.unlock()
            throw error
        }
        lock.unlock()
        let fd = file.fd
        file.fd = -1
        defer { close(fd) }
        if stored { unlink(file.path) }
        // Synced outside the lock (the pin keeps the blob), so concurrent puts' syncs overlap.
        var failure: (any Error)?
        do {
            if stored { try Self.sync(path: target) } else { try Self.sync(fd, target) }
            try Self.sync(path: folder)
        } catch {
            failure = error
        }
        lock.lock()
        defer { lock.unlock() }
        if !stored {
            if failure != nil { unlink(target) }
            syncing.remove(sha256)
            lock.broadcast()
        }
        if let failure {
            unpinLocked(sha256)
            throw failure
        }
    }

    func pin(_ sha256: [UInt8]) {
        lock.lock()
        pins[sha256, default: 0] += 1
        lock.unlock()
    }

    func unpin(_ sha256: [UInt8]) {
        lock.lock()
        unpinLocked(sha256)
        lock.unlock()
    }

    private func unpinLocked(_ sha256: [UInt8]) {
        if let n = pins[sha256] { pins[sha256] = n > 1 ? n - 1 : nil }
    }

    func open(_ sha256: [UInt8]) throws -> (any BlobHandle)? {
        try openFile(blobPath(sha256))
    }

    private func openFile(_ path: String) throws -> (any BlobHandle)? {
        let fd = systemOpen(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw HearthError.internal("cannot open \(path): \(Self.errnoText())")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw HearthError.internal("cannot read the size of \(path): \(Self.errnoText())")
        }
        return DiskBlobHandle(fd: fd, size: Int64(info.st_size))
    }

    func release(_ sha256: [UInt8], isNamed: ([UInt8]) throws -> Bool) throws {
        lock.lock()
        defer { lock.unlock() }
        guard pins[sha256] == nil, try !isNamed(sha256) else { return }
        unlink(blobPath(sha256))
        removeDerived(derivedFolder(sha256))
    }

    func openDerived(from sha256: [UInt8], name: String) throws -> (any BlobHandle)? {
        try openFile("\(derivedFolder(sha256))/\(name)")
    }

    func keepDerived(from sha256: [UInt8], name: String, bytes: [UInt8]) throws -> Bool {
        let temporary = temporaryPath("derived")
        let fd = try createTemporary(temporary)
        do {
            defer { close(fd) }
            try Self.writeAll(fd, bytes, temporary)
            try Self.sync(fd, temporary)
        } catch {
            unlink(temporary)
            throw error
        }
        // Under the lock, so a `release` cannot remove the blob between the check and the rename, leaving
        // derived bytes of a blob no longer stored.
        lock.lock()
        defer { lock.unlock() }
        let folder = derivedFolder(sha256)
        do {
            guard access(blobPath(sha256), F_OK) == 0 else {
                unlink(temporary)
                return false
            }
            guard try inFolder(folder, { rename(temporary, "\(folder)/\(name)") }) == 0 else {
                throw HearthError.internal("cannot move a thumbnail into \(folder): \(Self.errnoText())")
            }
            try Self.sync(path: folder)
            return true
        } catch {
            unlink(temporary)
            throw error
        }
    }

    private func removeDerived(_ folder: String) {
        try? FileManager.default.removeItem(atPath: folder)
    }

    func sweep(isNamed: ([UInt8]) throws -> Bool) throws -> BlobSweep {
        var swept = BlobSweep(temporaryFiles: 0, blobs: 0)
        let files = FileManager.default
        for name in (try? files.contentsOfDirectory(atPath: temporaryDirectory)) ?? [] {
            if unlink("\(temporaryDirectory)/\(name)") == 0 { swept.temporaryFiles += 1 }
        }
        for folder in (try? files.contentsOfDirectory(atPath: blobDirectory)) ?? [] {
            for name in (try? files.contentsOfDirectory(atPath: "\(blobDirectory)/\(folder)")) ?? [] {
                // A name that is no SHA-256 is no blob of ours: left alone.
                guard name.utf8.count == 64, let hash = TokenHash(hex: name)?.bytes else { continue }
                lock.lock()
                defer { lock.unlock() }
                if pins[hash] == nil, try !isNamed(hash), unlink("\(blobDirectory)/\(folder)/\(name)") == 0 {
                    swept.blobs += 1
                    removeDerived(derivedFolder(hash))
                }
            }
        }
        // Derived bytes whose blob is gone: a crash between a blob's removal and theirs.
        for folder in (try? files.contentsOfDirectory(atPath: derivedDirectory)) ?? [] {
            for name in (try? files.contentsOfDirectory(atPath: "\(derivedDirectory)/\(folder)")) ?? [] {
                guard name.utf8.count == 64, let hash = TokenHash(hex: name)?.bytes else { continue }
                lock.lock()
                defer { lock.unlock() }
                if access(blobPath(hash), F_OK) != 0 {
                    removeDerived(derivedFolder(hash))
                    swept.derived += 1
                }
            }
        }
        return swept
    }

    // MARK: Files

    /// Creates the new temporary file `path` for writing.
    private func createTemporary(_ path: String) throws -> Int32 {
        let fd = try inFolder(temporaryDirectory) { systemOpen(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { throw HearthError.internal("cannot create \(path): \(Self.errnoText())") }
        return fd
    }

    /// Runs `call`, a system call that makes a name in `folder` (answering -1 on failure), and once more after
    /// making the folder when it was missing: a folder is made the first time a name goes in it, not looked
    /// for before each.
    private func inFolder(_ folder: String, _ call: () -> Int32) throws -> Int32 {
        let result = call()
        guard result < 0, errno == ENOENT else { return result }
        try makeDirectory(folder)
        return call()
    }

    private func makeDirectory(_ path: String) throws {
        if access(path, F_OK) == 0 { return }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        // The new folder's name must be durable too before a blob in it is named.
        try Self.sync(path: (path as NSString).deletingLastPathComponent)
    }

    /// Syncs the open file `fd` (at `path`, named in the error).
    static func sync(_ fd: Int32, _ path: String) throws {
        guard fsync(fd) == 0 else { throw HearthError.internal("cannot sync \(path): \(errnoText())") }
    }

    /// Syncs the file or folder at `path`.
    static func sync(path: String) throws {
        let fd = systemOpen(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HearthError.internal("cannot open \(path): \(errnoText())") }
        defer { close(fd) }
        try sync(fd, path)
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], _ path: String) throws {
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = write(fd, buffer.baseAddress! + done, buffer.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw HearthError.internal("cannot write \(path): \(errnoText())")
                }
                done += n
            }
        }
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// An upload's temporary file, open from its first write until it is placed; used by one task at a time, in turn.
private final class TemporaryFile: @unchecked Sendable {
    let path: String
    var fd: Int32 = -1

    init(path: String) { self.path = path }
}

/// An open blob file.
final class DiskBlobHandle: BlobHandle, @unchecked Sendable {
    let fd: Int32
    let size: Int64
    var descriptor: Int32? { fd }

    init(fd: Int32, size: Int64) {
        self.fd = fd
        self.size = size
    }

    deinit { close(fd) }

    func read(offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw HearthError.internal("cannot read stored bytes: \(DiskBlobStorage.errnoText())")
            }
            if n == 0 { break }
            done += n
        }
        return done
    }
}

/// `open(2)`, named apart from `DiskBlobStorage.open`.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, flags, mode)
    #else
    return Darwin.open(path, flags, mode)
    #endif
}

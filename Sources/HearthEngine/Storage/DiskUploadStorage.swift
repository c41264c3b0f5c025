#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation
import HearthCore

/// Uploads in progress as files under a folder (the data folder's `files/uploads/`): `<id>.part` holds the
/// bytes so far and `<id>.json` the record, replaced whole (written to `<id>.json.tmp`, synced, renamed, the
/// folder synced) after the bytes it counts are synced. A crash mid-request leaves bytes past the recorded
/// offset; the next append cuts them off before it writes, so only synced, counted bytes ever make the object.
final class DiskUploadStorage: UploadStorage, @unchecked Sendable {
    let directory: String
    /// Bytes gathered from the request before each write, so the pool is not hopped to for every small chunk.
    static let writeSize = 1 << 20

    private var busy: Set<String> = []
    private let lock = NSLock()

    init(directory: String) { self.directory = directory }

    func recordPath(_ id: String) -> String { "\(directory)/\(id).json" }
    func bytesPath(_ id: String) -> String { "\(directory)/\(id).part" }

    func create(_ upload: ResumableUpload) async throws {
        try await BlockingIO.run { [self] in
            try makeDirectory()
            let path = bytesPath(upload.id)
            let fd = openFile(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw HearthError.internal("cannot create \(path): \(DiskBlobStorage.errnoText())") }
            close(fd)
            // The folder's sync after the record's rename makes both names durable.
            try writeRecord(upload)
        }
    }

    func load(_ id: String) async throws -> ResumableUpload? {
        try await BlockingIO.run { [self] in try readRecord(id) }
    }

    func append(_ upload: ResumableUpload, _ bytes: ByteChunks, checksum: UploadChecksum?) async throws -> ResumableUpload {
        let path = bytesPath(upload.id)
        let fd = try await BlockingIO.run {
            let fd = openFile(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw HearthError.internal("cannot open \(path): \(DiskBlobStorage.errnoText())") }
            // Bytes a crash left past the recorded offset were never counted: they go.
            guard ftruncate(fd, off_t(upload.offset)) == 0 else {
                close(fd)
                throw HearthError.internal("cannot truncate \(path): \(DiskBlobStorage.errnoText())")
            }
            return fd
        }
        var hasher = checksum.map { ChecksumHasher($0.algorithm) }
        var position = upload.offset
        var pending: [UInt8] = []
        var failure: (any Error)?
        do {
            var iterator = bytes.makeAsyncIterator()
            while true {
                let chunk: [UInt8]?
                do { chunk = try await iterator.next() } catch {
                    failure = error
                    break
                }
                guard let chunk else { break }
                guard position + Int64(pending.count + chunk.count) <= upload.length else {
                    throw HearthError.payloadTooLarge(
                        "the bytes go past the upload's length of \(upload.length) (Upload-Length); none of this request's bytes was kept")
                }
                hasher?.update(chunk)
                pending += chunk
                if pending.count >= Self.writeSize {
                    try await Self.write(fd, pending, at: position, path)
                    position += Int64(pending.count)
                    pending.removeAll(keepingCapacity: true)
                }
            }
            if failure != nil, checksum != nil {
                // Bytes that cannot be checked are not kept.
                throw failure!
            }
            if !pending.isEmpty {
                try await Self.write(fd, pending, at: position, path)
                position += Int64(pending.count)
            }
            if let checksum, let digest = hasher?.finalize(), digest != checksum.digest {
                throw UploadRefusal(kind: .checksumMismatch, message:
                    "the request's bytes have \(checksum.algorithm.rawValue) \(Base64.encode(digest)), not the \(Base64.encode(checksum.digest)) of Upload-Checksum; none of them was kept")
            }
            try await BlockingIO.run {
                try DiskBlobStorage.sync(fd, path)
            }
        } catch {
            try? await BlockingIO.run {
                _ = ftruncate(fd, off_t(upload.offset))
                close(fd)
            }
            throw error
        }
        var advanced = upload
        advanced.offset = position
        try await BlockingIO.run { [self, next = advanced] in
            close(fd)
            if next.offset != upload.offset { try writeRecord(next) }
        }
        if let failure { throw failure }
        return advanced
    }

    func open(_ id: String) throws -> any BlobHandle {
        let path = bytesPath(id)
        let fd = openFile(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HearthError.internal("cannot open \(path): \(DiskBlobStorage.errnoText())") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw HearthError.internal("cannot read the size of \(path): \(DiskBlobStorage.errnoText())")
        }
        return DiskBlobHandle(fd: fd, size: Int64(info.st_size))
    }

    func remove(_ id: String) async throws {
        try await BlockingIO.run { [self] in try removeFiles(id) }
    }

    func claim(_ id: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return busy.insert(id).inserted
    }

    func release(_ id: String) {
        lock.lock()
        busy.remove(id)
        lock.unlock()
    }

    func sweep(now: Timestamp) throws -> Int {
        var removed = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            guard let dot = name.firstIndex(of: "."), ResumableUpload.isWellFormedID(name[..<dot]) else { continue }
            let id = String(name[..<dot])
            guard claim(id) else { continue }
            defer { release(id) }
            if name.hasSuffix(".json.tmp") {
                unlink("\(directory)/\(name)")
                continue
            }
            guard name.hasSuffix(".json") else {
                // Bytes whose record was removed (or never written): nothing can continue them.
                if name.hasSuffix(".part"), access(recordPath(id), F_OK) != 0 { unlink("\(directory)/\(name)") }
                continue
            }
            let record = try? readRecord(id)
            if record?.expired(at: now) ?? true {
                try removeFiles(id)
                removed += 1
            }
        }
        return removed
    }

    // MARK: Files

    private func makeDirectory() throws {
        if access(directory, F_OK) == 0 { return }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try DiskBlobStorage.sync(path: (directory as NSString).deletingLastPathComponent)
    }

    private func readRecord(_ id: String) throws -> ResumableUpload? {
        guard ResumableUpload.isWellFormedID(id) else { return nil }
        let path = recordPath(id)
        guard let data = FileManager.default.contents(atPath: path) else {
            if access(path, F_OK) != 0 { return nil }
            throw HearthError.internal("cannot read \(path)")
        }
        do {
            return try JSONDecoder().decode(ResumableUpload.self, from: data)
        } catch {
            throw HearthError.internal("the upload record \(path) is unreadable: \(error)")
        }
    }

    private func writeRecord(_ upload: ResumableUpload) throws {
        let path = recordPath(upload.id)
        let temporary = path + ".tmp"
        let bytes = Array(try JSONEncoder().encode(upload))
        let fd = openFile(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw HearthError.internal("cannot create \(temporary): \(DiskBlobStorage.errnoText())") }
        do {
            try DiskBlobStorage.writeAll(fd, bytes, temporary)
            try DiskBlobStorage.sync(fd, temporary)
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            throw HearthError.internal("cannot rename \(temporary): \(DiskBlobStorage.errnoText())")
        }
        try DiskBlobStorage.sync(path: directory)
    }

    private func removeFiles(_ id: String) throws {
        // The record first: bytes without a record are what a sweep removes.
        unlink(recordPath(id))
        unlink(bytesPath(id))
        try DiskBlobStorage.sync(path: directory)
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int64, _ path: String) async throws {
        try await BlockingIO.run {
            try bytes.withUnsafeBytes { buffer in
                var done = 0
                while done < buffer.count {
                    let n = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw HearthError.internal("cannot write \(path): \(DiskBlobStorage.errnoText())")
                    }
                    done += n
                }
            }
        }
    }
}

/// The running digest of one request's bytes.
private enum ChecksumHasher {
    case sha1(Insecure.SHA1)
    case sha256(SHA256)

    init(_ algorithm: UploadChecksum.Algorithm) {
        switch algorithm {
        case .sha1: self = .sha1(Insecure.SHA1())
        case .sha256: self = .sha256(SHA256())
        }
    }

    mutating func update(_ bytes: [UInt8]) {
        switch self {
        case .sha1(var h): h.update(data: bytes); self = .sha1(h)
        case .sha256(var h): h.update(data: bytes); self = .sha256(h)
        }
    }

    func finalize() -> [UInt8] {
        switch self {
        case .sha1(let h): return Array(h.finalize())
        case .sha256(let h): return Array(h.finalize())
        }
    }
}

/// `open(2)`, named apart from `DiskUploadStorage.open`.
private func openFile(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, flags, mode)
    #else
    return Darwin.open(path, flags, mode)
    #endif
}

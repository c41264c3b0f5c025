import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One owner per data folder: the server, or `hearth import` (`Store.Configuration.locksDataFolder`). Two
/// servers on one folder would each take their writer for the only one (commit times, WAL restarts) and
/// contend for SQLite's write lock, and an import's long transactions would hold a server's writes back. So
/// an owner takes an exclusive `flock` on `hearth.lock` in the folder for as long as it is open, and a second
/// one fails to open, naming the holder. Tools that write a few documents (`hearth fixtures`, `hearth users`)
/// take no lock and run beside a server. The kernel drops the lock when the holder exits however it exits,
/// so a `kill -9` leaves nothing to clean up.
final class DataFolderLock: @unchecked Sendable {
    static let fileName = "hearth.lock"
    private let mutex = NSLock()
    private var descriptor: Int32

    /// Takes the lock for `owner` (what a second process's message calls the holder: `hearth serve`).
    init(directory: String, owner: String) throws {
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DataFolderLockError.cannotOpen(path: path, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let (holder, holderName) = Self.holder(fd)
            close(fd)
            if code == EWOULDBLOCK { throw DataFolderInUse(directory: directory, holder: holder, holderName: holderName) }
            throw DataFolderLockError.cannotLock(path: path, errno: code)
        }
        // For the message a second process gives; the lock, not this record, decides.
        let pid = Array("\(getpid()) \(owner)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        descriptor = fd
    }

    /// The process id and owner name the holder wrote, as far as they are readable.
    private static func holder(_ fd: Int32) -> (Int32?, String?) {
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return (nil, nil) }
        let text = String(decoding: buffer[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = text.split(separator: " ", maxSplits: 1)
        let name = parts.count > 1 ? String(parts[1]) : nil
        return (parts.first.flatMap { Int32($0) }, name)
    }

    /// Lets another process open the folder. Idempotent.
    func release() {
        mutex.withLock {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }
}

/// Another process owns the data folder (see `DataFolderLock`).
public struct DataFolderInUse: Error, CustomStringConvertible {
    public let directory: String
    /// The holder's process id, as it recorded it.
    public let holder: Int32?
    /// What the holder is (`hearth serve`, `hearth import`), as it recorded it.
    public let holderName: String?

    public var description: String {
        let who = holder.map { "another process (pid \($0))" } ?? "another process"
        let what = holderName.map { ", \($0)," } ?? ""
        return "the data folder \(directory) is in use by \(who)\(what); serve or import into a data folder from one "
            + "process at a time (tools such as `hearth fixtures load` and `hearth users` may run beside a server)"
    }
}

enum DataFolderLockError: Error, CustomStringConvertible {
    case cannotOpen(path: String, errno: Int32)
    case cannotLock(path: String, errno: Int32)

    var description: String {
        switch self {
        case .cannotOpen(let path, let code): "cannot open \(path): \(String(cString: strerror(code)))"
        case .cannotLock(let path, let code): "cannot lock \(path): \(String(cString: strerror(code)))"
        }
    }
}

import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A store that holds index rows in memory (`Store.Configuration.defersIndexWrites`) owns its data folder:
/// two such processes on one folder would each clear the mark `index_state.pending_from` while the other
/// still holds rows, and a crash of the other would then leave documents that queries never find. So such a
/// store takes an exclusive `flock` on `hearth.lock` in the folder for as long as it is open, and a second
/// one fails to open, naming the holder. Tools that write index rows directly (`hearth fixtures`, `hearth
/// users`) take no lock and run beside a server as before. The kernel drops the lock when the holder exits
/// however it exits, so a `kill -9` leaves nothing to clean up.
final class DataFolderLock: @unchecked Sendable {
    static let fileName = "hearth.lock"
    private let mutex = NSLock()
    private var descriptor: Int32

    init(directory: String) throws {
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DataFolderLockError.cannotOpen(path: path, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = Self.holder(fd)
            close(fd)
            if code == EWOULDBLOCK { throw DataFolderInUse(directory: directory, holder: holder) }
            throw DataFolderLockError.cannotLock(path: path, errno: code)
        }
        // For the message a second process gives; the lock, not this number, decides.
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        descriptor = fd
    }

    /// The process id the holder wrote, if it is readable.
    private static func holder(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return Int32(String(decoding: buffer[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
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

/// Another open store holds rows for the data folder (see `DataFolderLock`).
public struct DataFolderInUse: Error, CustomStringConvertible {
    public let directory: String
    /// The holder's process id, as it recorded it.
    public let holder: Int32?

    public var description: String {
        let who = holder.map { "another process (pid \($0))" } ?? "another process"
        return "the data folder \(directory) is in use by \(who); serve a data folder from one server at a time "
            + "(tools such as `hearth fixtures load` and `hearth users` may run beside it)"
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

import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One owner per data folder: the server, `hearth import`, or a tool that opens the file because no server
/// runs (`Store.Configuration.dataFolderOwner`). The store's writer is then the only one: two servers on one
/// folder would each take their writer for the only one (commit times, WAL restarts, the listeners' feed,
/// cached documents), and an import's long transactions would hold a server's writes back. So an owner takes
/// an exclusive `flock` on `hearth.lock` in the folder for as long as it is open, and a second one fails to
/// open, naming the holder. The kernel drops the lock when the holder exits however it exits, so a `kill -9`
/// leaves nothing to clean up.
///
/// The file also holds the owner's record: its process id and name on the first line, and, once a server
/// listens, the loopback address where it answers on the second (`record(address:certificate:)`), and, when it
/// serves HTTPS, the absolute path of its certificate file on the third. Tools that find the folder held by a
/// server act through that address (`DataFolderInUse.address`) instead of opening the file, trusting over TLS
/// exactly the certificate in that file.
final class DataFolderLock: @unchecked Sendable {
    static let fileName = "hearth.lock"
    /// Largest owner record read.
    static let maxRecordBytes = 8_192
    private let mutex = NSLock()
    private var descriptor: Int32
    private let owner: String

    /// Takes the lock for `owner` (what a second process's message calls the holder: `hearth serve`).
    init(directory: String, owner: String) throws {
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DataFolderLockError.cannotOpen(path: path, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let record = Self.record(fd)
            close(fd)
            if code == EWOULDBLOCK {
                throw DataFolderInUse(directory: directory, holder: record.pid, holderName: record.name, address: record.address,
                                      certificate: record.certificate)
            }
            throw DataFolderLockError.cannotLock(path: path, errno: code)
        }
        // For the message a second process gives and the tools; the lock, not this record, decides.
        let record = Array("\(getpid()) \(owner)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = record.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        descriptor = fd
        self.owner = owner
    }

    /// Adds where the owner answers (a server's loopback URL) to its record, and the certificate file it serves
    /// HTTPS with, if it does. The new record begins as the old one does, so one write replaces it and a reader
    /// never sees less than the first line.
    func record(address: String, certificate: String?) {
        mutex.withLock {
            guard descriptor >= 0 else { return }
            let record = Array("\(getpid()) \(owner)\n\(address)\n\(certificate.map { "\($0)\n" } ?? "")".utf8)
            _ = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            _ = ftruncate(descriptor, off_t(record.count))
        }
    }

    /// The process id, owner name, address and certificate file the holder wrote, as far as they are readable.
    private static func record(_ fd: Int32) -> (pid: Int32?, name: String?, address: String?, certificate: String?) {
        var buffer = [UInt8](repeating: 0, count: maxRecordBytes)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return (nil, nil, nil, nil) }
        let lines = String(decoding: buffer[..<n], as: UTF8.self).split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
        let parts = lines.first?.split(separator: " ", maxSplits: 1) ?? []
        let name = parts.count > 1 ? String(parts[1]) : nil
        let address = lines.count > 1 && !lines[1].isEmpty ? lines[1] : nil
        let certificate = lines.count > 2 && !lines[2].isEmpty ? lines[2] : nil
        return (parts.first.flatMap { Int32($0) }, name, address, certificate)
    }

    /// Lets another process open the folder. Idempotent. Unlocked before it is closed: a child process forked
    /// meanwhile holds a copy of the descriptor until it execs, and closing ours alone would leave it locked.
    func release() {
        mutex.withLock {
            Self.unlock(descriptor)
            descriptor = -1
        }
    }

    deinit { Self.unlock(descriptor) }

    private static func unlock(_ descriptor: Int32) {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

/// Another process owns the data folder (see `DataFolderLock`).
public struct DataFolderInUse: Error, CustomStringConvertible {
    public let directory: String
    /// The holder's process id, as it recorded it.
    public let holder: Int32?
    /// What the holder is (`hearth serve`, `hearth import`), as it recorded it.
    public let holderName: String?
    /// Where the holder answers, when it is a server that listens: its loopback URL (`http://127.0.0.1:8080`).
    public let address: String?
    /// The certificate file an HTTPS server serves (an absolute path), as it recorded it.
    public let certificate: String?

    public var description: String {
        let who = holder.map { "another process (pid \($0))" } ?? "another process"
        let what = holderName.map { ", \($0)," } ?? ""
        return "the data folder \(directory) is in use by \(who)\(what); serve or import into a data folder from one "
            + "process at a time (`hearth users` and `hearth fixtures load` act through a server that holds the folder)"
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

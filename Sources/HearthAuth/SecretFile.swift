#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HearthCore

/// A secret kept in a file of the data folder (mode 0600): generated on first start, read afterwards. The
/// admin key and the outbox's sealing key live this way.
enum SecretFile {
    /// Largest secret file read, in bytes.
    static let maxFileBytes = 4_096

    /// The secret in `<dataDirectory>/<name>`, writing `generate()` there first when the file does not
    /// exist (the folder made with 0700 if missing). A file that others can read is tightened to 0600.
    static func loadOrCreate(dataDirectory: String, name: String, what: String, generate: () -> String)
        throws(HearthError) -> (secret: String, created: Bool, path: String) {
        try makeDirectory(dataDirectory)
        let path = dataDirectory.hasSuffix("/") ? dataDirectory + name : dataDirectory + "/" + name
        let secret = generate()
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            let bytes = Array((secret + "\n").utf8)
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            let synced = fsync(fd)
            close(fd)
            guard written == bytes.count, synced == 0 else {
                unlink(path)
                throw .internal("Could not write the \(what) file \(path) (errno \(errno)).")
            }
            return (secret, true, path)
        }
        guard errno == EEXIST else { throw .internal("Could not create the \(what) file \(path) (errno \(errno)).") }
        return (try readSecret(path, what: what), false, path)
    }

    private static func makeDirectory(_ path: String) throws(HearthError) {
        var components: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: false) {
            components.append(String(part))
            let prefix = components.joined(separator: "/")
            if prefix.isEmpty { continue }
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw .internal("Could not create the data folder \(path) (errno \(errno)).")
            }
        }
    }

    private static func readSecret(_ path: String, what: String) throws(HearthError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .internal("Could not read the \(what) file \(path) (errno \(errno)).") }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & 0o077 != 0 {
            // Readable by others: tighten rather than refuse, since the owner may have copied it carelessly.
            _ = fchmod(fd, 0o600)
        }
        var buffer = [UInt8](repeating: 0, count: maxFileBytes)
        var total = 0
        while total < buffer.count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0 { throw .internal("Could not read the \(what) file \(path) (errno \(errno)).") }
            if n == 0 { break }
            total += n
        }
        let text = EmailAddress.trim(String(decoding: buffer[..<total], as: UTF8.self))
        guard !text.isEmpty else { throw .internal("The \(what) file \(path) is empty; delete it to make a new one.") }
        return text
    }
}

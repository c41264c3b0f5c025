import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 that is bound and never listened on for as long as this value lives: connecting to it
/// is refused, and no other socket (another test's server) can take it meanwhile.
public final class UnreachablePort: Sendable {
    public let port: Int
    private let fd: Int32

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerProcessError(message: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            close(fd)
            throw ServerProcessError(message: "bind: errno \(errno)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

/// Loopback ports for servers a test starts itself.
public enum LoopbackPort {
    /// A port on 127.0.0.1 that was free a moment ago, for a server process to bind (which may, rarely, find it
    /// taken meanwhile); an address that must stay unreachable is an `UnreachablePort`.
    public static func unused() throws -> Int {
        try UnreachablePort().port
    }
}

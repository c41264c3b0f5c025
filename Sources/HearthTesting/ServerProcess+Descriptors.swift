import Foundation

extension ServerProcess {
    /// What the server's open descriptors name (the targets of `/proc/PID/fd`): files, sockets, pipes.
    public func openDescriptors() throws -> [String] {
        let folder = "/proc/\(pid)/fd"
        return try FileManager.default.contentsOfDirectory(atPath: folder).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")
        }
    }
}

import Foundation

extension ServerProcess {
    /// The server's resident memory in bytes (`VmRSS` of `/proc/PID/status`), for tests that bound it.
    public func residentBytes() throws -> Int { try Self.residentBytes(of: "\(pid)") }

    /// A process's resident memory in bytes; "self" for this process's own.
    public static func residentBytes(of pid: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            // "VmRSS:     123456 kB"
            if let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) { return kilobytes * 1024 }
        }
        throw ServerProcessError(message: "no VmRSS in /proc/\(pid)/status")
    }
}

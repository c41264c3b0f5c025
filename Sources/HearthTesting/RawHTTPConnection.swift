import Foundation
import HearthCore
import HTTPTypes

/// A plain TCP connection to a loopback server, for tests that need exact bytes on the wire: several
/// requests in one write (pipelining), `Connection: close`. Every read gives up after `timeout` seconds,
/// so a server that never answers fails the test instead of hanging it. One task may send while another
/// reads: `send` touches only the socket, and only the reader touches the buffer of received bytes.
///
/// The socket calls block, so each runs on a thread of its own: on one of Swift concurrency's few shared
/// threads, a test waiting for an answer could hold up the very server tasks that make it (an in-process
/// server's routes run there too).
public final class RawHTTPConnection: @unchecked Sendable {
    let fd: Int32
    var received: [UInt8] = []
    /// Where the unread part of `received` starts.
    var start = 0

    /// The connection failed or the answer was not HTTP/1 as expected.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Connects to `127.0.0.1:port`. `receiveBuffer` fixes the socket's receive buffer (the kernel may
    /// otherwise grow it to tens of megabytes), for tests about what a client that stops reading costs.
    public init(port: Int, timeout: Double = 10, receiveBuffer: Int? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect() to port \(port) failed: errno \(errno)")
        }
    }

    deinit { close(fd) }

    /// Sends bytes as they are, in one write.
    public func send(_ text: String) async throws {
        try await send(bytes: Array(text.utf8))
    }

    /// Sends bytes as they are, in one write.
    public func send(bytes: [UInt8]) async throws {
        try await Self.onOwnThread { try self.sendNow(bytes) }
    }

    /// Sends `bytes` `piece` bytes at a time, pausing before each piece, from a thread of its own: the pauses are
    /// the ones asked for even while other tests keep Swift concurrency's few threads busy.
    public func trickle(_ bytes: [UInt8], piece: Int, every pause: Duration) async throws {
        try await Self.onOwnThread { [self] in
            for start in stride(from: 0, to: bytes.count, by: piece) {
                Thread.sleep(forTimeInterval: pause.inSeconds)
                try sendNow(Array(bytes[start..<min(start + piece, bytes.count)]))
            }
        }
    }

    /// Closes the sending half of the connection (the server reads its end), leaving the reading half open.
    public func finishSending() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Ends the connection both ways at once, as a client that goes away mid-request.
    public func disconnect() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    private func sendNow(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send() failed: errno \(errno)") }
            sent += n
        }
    }

    /// The next whole response: status line, headers and a `Content-Length` body.
    public func readResponse() async throws -> HTTPResult {
        try await Self.onOwnThread { try self.readResponseNow() }
    }

    private func readResponseNow() throws -> HTTPResult {
        while true {
            if let response = try takeResponse() { return response }
            guard try fill() else {
                throw Failure(description: "connection closed before a whole response (have \(received.count) bytes)")
            }
        }
    }

    /// Reads until the server closes the connection; answers the bytes that came after the last response
    /// read. Throws if the connection is still open after the timeout.
    public func readToEnd() async throws -> [UInt8] {
        try await Self.onOwnThread { try self.readToEndNow() }
    }

    private func readToEndNow() throws -> [UInt8] {
        while try fill() {}
        defer { received = []; start = 0 }
        return Array(received[start...])
    }

    /// Reads until `done` holds for the bytes that came after the last response read, and answers them
    /// (they are consumed). Throws if the connection ends or a read times out first.
    public func read(until done: @escaping @Sendable ([UInt8]) -> Bool) async throws -> [UInt8] {
        try await Self.onOwnThread { try self.readNow(until: done) }
    }

    private func readNow(until done: ([UInt8]) -> Bool) throws -> [UInt8] {
        while !done(Array(received[start...])) {
            guard try fill() else {
                throw Failure(description: "connection closed after \(received.count - start) bytes before the expected end")
            }
        }
        defer { received = []; start = 0 }
        return Array(received[start...])
    }

    /// Runs a blocking call on a new thread.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// Reads once more from the socket; false at end of stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw Failure(description: errno == EAGAIN ? "timed out waiting for the server" : "recv() failed: errno \(errno)") }
        received.removeFirst(start)
        start = 0
        received += chunk[0..<n]
        return n > 0
    }

    private func takeResponse() throws -> HTTPResult? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard received.count - start >= 4,
              let end = (start...(received.count - 4)).first(where: { received[$0..<$0 + 4].elementsEqual(separator) }) else {
            return nil
        }
        let lines = String(decoding: received[start..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0] == "HTTP/1.1" || statusParts[0] == "HTTP/1.0", let status = Int(statusParts[1]) else {
            throw Failure(description: "not an HTTP/1.1 or HTTP/1.0 status line: \(lines[0].prefix(100))")
        }
        var headers = HTTPFields()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else {
                throw Failure(description: "bad header line: \(line.prefix(100))")
            }
            headers.append(HTTPField(name: name, value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let length = headers[.contentLength].flatMap { Int($0) } ?? 0
        let bodyStart = end + 4
        guard received.count >= bodyStart + length else { return nil }
        let body = Array(received[bodyStart..<bodyStart + length])
        start = bodyStart + length
        return HTTPResult(status: status, headers: headers, body: body, version: String(statusParts[0]))
    }
}

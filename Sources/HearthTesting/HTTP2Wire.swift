import Foundation

/// HTTP/2 frames as bytes (RFC 9113 §4), for tests that speak gRPC over a `RawHTTPConnection`: a client that
/// stops reading, which no client library lets a test be. Header blocks are HPACK literals without indexing or
/// Huffman coding (RFC 7541 §6.2.2), which every decoder accepts.
public enum HTTP2Wire {
    /// The client's connection preface, followed by its (empty) SETTINGS frame.
    public static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + frame(type: 4, flags: 0, stream: 0, [])

    /// One frame: its 9-byte header and payload.
    public static func frame(type: UInt8, flags: UInt8, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        let n = payload.count
        return [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF), type, flags,
                UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)] + payload
    }

    /// A HEADERS frame (END_HEADERS, and END_STREAM if asked) with `headers` in order.
    public static func headers(stream: UInt32, _ headers: [(String, String)], endStream: Bool = false) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in headers {
            block.append(0x00)
            block += length(name.utf8.count) + Array(name.utf8)
            block += length(value.utf8.count) + Array(value.utf8)
        }
        return frame(type: 1, flags: 0x4 | (endStream ? 0x1 : 0), stream: stream, block)
    }

    /// A gRPC call's request headers: `POST path`, `application/grpc`, `te: trailers`, a bearer token.
    public static func grpcRequest(stream: UInt32, path: String, port: Int, token: String) -> [UInt8] {
        headers(stream: stream, [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "127.0.0.1:\(port)"),
                                 ("content-type", "application/grpc"), ("te", "trailers"), ("authorization", "Bearer \(token)")])
    }

    /// A DATA frame holding one gRPC message (uncompressed: the 5-byte prefix and the serialized message).
    public static func grpcMessage(stream: UInt32, _ message: [UInt8]) -> [UInt8] {
        let n = message.count
        return frame(type: 0, flags: 0, stream: stream,
                     [0, UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + message)
    }

    /// One frame as read back.
    public struct Frame: Sendable {
        public let type: UInt8
        public let flags: UInt8
        public let stream: UInt32
        public let payload: [UInt8]
    }

    /// The whole frames at the start of `bytes` (a trailing partial frame is left out).
    public static func frames(_ bytes: [UInt8]) -> [Frame] {
        var frames: [Frame] = [], at = 0
        while bytes.count - at >= 9 {
            let length = Int(bytes[at]) << 16 | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2])
            guard bytes.count - at >= 9 + length else { break }
            let stream = UInt32(bytes[at + 5] & 0x7F) << 24 | UInt32(bytes[at + 6]) << 16 | UInt32(bytes[at + 7]) << 8 | UInt32(bytes[at + 8])
            frames.append(Frame(type: bytes[at + 3], flags: bytes[at + 4], stream: stream, payload: Array(bytes[(at + 9)..<(at + 9 + length)])))
            at += 9 + length
        }
        return frames
    }

    /// An HPACK string length with a 7-bit prefix, not Huffman-coded (RFC 7541 §5.1).
    static func length(_ n: Int) -> [UInt8] {
        guard n >= 127 else { return [UInt8(n)] }
        var bytes: [UInt8] = [127], rest = n - 127
        while rest >= 128 {
            bytes.append(UInt8(rest & 0x7F | 0x80))
            rest >>= 7
        }
        return bytes + [UInt8(rest)]
    }
}

import Foundation

/// WebSocket frames as bytes (RFC 6455 §5), for tests that speak the protocol over a `RawHTTPConnection`:
/// a client that stops reading, or that checks how a server splits a message into frames.
public enum WebSocketWire {
    /// One frame as it came over the wire.
    public struct Frame: Sendable, Equatable {
        public var fin: Bool
        public var opcode: UInt8
        public var payload: [UInt8]

        /// The close code of a close frame (opcode 8), if it carries one.
        public var closeCode: Int? {
            opcode == 8 && payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil
        }
    }

    /// The upgrade request for `path` with a bearer token.
    public static func upgradeRequest(path: String = "/v1/listen", port: Int, token: String) -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Authorization: Bearer \(token)\r\n\r\n"
    }

    /// A client's text frame: masked, as clients must send (`RawHTTPConnection.send(bytes:)`).
    public static func clientText(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    /// The whole frames at the start of `bytes` (a trailing partial frame is left out) and how many bytes
    /// they take.
    public static func frames(in bytes: [UInt8]) -> (frames: [Frame], consumed: Int) {
        var frames: [Frame] = []
        var at = 0
        while bytes.count - at >= 2 {
            let first = bytes[at], second = bytes[at + 1]
            var length = Int(second & 0x7F)
            var header = 2
            if length == 126 {
                guard bytes.count - at >= 4 else { break }
                length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
                header = 4
            } else if length == 127 {
                guard bytes.count - at >= 10 else { break }
                length = (0..<8).reduce(0) { $0 << 8 | Int(bytes[at + 2 + $1]) }
                header = 10
            }
            let masked = second & 0x80 != 0
            let maskBytes = masked ? 4 : 0
            guard bytes.count - at >= header + maskBytes + length else { break }
            var payload = Array(bytes[(at + header + maskBytes)..<(at + header + maskBytes + length)])
            if masked {
                let mask = Array(bytes[(at + header)..<(at + header + 4)])
                for k in payload.indices { payload[k] ^= mask[k % 4] }
            }
            frames.append(Frame(fin: first & 0x80 != 0, opcode: first & 0x0F, payload: payload))
            at += header + maskBytes + length
        }
        return (frames, at)
    }

    /// The messages the frames carry: text and continuation frames joined up to each `fin`; control frames
    /// (close, ping, pong) as they are.
    public static func messages(_ frames: [Frame]) -> [Frame] {
        var out: [Frame] = []
        var partial: Frame?
        for frame in frames {
            switch frame.opcode {
            case 0:
                partial?.payload += frame.payload
                if frame.fin, let whole = partial {
                    out.append(Frame(fin: true, opcode: whole.opcode, payload: whole.payload))
                    partial = nil
                }
            case 1, 2:
                if frame.fin { out.append(frame) } else { partial = frame }
            default:
                out.append(frame)
            }
        }
        return out
    }
}

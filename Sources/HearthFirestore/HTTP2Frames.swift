import NIOCore

/// HTTP/2's frames as the gRPC port writes them (RFC 9113 §4, §6): frame headers, error codes and settings, and
/// header blocks as HPACK literals (RFC 7541 §6.2.2). Responses never use the dynamic table, so a header block
/// needs no encoder state; request headers are decoded with NIOHPACK's decoder.
enum HTTP2 {
    enum FrameType: UInt8 {
        case data = 0, headers, priority, rstStream, settings, pushPromise, ping, goAway, windowUpdate, continuation
    }

    enum Flag {
        static let endStream: UInt8 = 0x1
        static let ack: UInt8 = 0x1
        static let endHeaders: UInt8 = 0x4
        static let padded: UInt8 = 0x8
        static let priority: UInt8 = 0x20
    }

    enum ErrorCode: UInt32, Sendable {
        case noError = 0, protocolError, internalError, flowControlError, settingsTimeout, streamClosed, frameSizeError,
             refusedStream, cancel, compressionError, connectError, enhanceYourCalm, inadequateSecurity, http11Required
    }

    enum Setting: UInt16 {
        case headerTableSize = 1, enablePush, maxConcurrentStreams, initialWindowSize, maxFrameSize, maxHeaderListSize
    }

    /// A fault that ends the whole connection with GOAWAY (RFC 9113 §5.4.1).
    struct ConnectionError: Error, Equatable {
        let code: ErrorCode
        let message: String
    }

    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    static let frameHeaderSize = 9
    static let defaultMaxFrameSize = 1 << 14
    static let defaultWindow = 65_535
    static let maxWindow = Int(Int32.max)

    static func writeFrameHeader(_ buffer: inout ByteBuffer, length: Int, type: FrameType, flags: UInt8, stream: UInt32) {
        buffer.writeInteger(UInt8(truncatingIfNeeded: length >> 16))
        buffer.writeInteger(UInt16(truncatingIfNeeded: length))
        buffer.writeInteger(type.rawValue)
        buffer.writeInteger(flags)
        buffer.writeInteger(stream & 0x7FFF_FFFF)
    }

    /// A header block of literal fields without indexing, each name and value as raw bytes (names lowercase, as
    /// HTTP/2 requires).
    static func headerBlock(_ fields: some Sequence<(String, String)>) -> ByteBuffer {
        var block = ByteBuffer()
        appendLiterals(fields, to: &block)
        return block
    }

    static func appendLiterals(_ fields: some Sequence<(String, String)>, to block: inout ByteBuffer) {
        for (name, value) in fields {
            block.writeInteger(UInt8(0))
            writeString(name, to: &block)
            writeString(value, to: &block)
        }
    }

    private static func writeString(_ text: String, to block: inout ByteBuffer) {
        writePrefixedInteger(text.utf8.count, prefixBits: 7, firstByte: 0, to: &block)
        block.writeString(text)
    }

    /// An HPACK integer (RFC 7541 §5.1): the prefix's bits of `firstByte` carry the value, or all ones and the
    /// rest in 7-bit groups.
    static func writePrefixedInteger(_ value: Int, prefixBits: Int, firstByte: UInt8, to buffer: inout ByteBuffer) {
        let limit = (1 << prefixBits) - 1
        guard value >= limit else {
            buffer.writeInteger(firstByte | UInt8(value))
            return
        }
        buffer.writeInteger(firstByte | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            buffer.writeInteger(UInt8(rest & 0x7F | 0x80))
            rest >>= 7
        }
        buffer.writeInteger(UInt8(rest))
    }
}

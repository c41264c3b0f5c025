@testable import HearthFirestore
import HearthTesting
import NIOCore
import NIOEmbedded
import NIOHPACK
import Testing

/// The gRPC port's HTTP/2 protocol state, without a socket: what a peer's frames become, what the server's
/// answers become on the wire within the peer's windows, and how each kind of broken frame is refused (the
/// whole connection with GOAWAY, or one stream with RST_STREAM, as RFC 9113 says).
@Suite struct HTTP2ServerConnectionTests {
    /// A peer on the other side of one connection: sends frames, reads what the server wrote.
    struct Peer {
        var connection = HTTP2ServerConnection(allocator: ByteBufferAllocator())
        var promises: [EventLoopPromise<Void>] = []

        init(settings: [(UInt16, UInt32)] = []) throws {
            var payload: [UInt8] = []
            for (id, value) in settings { payload += Self.bytes(id) + Self.bytes(value) }
            _ = try send(Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + HTTP2Wire.frame(type: 4, flags: 0, stream: 0, payload))
            let opening = frames()
            #expect(opening.map(\.type) == [4, 4], "the server's SETTINGS, then its acknowledgement of the peer's")
        }

        /// The events the bytes make, as short descriptions.
        mutating func send(_ bytes: [UInt8]) throws(HTTP2.ConnectionError) -> [String] {
            var buffer = ByteBuffer(bytes: bytes)
            var events: [String] = []
            while let event = try connection.next(from: &buffer) {
                switch event {
                case .request(let id, let headers, let end): events.append("request \(id) \(headers[":path"].first ?? "")\(end ? " end" : "")")
                case .data(let id, let bytes, let end): events.append("data \(id) \(bytes.readableBytes)\(end ? " end" : "")")
                case .reset(let id): events.append("reset \(id)")
                case .goAway: events.append("goaway")
                }
            }
            return events
        }

        /// The frames the server has written since the last call.
        mutating func frames() -> [HTTP2Wire.Frame] {
            guard let (output, written) = connection.takeOutput() else { return [] }
            promises += written
            let bytes = Array(output.readableBytesView)
            let frames = HTTP2Wire.frames(bytes)
            #expect(frames.reduce(0) { $0 + 9 + $1.payload.count } == bytes.count)
            return frames
        }

        static func bytes(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
        static func bytes(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

        static func request(_ stream: UInt32, endStream: Bool = false) -> [UInt8] {
            HTTP2Wire.headers(stream: stream, [(":method", "POST"), (":scheme", "http"), (":path", "/s/m"),
                                               ("content-type", "application/grpc")], endStream: endStream)
        }

        static func windowUpdate(_ stream: UInt32, _ increment: UInt32) -> [UInt8] {
            HTTP2Wire.frame(type: 8, flags: 0, stream: stream, bytes(increment))
        }

        static func data(_ stream: UInt32, _ count: Int, endStream: Bool = false) -> [UInt8] {
            HTTP2Wire.frame(type: 0, flags: endStream ? 1 : 0, stream: stream, [UInt8](repeating: 7, count: count))
        }
    }

    struct Fault: Sendable, CustomTestStringConvertible {
        let name: String
        let frames: [UInt8]
        let code: HTTP2.ErrorCode
        var testDescription: String { name }
    }

    static let request = Peer.request(1)
    static let connectionFaults: [Fault] = [
        Fault(name: "DATA on stream 0", frames: HTTP2Wire.frame(type: 0, flags: 0, stream: 0, [1]), code: .protocolError),
        Fault(name: "DATA on a stream never opened", frames: Peer.data(3, 1), code: .protocolError),
        Fault(name: "HEADERS on stream 0", frames: Peer.request(0), code: .protocolError),
        Fault(name: "a stream id that is even", frames: Peer.request(2), code: .protocolError),
        Fault(name: "a frame over 16 KiB", frames: HTTP2Wire.frame(type: 0, flags: 0, stream: 1, [UInt8](repeating: 0, count: 16_385)), code: .frameSizeError),
        Fault(name: "PING of 7 bytes", frames: HTTP2Wire.frame(type: 6, flags: 0, stream: 0, [UInt8](repeating: 0, count: 7)), code: .frameSizeError),
        Fault(name: "PING on a stream", frames: HTTP2Wire.frame(type: 6, flags: 0, stream: 1, [UInt8](repeating: 0, count: 8)), code: .protocolError),
        Fault(name: "SETTINGS of 5 bytes", frames: HTTP2Wire.frame(type: 4, flags: 0, stream: 0, [0, 4, 0, 0, 1]), code: .frameSizeError),
        Fault(name: "a SETTINGS acknowledgement with a payload", frames: HTTP2Wire.frame(type: 4, flags: 1, stream: 0, [0, 4, 0, 0, 0, 1]), code: .frameSizeError),
        Fault(name: "SETTINGS on a stream", frames: HTTP2Wire.frame(type: 4, flags: 0, stream: 1, []), code: .protocolError),
        Fault(name: "an initial window over 2^31-1", frames: HTTP2Wire.frame(type: 4, flags: 0, stream: 0, [0, 4, 0x80, 0, 0, 0]), code: .flowControlError),
        Fault(name: "a maximum frame size under 16 KiB", frames: HTTP2Wire.frame(type: 4, flags: 0, stream: 0, [0, 5, 0, 0, 0, 100]), code: .protocolError),
        Fault(name: "ENABLE_PUSH of 2", frames: HTTP2Wire.frame(type: 4, flags: 0, stream: 0, [0, 2, 0, 0, 0, 2]), code: .protocolError),
        Fault(name: "PUSH_PROMISE from a client", frames: request + HTTP2Wire.frame(type: 5, flags: 4, stream: 1, [0, 0, 0, 2]), code: .protocolError),
        Fault(name: "CONTINUATION without HEADERS", frames: HTTP2Wire.frame(type: 9, flags: 4, stream: 1, []), code: .protocolError),
        Fault(name: "a header block interrupted by DATA",
              frames: HTTP2Wire.frame(type: 1, flags: 0, stream: 1, []) + Peer.data(1, 1), code: .protocolError),
        Fault(name: "a header block continued on another stream",
              frames: HTTP2Wire.frame(type: 1, flags: 0, stream: 1, []) + HTTP2Wire.frame(type: 9, flags: 4, stream: 3, []), code: .protocolError),
        Fault(name: "a header block over 64 KiB",
              frames: HTTP2Wire.frame(type: 1, flags: 0, stream: 1, [])
                  + (0..<5).flatMap { _ in HTTP2Wire.frame(type: 9, flags: 0, stream: 1, [UInt8](repeating: 0, count: 16_000)) },
              code: .enhanceYourCalm),
        Fault(name: "a header block that does not decode (index 0)", frames: HTTP2Wire.frame(type: 1, flags: 4, stream: 1, [0x80]), code: .compressionError),
        Fault(name: "a header field indexed past both tables", frames: HTTP2Wire.frame(type: 1, flags: 4, stream: 1, [0xFF, 0x20]), code: .compressionError),
        Fault(name: "padding longer than its frame", frames: HTTP2Wire.frame(type: 1, flags: 0x4 | 0x8, stream: 1, [9, 0x82]), code: .protocolError),
        Fault(name: "a connection WINDOW_UPDATE of 0", frames: Peer.windowUpdate(0, 0), code: .protocolError),
        Fault(name: "the connection's window over 2^31-1", frames: Peer.windowUpdate(0, 0x7FFF_FFFF), code: .flowControlError),
        Fault(name: "WINDOW_UPDATE of 3 bytes", frames: HTTP2Wire.frame(type: 8, flags: 0, stream: 0, [0, 0, 1]), code: .frameSizeError),
        Fault(name: "WINDOW_UPDATE on a stream never opened", frames: Peer.windowUpdate(5, 1), code: .protocolError),
        Fault(name: "RST_STREAM on a stream never opened", frames: HTTP2Wire.frame(type: 3, flags: 0, stream: 7, [0, 0, 0, 8]), code: .protocolError),
        Fault(name: "RST_STREAM of 3 bytes", frames: request + HTTP2Wire.frame(type: 3, flags: 0, stream: 1, [0, 0, 8]), code: .frameSizeError),
        Fault(name: "GOAWAY of 4 bytes", frames: HTTP2Wire.frame(type: 7, flags: 0, stream: 0, [0, 0, 0, 0]), code: .frameSizeError),
        Fault(name: "streams opened and reset faster than 200 in 30 s",
              frames: (0..<201).flatMap { (i: UInt32) in Peer.request(2 * i + 1) + HTTP2Wire.frame(type: 3, flags: 0, stream: 2 * i + 1, [0, 0, 0, 8]) },
              code: .enhanceYourCalm),
    ]

    @Test(arguments: connectionFaults) func aConnectionFaultIsThrownWithItsCode(fault: Fault) throws {
        var peer = try Peer()
        #expect(throws: HTTP2.ConnectionError.self) {
            do throws(HTTP2.ConnectionError) {
                _ = try peer.send(fault.frames)
            } catch {
                #expect(error.code == fault.code, "\(error.message)")
                throw error
            }
        }
        peer.connection.goAway(fault.code, "why")
        let goAway = try #require(peer.frames().last)
        #expect(goAway.type == 7 && Array(goAway.payload[4..<8]) == Peer.bytes(fault.code.rawValue) && Array(goAway.payload[8...]) == Array("why".utf8))
    }

    @Test(arguments: [
        ("an HTTP/1.1 request", Array("GET / HTTP/1.1\r\n".utf8)),
        ("a first frame that is not SETTINGS", Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + HTTP2Wire.frame(type: 6, flags: 0, stream: 0, [UInt8](repeating: 0, count: 8))),
    ])
    func aConnectionThatDoesNotBeginAsHTTP2IsRefused(name: String, bytes: [UInt8]) {
        var connection = HTTP2ServerConnection(allocator: ByteBufferAllocator())
        var buffer = ByteBuffer(bytes: bytes)
        #expect(throws: HTTP2.ConnectionError(code: .protocolError, message: name.hasPrefix("an HTTP")
                                                ? "the connection did not begin with HTTP/2's preface" : "the connection's first frame must be SETTINGS")) {
            _ = try connection.next(from: &buffer)
        }
    }

    struct StreamFault: Sendable, CustomTestStringConvertible {
        let name: String
        let frames: [UInt8]
        let code: HTTP2.ErrorCode
        var testDescription: String { name }
    }

    @Test(arguments: [
        StreamFault(name: "DATA after the request ended", frames: Peer.request(1, endStream: true) + Peer.data(1, 1), code: .streamClosed),
        StreamFault(name: "trailers that do not end the request",
                    frames: request + HTTP2Wire.headers(stream: 1, [("x-trailer", "1")]), code: .protocolError),
        StreamFault(name: "a stream WINDOW_UPDATE of 0", frames: request + Peer.windowUpdate(1, 0), code: .protocolError),
        StreamFault(name: "a stream's window over 2^31-1", frames: request + Peer.windowUpdate(1, 0x7FFF_FFFF), code: .flowControlError),
        StreamFault(name: "PRIORITY of 4 bytes", frames: request + HTTP2Wire.frame(type: 2, flags: 0, stream: 1, [0, 0, 0, 0]), code: .frameSizeError),
        StreamFault(name: "trailers with a pseudo-header field",
                    frames: request + HTTP2Wire.headers(stream: 1, [(":path", "/s/m")], endStream: true), code: .protocolError),
    ])
    func aStreamFaultResetsThatStreamAlone(fault: StreamFault) throws {
        var peer = try Peer()
        let events = try peer.send(fault.frames)
        #expect(events.last == "reset 1", "\(events)")
        let reset = try #require(peer.frames().last)
        #expect(reset.type == 3 && reset.stream == 1 && reset.payload == Peer.bytes(fault.code.rawValue))
        // The connection goes on: another stream is served.
        #expect(try peer.send(Peer.request(3, endStream: true)) == ["request 3 /s/m end"])
    }

    /// Requests malformed as RFC 9113 §8.2-8.3 has it: each is reset, never handed on.
    static let malformedRequests: [(String, [(String, String)])] = [
        ("with a name in capitals", [(":method", "POST"), (":scheme", "http"), (":path", "/s/m"), ("Content-Type", "application/grpc")]),
        ("with a pseudo-header field after a regular one", [(":method", "POST"), (":scheme", "http"), ("content-type", "application/grpc"), (":path", "/s/m")]),
        ("with :path twice", [(":method", "POST"), (":scheme", "http"), (":path", "/s/m"), (":path", "/s/n")]),
        ("without :path", [(":method", "POST"), (":scheme", "http"), ("content-type", "application/grpc")]),
        ("with an empty :path", [(":method", "POST"), (":scheme", "http"), (":path", "")]),
        ("with a response's :status", [(":method", "POST"), (":scheme", "http"), (":path", "/s/m"), (":status", "200")]),
        ("with a connection-specific field", [(":method", "POST"), (":scheme", "http"), (":path", "/s/m"), ("connection", "keep-alive")]),
        ("with transfer-encoding", [(":method", "POST"), (":scheme", "http"), (":path", "/s/m"), ("transfer-encoding", "chunked")]),
        ("with te other than trailers", [(":method", "POST"), (":scheme", "http"), (":path", "/s/m"), ("te", "gzip")]),
    ]

    @Test(arguments: malformedRequests)
    func aMalformedRequestIsResetAndNeverHandedOn(name: String, headers: [(String, String)]) throws {
        var peer = try Peer()
        #expect(try peer.send(HTTP2Wire.headers(stream: 1, headers)) == [])
        let reset = try #require(peer.frames().last)
        #expect(reset.type == 3 && reset.stream == 1 && reset.payload == Peer.bytes(HTTP2.ErrorCode.protocolError.rawValue))
        #expect(try peer.send(Peer.request(3, endStream: true)) == ["request 3 /s/m end"])
    }

    @Test func theServerOpensWithItsSettingsAndAnswersPingsAndSettings() throws {
        var connection = HTTP2ServerConnection(allocator: ByteBufferAllocator())
        let opening = connection.takeOutput()
        var (output, _) = try #require(opening)
        #expect(output.readBytes(length: 9) == [0, 0, 18, 4, 0, 0, 0, 0, 0])
        #expect(output.readBytes(length: 18) == [0, 3, 0, 0, 0x03, 0xE8, 0, 4, 0, 0, 0xFF, 0xFF, 0, 6, 0, 0, 0x40, 0])

        var peer = try Peer()
        #expect(try peer.send(HTTP2Wire.frame(type: 6, flags: 0, stream: 0, [1, 2, 3, 4, 5, 6, 7, 8])) == [])
        #expect(try peer.send(HTTP2Wire.frame(type: 6, flags: 1, stream: 0, [1, 2, 3, 4, 5, 6, 7, 8])) == [], "an acknowledgement is not answered")
        let frames = peer.frames()
        #expect(frames.count == 1 && frames[0].type == 6 && frames[0].flags == 1 && frames[0].payload == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(peer.connection.controlFramesAnswered == 2)
        // Unknown frame types and PRIORITY are read and ignored.
        #expect(try peer.send(HTTP2Wire.frame(type: 0xEE, flags: 0, stream: 1, [1, 2]) + HTTP2Wire.frame(type: 2, flags: 0, stream: 1, [0, 0, 0, 0, 16])) == [])
        #expect(peer.frames().isEmpty)
    }

    @Test func aRequestIsReadFromHuffmanCodedIndexedHeadersSplitOverContinuations() throws {
        var peer = try Peer()
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: true)
        var block = ByteBuffer()
        try encoder.encode(headers: [":method": "POST", ":scheme": "http", ":path": "/google.firestore.v1.Firestore/Commit",
                                     "content-type": "application/grpc", "authorization": "Bearer \(String(repeating: "k", count: 200))"],
                           to: &block)
        let bytes = Array(block.readableBytesView)
        let events = try peer.send(HTTP2Wire.frame(type: 1, flags: 0x8, stream: 1, [3] + bytes[..<10] + [0, 0, 0])
                                   + HTTP2Wire.frame(type: 9, flags: 0, stream: 1, Array(bytes[10..<40]))
                                   + HTTP2Wire.frame(type: 9, flags: 4, stream: 1, Array(bytes[40...]))
                                   + Peer.data(1, 100) + HTTP2Wire.headers(stream: 1, [("x-trailer", "1")], endStream: true))
        #expect(events == ["request 1 /google.firestore.v1.Firestore/Commit", "data 1 100", "data 1 0 end"])
        // The second request reuses the first one's dynamic table entries.
        block.clear()
        try encoder.encode(headers: [":method": "POST", ":scheme": "http", ":path": "/google.firestore.v1.Firestore/Commit",
                                     "content-type": "application/grpc", "authorization": "Bearer \(String(repeating: "k", count: 200))"],
                           to: &block)
        #expect(block.readableBytes < 10)
        #expect(try peer.send(HTTP2Wire.frame(type: 1, flags: 5, stream: 3, Array(block.readableBytesView))) == ["request 3 /google.firestore.v1.Firestore/Commit end"])
    }

    @Test func dataWaitsForThePeersWindowsAndTheTrailersWaitForTheData() throws {
        let loop = EmbeddedEventLoop()
        var peer = try Peer(settings: [(4, 10)]) // each stream's window: 10 bytes
        _ = try peer.send(Peer.request(1, endStream: true))
        let written = loop.makePromise(of: Void.self)
        peer.connection.writeHeaders(1, HTTP2.headerBlock([(":status", "200")]))
        peer.connection.writeData(1, ByteBuffer(bytes: [UInt8](repeating: 1, count: 25)), promise: written)
        peer.connection.writeTrailers(1, HTTP2.headerBlock([("grpc-status", "0")]))
        var frames = peer.frames()
        #expect(frames.map(\.type) == [1, 0] && frames[1].payload.count == 10)
        #expect(peer.promises.isEmpty, "the data is not all out yet")
        #expect(peer.connection.queuedBytes == 15)

        _ = try peer.send(Peer.windowUpdate(1, 10))
        frames = peer.frames()
        #expect(frames.map(\.type) == [0] && frames[0].payload.count == 10)
        #expect(peer.connection.queuedBytes == 5)
        _ = try peer.send(Peer.windowUpdate(1, 100))
        frames = peer.frames()
        #expect(frames.map(\.type) == [0, 1] && frames[0].payload.count == 5 && frames[1].flags & 1 == 1, "the rest, then the trailers ending the stream")
        #expect(peer.promises.count == 1)
        peer.promises.forEach { $0.succeed() }
        #expect(try written.futureResult.wait() == ())
        #expect(peer.connection.openStreams == 0 && peer.connection.queuedBytes == 0)
    }

    @Test func theConnectionWindowAndFrameSizeCutTheData() throws {
        var peer = try Peer(settings: [(4, 1 << 20), (5, 20_000)])
        _ = try peer.send(Peer.request(1, endStream: true) + Peer.request(3, endStream: true))
        peer.connection.writeData(1, ByteBuffer(bytes: [UInt8](repeating: 1, count: 70_000)), promise: nil)
        peer.connection.writeData(3, ByteBuffer(bytes: [UInt8](repeating: 3, count: 100)), promise: nil)
        var frames = peer.frames()
        #expect(frames.map(\.payload.count) == [20_000, 20_000, 20_000, 5_535], "the connection's 65,535 bytes, in frames of the peer's size")
        _ = try peer.send(Peer.windowUpdate(0, 4_465))
        frames = peer.frames()
        #expect(frames.map(\.stream) == [1] && frames.map(\.payload.count) == [4_465], "the stream that waited first")
        _ = try peer.send(Peer.windowUpdate(0, 10_000))
        frames = peer.frames()
        #expect(frames.map(\.stream) == [3] && frames.map(\.payload.count) == [100])
    }

    @Test func aResetStreamDropsWhatWaitedAndFailsItsPromise() throws {
        let loop = EmbeddedEventLoop()
        var peer = try Peer(settings: [(4, 0)])
        _ = try peer.send(Peer.request(1))
        let written = loop.makePromise(of: Void.self)
        peer.connection.writeData(1, ByteBuffer(bytes: [1, 2, 3]), promise: written)
        #expect(peer.frames().isEmpty)
        #expect(try peer.send(HTTP2Wire.frame(type: 3, flags: 0, stream: 1, [0, 0, 0, 8])) == ["reset 1"])
        #expect(throws: (any Error).self) { try written.futureResult.wait() }
        #expect(peer.connection.queuedBytes == 0)
        // Frames still in flight on the closed stream are dropped, the connection's window given back.
        #expect(try peer.send(Peer.data(1, 16_384) + Peer.data(1, 16_384)) == [])
        #expect(peer.frames().map(\.stream) == [0], "a WINDOW_UPDATE for the connection only")
    }

    @Test func aResponseCompleteBeforeItsRequestResetsTheRequestWithNoError() throws {
        var peer = try Peer()
        _ = try peer.send(Peer.request(1))
        peer.connection.writeTrailers(1, HTTP2.headerBlock([(":status", "200"), ("grpc-status", "16")]))
        let frames = peer.frames()
        #expect(frames.map(\.type) == [1, 3] && frames[0].flags == 0x5 && frames[1].payload == [0, 0, 0, 0])
        #expect(peer.connection.openStreams == 0)
    }

    @Test func theRequestsWindowsAreGivenBackOnceHalfUsed() throws {
        var peer = try Peer()
        _ = try peer.send(Peer.request(1))
        #expect(try peer.send(Peer.data(1, 16_384) + Peer.data(1, 16_383)) == ["data 1 16384", "data 1 16383"])
        #expect(peer.frames().isEmpty)
        _ = try peer.send(Peer.data(1, 1))
        let updates = peer.frames()
        #expect(updates.map(\.type) == [8, 8] && Set(updates.map(\.stream)) == [0, 1] && updates.allSatisfy { $0.payload == Peer.bytes(UInt32(32_768)) })
    }

    @Test func streamsPastTheLimitAreRefusedAndStreamsPastGoAwayIgnored() throws {
        var peer = try Peer()
        let opened = try peer.send((0..<UInt32(HTTP2ServerConnection.maxConcurrentStreams)).flatMap { Peer.request(2 * $0 + 1) })
        #expect(opened.count == HTTP2ServerConnection.maxConcurrentStreams)
        #expect(try peer.send(Peer.request(2_001)) == [])
        #expect(peer.frames().last.map { [$0.type] + Peer.bytes($0.stream) + $0.payload } == [3, 0, 0, 0x07, 0xD1, 0, 0, 0, 7])
        peer.connection.goAway(.noError)
        #expect(peer.frames().last?.payload == Peer.bytes(UInt32(2_001)) + [0, 0, 0, 0])
        _ = try peer.send(HTTP2Wire.frame(type: 3, flags: 0, stream: 1, [0, 0, 0, 8]))
        #expect(try peer.send(Peer.request(2_003)) == [], "a stream opened after GOAWAY is not served")
    }

    @Test func aNewHeaderTableSizeIsAnsweredWithAnEmptyTable() throws {
        var peer = try Peer(settings: [(1, 0)])
        _ = try peer.send(Peer.request(1, endStream: true))
        peer.connection.writeTrailers(1, HTTP2.headerBlock([(":status", "200"), ("grpc-status", "0")]))
        peer.connection.writeTrailers(1, HTTP2.headerBlock([(":status", "200")]))
        let frames = peer.frames()
        #expect(frames.count == 1 && frames[0].payload.first == 0x20)
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var block = ByteBuffer(bytes: frames[0].payload)
        let headers = try decoder.decodeHeaders(from: &block)
        #expect(headers[":status"] == ["200"] && headers["grpc-status"] == ["0"])
    }
}

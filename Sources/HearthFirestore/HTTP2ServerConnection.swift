import NIOCore
import NIOHPACK

/// One HTTP/2 connection's protocol state, server side, without a channel: bytes from the peer go in and come out
/// as the requests' events; what the server answers goes in and comes out as bytes (`output`), within the
/// peer's flow-control windows, with the control frames the protocol asks for (SETTINGS and PING
/// acknowledgements, WINDOW_UPDATE, RST_STREAM, GOAWAY). A fault of one stream resets it; a fault of the
/// connection is thrown, and the caller sends `goAway` and closes.
///
/// It serves gRPC, so it keeps only what gRPC needs: no server push, no priorities (parsed and ignored), response
/// headers as HPACK literals. It has one owner and is never copied: its streams' states are objects.
struct HTTP2ServerConnection {
    enum Event {
        /// A new stream's request headers; `endStream`: the request has no body.
        case request(UInt32, HPACKHeaders, endStream: Bool)
        /// Request bytes; `endStream`: the request is complete (also when it ends with trailers, with no bytes).
        case data(UInt32, ByteBuffer, endStream: Bool)
        /// The stream ended before its answer did: the peer reset it, or broke the protocol on it.
        case reset(UInt32)
        /// The peer is going away: it opens no more streams.
        case goAway
    }

    static let maxConcurrentStreams = 1000
    static let maxHeaderListSize = 16 * 1024
    /// A request's header block, however many CONTINUATION frames carry it, is refused past this size.
    static let maxHeaderBlock = 64 * 1024
    /// The window kept open for each request and the connection: given back once half of it is used.
    static let window = HTTP2.defaultWindow
    /// RST_STREAM frames a peer may send in `resetPeriod` before the connection ends (the rapid-reset attack).
    static let maxResets = 200
    static let resetPeriod = TimeAmount.seconds(30)

    /// A stream's state: a class, so that it is changed where it is kept, without copying its queue.
    private final class Stream {
        var sendWindow: Int
        var receiveWindow = HTTP2ServerConnection.window
        /// The peer sent END_STREAM: no more request bytes.
        var requestEnded: Bool
        /// What waits for the windows, in order: data, then perhaps the trailers that end the stream.
        var queue: [Pending] = []

        init(sendWindow: Int, requestEnded: Bool) { (self.sendWindow, self.requestEnded) = (sendWindow, requestEnded) }
    }

    private enum Pending {
        case data(ByteBuffer, EventLoopPromise<Void>?)
        case trailers(ByteBuffer)
    }

    /// Frames to write, in order; `outputPromises` succeed once they are written.
    private(set) var output: ByteBuffer
    private(set) var outputPromises: [EventLoopPromise<Void>] = []
    /// SETTINGS and PING acknowledgements written since the caller last cleared it (a peer that sends them
    /// without reading the answers is stopped by the caller).
    var controlFramesAnswered = 0
    /// Response bytes waiting for the peer's windows, all streams together.
    private(set) var queuedBytes = 0

    private(set) var lastStreamID: UInt32 = 0
    private var streams: [UInt32: Stream] = [:]
    private var prefaceReceived = false
    /// The peer's preface and first SETTINGS are in.
    private(set) var settingsReceived = false
    private var decoder: HPACKDecoder
    /// A header block waiting for its CONTINUATION frames.
    private var headerBlock: (stream: UInt32, flags: UInt8, block: ByteBuffer)?
    private var connectionReceiveWindow = window
    private var connectionSendWindow = HTTP2.defaultWindow
    private var peerInitialWindow = HTTP2.defaultWindow
    private var peerMaxFrameSize = HTTP2.defaultMaxFrameSize
    /// The peer set its header table size: the next header block starts with a dynamic table size update.
    private var tableSizeUpdatePending = false
    /// Streams with data queued while their own window is open: they go when the connection's window does.
    private var waitingForConnection: [UInt32] = []
    /// Streams above this id are ignored once GOAWAY is sent.
    private var goAwayStream: UInt32?
    private var resets = (count: 0, since: NIODeadline.now())

    private let allocator: ByteBufferAllocator

    init(allocator: ByteBufferAllocator) {
        self.allocator = allocator
        output = allocator.buffer(capacity: 256)
        decoder = HPACKDecoder(allocator: allocator, maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize,
                               maxHeaderListSize: Self.maxHeaderListSize)
        writeSettings()
    }

    var openStreams: Int { streams.count }

    /// The output and its promises, taken to be written.
    mutating func takeOutput() -> (ByteBuffer, [EventLoopPromise<Void>])? {
        guard output.readableBytes > 0 || !outputPromises.isEmpty else { return nil }
        let taken = (output, outputPromises)
        output = allocator.buffer(capacity: 256)
        outputPromises = []
        return taken
    }

    // MARK: Reading

    /// The next event in `buffer`'s frames, consuming what it reads; nil when the rest is an incomplete frame.
    mutating func next(from buffer: inout ByteBuffer) throws(HTTP2.ConnectionError) -> Event? {
        if !prefaceReceived {
            let have = min(buffer.readableBytes, HTTP2.preface.count)
            guard buffer.readableBytesView.prefix(have).elementsEqual(HTTP2.preface.prefix(have)) else {
                throw HTTP2.ConnectionError(code: .protocolError, message: "the connection did not begin with HTTP/2's preface")
            }
            guard have == HTTP2.preface.count else { return nil }
            buffer.moveReaderIndex(forwardBy: have)
            prefaceReceived = true
        }
        while buffer.readableBytes >= HTTP2.frameHeaderSize {
            let start = buffer.readerIndex
            let length = Int(buffer.getInteger(at: start, as: UInt8.self)!) << 16 | Int(buffer.getInteger(at: start + 1, as: UInt16.self)!)
            guard length <= HTTP2.defaultMaxFrameSize else {
                throw HTTP2.ConnectionError(code: .frameSizeError, message: "a frame of \(length) bytes exceeds the maximum of \(HTTP2.defaultMaxFrameSize)")
            }
            guard buffer.readableBytes >= HTTP2.frameHeaderSize + length else { return nil }
            let type = buffer.getInteger(at: start + 3, as: UInt8.self)!
            let flags = buffer.getInteger(at: start + 4, as: UInt8.self)!
            let stream = buffer.getInteger(at: start + 5, as: UInt32.self)! & 0x7FFF_FFFF
            buffer.moveReaderIndex(forwardBy: HTTP2.frameHeaderSize)
            let payload = buffer.readSlice(length: length)!
            if let event = try frame(type, flags, stream, payload) { return event }
        }
        return nil
    }

    private mutating func frame(_ rawType: UInt8, _ flags: UInt8, _ stream: UInt32, _ payload: ByteBuffer) throws(HTTP2.ConnectionError) -> Event? {
        let type = HTTP2.FrameType(rawValue: rawType)
        if let pending = headerBlock, type != .continuation || stream != pending.stream {
            throw protocolError("a header block was interrupted before its END_HEADERS")
        }
        if !settingsReceived, type != .settings || flags & HTTP2.Flag.ack != 0 {
            throw protocolError("the connection's first frame must be SETTINGS")
        }
        switch type {
        case .data?: return try data(flags, stream, payload)
        case .headers?: return try headers(flags, stream, payload)
        case .continuation?: return try continuation(flags, stream, payload)
        case .priority?:
            guard stream != 0 else { throw protocolError("PRIORITY on stream 0") }
            guard payload.readableBytes == 5 else { return reset(stream, .frameSizeError) }
            return nil
        case .rstStream?: return try rstStream(stream, payload)
        case .settings?:
            try settings(flags, stream, payload)
            return nil
        case .pushPromise?: throw protocolError("a client may not send PUSH_PROMISE")
        case .ping?:
            guard stream == 0 else { throw protocolError("PING on stream \(stream)") }
            guard payload.readableBytes == 8 else { throw frameSizeError("PING of \(payload.readableBytes) bytes, not 8") }
            if flags & HTTP2.Flag.ack == 0 {
                var opaque = payload
                HTTP2.writeFrameHeader(&output, length: 8, type: .ping, flags: HTTP2.Flag.ack, stream: 0)
                output.writeBuffer(&opaque)
                controlFramesAnswered += 1
            }
            return nil
        case .goAway?:
            guard stream == 0 else { throw protocolError("GOAWAY on stream \(stream)") }
            guard payload.readableBytes >= 8 else { throw frameSizeError("GOAWAY of \(payload.readableBytes) bytes") }
            return .goAway
        case .windowUpdate?:
            return try windowUpdate(stream, payload)
        case nil:
            return nil // unknown frame types are ignored (RFC 9113 §5.5)
        }
    }

    private mutating func data(_ flags: UInt8, _ stream: UInt32, _ payload: ByteBuffer) throws(HTTP2.ConnectionError) -> Event? {
        guard stream != 0 else { throw protocolError("DATA on stream 0") }
        guard stream <= lastStreamID else { throw protocolError("DATA on stream \(stream), which was never opened") }
        // The whole frame counts against the windows, padding included, whatever happens to the stream.
        let length = payload.readableBytes
        connectionReceiveWindow -= length
        guard connectionReceiveWindow >= 0 else {
            throw HTTP2.ConnectionError(code: .flowControlError, message: "the peer sent more than the connection's window")
        }
        if connectionReceiveWindow <= Self.window / 2 {
            writeWindowUpdate(0, Self.window - connectionReceiveWindow)
            connectionReceiveWindow = Self.window
        }
        let bytes = try unpadded(flags, payload)
        guard let state = streams[stream] else { return nil } // a stream already closed: frames in flight are dropped
        guard !state.requestEnded else { return reset(stream, .streamClosed) }
        state.receiveWindow -= length
        guard state.receiveWindow >= 0 else { return reset(stream, .flowControlError) }
        let end = flags & HTTP2.Flag.endStream != 0
        if end {
            state.requestEnded = true
        } else if state.receiveWindow <= Self.window / 2 {
            writeWindowUpdate(stream, Self.window - state.receiveWindow)
            state.receiveWindow = Self.window
        }
        return .data(stream, bytes, endStream: end)
    }

    private mutating func headers(_ flags: UInt8, _ stream: UInt32, _ payload: ByteBuffer) throws(HTTP2.ConnectionError) -> Event? {
        guard stream != 0 else { throw protocolError("HEADERS on stream 0") }
        var block = try unpadded(flags, payload)
        if flags & HTTP2.Flag.priority != 0 {
            guard block.readableBytes >= 5 else { throw frameSizeError("HEADERS too short for its priority") }
            block.moveReaderIndex(forwardBy: 5)
        }
        guard flags & HTTP2.Flag.endHeaders != 0 else {
            headerBlock = (stream, flags, block)
            return nil
        }
        return try requestHeaders(flags, stream, block)
    }

    private mutating func continuation(_ flags: UInt8, _ stream: UInt32, _ payload: ByteBuffer) throws(HTTP2.ConnectionError) -> Event? {
        guard var pending = headerBlock else { throw protocolError("CONTINUATION without HEADERS before it") }
        var more = payload
        guard pending.block.readableBytes + more.readableBytes <= Self.maxHeaderBlock else {
            throw HTTP2.ConnectionError(code: .enhanceYourCalm, message: "a header block exceeds \(Self.maxHeaderBlock) bytes")
        }
        pending.block.writeBuffer(&more)
        guard flags & HTTP2.Flag.endHeaders != 0 else {
            headerBlock = pending
            return nil
        }
        headerBlock = nil
        return try requestHeaders(pending.flags, stream, pending.block)
    }

    /// A complete header block: a new stream's request, or an open stream's trailers, which end its request.
    private mutating func requestHeaders(_ flags: UInt8, _ stream: UInt32, _ block: ByteBuffer) throws(HTTP2.ConnectionError) -> Event? {
        // Decoded whatever becomes of the stream: the decoder's table must follow the peer's encoder.
        var block = block
        let headers: HPACKHeaders
        do {
            headers = try decoder.decodeHeaders(from: &block)
        } catch {
            throw HTTP2.ConnectionError(code: .compressionError, message: "the header block could not be decoded (\(error))")
        }
        let end = flags & HTTP2.Flag.endStream != 0
        guard stream > lastStreamID else {
            guard let state = streams[stream] else { return nil } // closed
            guard !state.requestEnded else { return reset(stream, .streamClosed) }
            guard end, Self.wellFormed(headers, trailers: true) else { return reset(stream, .protocolError) }
            state.requestEnded = true
            return .data(stream, ByteBuffer(), endStream: true)
        }
        guard stream & 1 == 1 else { throw protocolError("a client's stream \(stream) must have an odd id") }
        lastStreamID = stream
        if let goAwayStream, stream > goAwayStream { return nil }
        guard streams.count < Self.maxConcurrentStreams else {
            writeResetStream(stream, .refusedStream)
            return nil
        }
        guard Self.wellFormed(headers, trailers: false) else {
            writeResetStream(stream, .protocolError)
            return nil
        }
        streams[stream] = Stream(sendWindow: peerInitialWindow, requestEnded: end)
        return .request(stream, headers, endStream: end)
    }

    /// Whether a request's header block is well formed (RFC 9113 §8.2-8.3): names in lowercase; the pseudo-header
    /// fields first, each of `:method`, `:scheme` and `:path` (not empty) once, `:authority` at most once, no
    /// other; no connection-specific field, and `te` only as `trailers`. Trailers carry no pseudo-header field.
    /// A malformed request is a stream error (PROTOCOL_ERROR).
    static func wellFormed(_ headers: HPACKHeaders, trailers: Bool) -> Bool {
        var seen: UInt8 = 0, regular = false  // the pseudo-header fields seen, one bit each
        for (name, value, _) in headers {
            guard !name.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return false }
            if name.utf8.first == UInt8(ascii: ":") {
                let bit: UInt8
                switch name {
                case ":method": bit = 1
                case ":scheme": bit = 2
                case ":path" where !value.isEmpty: bit = 4
                case ":authority": bit = 8
                default: return false
                }
                guard !trailers, !regular, seen & bit == 0 else { return false }
                seen |= bit
                continue
            }
            regular = true
            switch name {
            case "connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade": return false
            case "te" where value != "trailers": return false
            default: continue
            }
        }
        return trailers || seen & 7 == 7
    }

    private mutating func rstStream(_ stream: UInt32, _ payload: ByteBuffer) throws(HTTP2.ConnectionError) -> Event? {
        guard stream != 0 else { throw protocolError("RST_STREAM on stream 0") }
        guard payload.readableBytes == 4 else { throw frameSizeError("RST_STREAM of \(payload.readableBytes) bytes, not 4") }
        guard stream <= lastStreamID else { throw protocolError("RST_STREAM on stream \(stream), which was never opened") }
        let now = NIODeadline.now()
        if now - resets.since > Self.resetPeriod { resets = (0, now) }
        resets.count += 1
        guard resets.count <= Self.maxResets else {
            throw HTTP2.ConnectionError(code: .enhanceYourCalm, message: "more than \(Self.maxResets) streams reset in \(Self.resetPeriod.nanoseconds / 1_000_000_000) s")
        }
        guard let state = streams.removeValue(forKey: stream) else { return nil }
        drop(state.queue)
        return .reset(stream)
    }

    private mutating func settings(_ flags: UInt8, _ stream: UInt32, _ payload: ByteBuffer) throws(HTTP2.ConnectionError) {
        guard stream == 0 else { throw protocolError("SETTINGS on stream \(stream)") }
        if flags & HTTP2.Flag.ack != 0 {
            guard payload.readableBytes == 0 else { throw frameSizeError("a SETTINGS acknowledgement with a payload") }
            return
        }
        guard payload.readableBytes % 6 == 0 else { throw frameSizeError("SETTINGS of \(payload.readableBytes) bytes, not a multiple of 6") }
        settingsReceived = true
        var payload = payload
        var windowGrew = false
        while let id = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            switch HTTP2.Setting(rawValue: id) {
            case .headerTableSize?:
                tableSizeUpdatePending = true
            case .enablePush?:
                guard value <= 1 else { throw protocolError("SETTINGS_ENABLE_PUSH of \(value)") }
            case .initialWindowSize?:
                guard value <= HTTP2.maxWindow else {
                    throw HTTP2.ConnectionError(code: .flowControlError, message: "SETTINGS_INITIAL_WINDOW_SIZE of \(value)")
                }
                // Every stream's window moves by the change, and may go below zero (RFC 9113 §6.9.2).
                let delta = Int(value) - peerInitialWindow
                peerInitialWindow = Int(value)
                for state in streams.values {
                    state.sendWindow += delta
                    guard state.sendWindow <= HTTP2.maxWindow else {
                        throw HTTP2.ConnectionError(code: .flowControlError, message: "a stream's window exceeds 2^31-1")
                    }
                }
                windowGrew = windowGrew || delta > 0
            case .maxFrameSize?:
                guard value >= HTTP2.defaultMaxFrameSize, value <= 0xFF_FFFF else {
                    throw protocolError("SETTINGS_MAX_FRAME_SIZE of \(value)")
                }
                peerMaxFrameSize = Int(value)
            default:
                break // the peer's limits on what it is sent that a gRPC server never reaches, and unknown settings
            }
        }
        HTTP2.writeFrameHeader(&output, length: 0, type: .settings, flags: HTTP2.Flag.ack, stream: 0)
        controlFramesAnswered += 1
        if windowGrew {
            for (id, state) in streams.sorted(by: { $0.key < $1.key }) where !state.queue.isEmpty { sendQueued(id, state) }
        }
    }

    private mutating func windowUpdate(_ stream: UInt32, _ payload: ByteBuffer) throws(HTTP2.ConnectionError) -> Event? {
        guard payload.readableBytes == 4 else { throw frameSizeError("WINDOW_UPDATE of \(payload.readableBytes) bytes, not 4") }
        let increment = Int(payload.getInteger(at: payload.readerIndex, as: UInt32.self)! & 0x7FFF_FFFF)
        if stream == 0 {
            guard increment > 0 else { throw protocolError("a WINDOW_UPDATE of 0 for the connection") }
            connectionSendWindow += increment
            guard connectionSendWindow <= HTTP2.maxWindow else {
                throw HTTP2.ConnectionError(code: .flowControlError, message: "the connection's window exceeds 2^31-1")
            }
            let waiting = waitingForConnection
            waitingForConnection = []
            for id in waiting { if let state = streams[id] { sendQueued(id, state) } }
            return nil
        }
        guard stream <= lastStreamID else { throw protocolError("WINDOW_UPDATE on stream \(stream), which was never opened") }
        guard let state = streams[stream] else { return nil }
        guard increment > 0 else { return reset(stream, .protocolError) }
        state.sendWindow += increment
        guard state.sendWindow <= HTTP2.maxWindow else { return reset(stream, .flowControlError) }
        sendQueued(stream, state)
        return nil
    }

    private func unpadded(_ flags: UInt8, _ payload: ByteBuffer) throws(HTTP2.ConnectionError) -> ByteBuffer {
        guard flags & HTTP2.Flag.padded != 0 else { return payload }
        var bytes = payload
        guard let padding = bytes.readInteger(as: UInt8.self), Int(padding) <= bytes.readableBytes else {
            throw protocolError("padding longer than its frame")
        }
        return bytes.readSlice(length: bytes.readableBytes - Int(padding))!
    }

    private func protocolError(_ message: String) -> HTTP2.ConnectionError {
        HTTP2.ConnectionError(code: .protocolError, message: message)
    }

    private func frameSizeError(_ message: String) -> HTTP2.ConnectionError {
        HTTP2.ConnectionError(code: .frameSizeError, message: message)
    }

    // MARK: Writing

    /// A stream's response headers.
    mutating func writeHeaders(_ stream: UInt32, _ block: ByteBuffer) {
        guard streams[stream] != nil else { return }
        writeHeaderBlock(stream, block, endStream: false)
    }

    /// Response bytes, sent as the peer's windows allow: the rest waits for its WINDOW_UPDATE frames. `promise`
    /// succeeds when the last of them is taken as output, fails if the stream ends first.
    mutating func writeData(_ stream: UInt32, _ bytes: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let state = streams[stream] else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        state.queue.append(.data(bytes, promise))
        queuedBytes += bytes.readableBytes
        if state.queue.count == 1 { sendQueued(stream, state) }
    }

    /// The trailers that end a stream's response, after its data. A request the peer is still sending is reset
    /// with NO_ERROR once the response is complete (RFC 9113 §8.1): nothing more of it is read.
    mutating func writeTrailers(_ stream: UInt32, _ block: ByteBuffer) {
        guard let state = streams[stream] else { return }
        state.queue.append(.trailers(block))
        if state.queue.count == 1 { sendQueued(stream, state) }
    }

    /// Ends a stream at once, with RST_STREAM; what waited for its window is dropped.
    mutating func reset(_ stream: UInt32, _ code: HTTP2.ErrorCode) -> Event? {
        writeResetStream(stream, code)
        guard let state = streams.removeValue(forKey: stream) else { return nil }
        drop(state.queue)
        return .reset(stream)
    }

    /// GOAWAY: no stream after the last one seen is served. With an error, the caller then closes.
    mutating func goAway(_ code: HTTP2.ErrorCode, _ message: String = "") {
        goAwayStream = lastStreamID
        HTTP2.writeFrameHeader(&output, length: 8 + message.utf8.count, type: .goAway, flags: 0, stream: 0)
        output.writeInteger(lastStreamID)
        output.writeInteger(code.rawValue)
        output.writeString(message)
    }

    /// The connection is gone: whatever waited for a window fails.
    mutating func close() {
        for state in streams.values { drop(state.queue) }
        streams = [:]
    }

    /// Writes what the stream's and the connection's windows let through, in order.
    private mutating func sendQueued(_ id: UInt32, _ state: Stream) {
        while !state.queue.isEmpty {
            switch state.queue[0] {
            case .data(var bytes, let promise):
                while bytes.readableBytes > 0 {
                    let size = min(bytes.readableBytes, peerMaxFrameSize, state.sendWindow, connectionSendWindow)
                    guard size > 0 else { break }
                    HTTP2.writeFrameHeader(&output, length: size, type: .data, flags: 0, stream: id)
                    var chunk = bytes.readSlice(length: size)!
                    output.writeBuffer(&chunk)
                    state.sendWindow -= size
                    connectionSendWindow -= size
                    queuedBytes -= size
                }
                guard bytes.readableBytes == 0 else {
                    state.queue[0] = .data(bytes, promise)
                    if state.sendWindow > 0, !waitingForConnection.contains(id) { waitingForConnection.append(id) }
                    return
                }
                if let promise { outputPromises.append(promise) }
                state.queue.removeFirst()
            case .trailers(let block):
                streams[id] = nil
                writeHeaderBlock(id, block, endStream: true)
                if !state.requestEnded { writeResetStream(id, .noError) }
                return
            }
        }
    }

    /// A header block in HEADERS and as many CONTINUATION frames as the peer's frame size needs.
    private mutating func writeHeaderBlock(_ stream: UInt32, _ block: ByteBuffer, endStream: Bool) {
        var block = block
        if tableSizeUpdatePending {
            // Responses never index, so the table they use is empty: size 0 suits any size the peer set.
            tableSizeUpdatePending = false
            var sized = ByteBuffer(integer: UInt8(0x20))
            sized.writeBuffer(&block)
            block = sized
        }
        var type = HTTP2.FrameType.headers
        repeat {
            let size = min(block.readableBytes, peerMaxFrameSize)
            var fragment = block.readSlice(length: size)!
            var flags: UInt8 = block.readableBytes == 0 ? HTTP2.Flag.endHeaders : 0
            if type == .headers, endStream { flags |= HTTP2.Flag.endStream }
            HTTP2.writeFrameHeader(&output, length: size, type: type, flags: flags, stream: stream)
            output.writeBuffer(&fragment)
            type = .continuation
        } while block.readableBytes > 0
    }

    private mutating func writeResetStream(_ stream: UInt32, _ code: HTTP2.ErrorCode) {
        HTTP2.writeFrameHeader(&output, length: 4, type: .rstStream, flags: 0, stream: stream)
        output.writeInteger(code.rawValue)
    }

    private mutating func writeWindowUpdate(_ stream: UInt32, _ increment: Int) {
        HTTP2.writeFrameHeader(&output, length: 4, type: .windowUpdate, flags: 0, stream: stream)
        output.writeInteger(UInt32(increment))
    }

    private mutating func writeSettings() {
        let settings: [(HTTP2.Setting, Int)] = [
            (.maxConcurrentStreams, Self.maxConcurrentStreams),
            (.initialWindowSize, Self.window),
            (.maxHeaderListSize, Self.maxHeaderListSize),
        ]
        HTTP2.writeFrameHeader(&output, length: 6 * settings.count, type: .settings, flags: 0, stream: 0)
        for (setting, value) in settings {
            output.writeInteger(setting.rawValue)
            output.writeInteger(UInt32(value))
        }
    }

    /// A closed stream's waiting data: no longer counted, its promises failed.
    private mutating func drop(_ queue: [Pending]) {
        for case .data(let bytes, let promise) in queue {
            queuedBytes -= bytes.readableBytes
            promise?.fail(ChannelError.ioOnClosedChannel)
        }
    }
}

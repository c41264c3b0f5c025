import GRPCCore
import HearthCore
import HearthEngine
import HearthFirestoreProtos
import NIOCore
import SwiftProtobuf
import Synchronization

/// Listen streams served on the connection's event loop, as the WebSocket endpoint serves its listeners: the
/// client's requests are parsed as they arrive and handed to the stream's feed connection, and the feed's events
/// are encoded and written from the loop when the connection says they are ready; no task per stream.
///
/// Backpressure: a stream's events are taken only while the socket is writable (NIO's high water mark) and less
/// than `maxUnwrittenListenBytes` of the connection's responses wait for the peer's HTTP/2 windows (held in
/// memory for a peer that does not read; counted per connection, since one connection may open many streams).
/// Until then they stay in each stream's bounded queue, where later snapshots of a target merge into waiting
/// ones and a full queue ends the stream; writing resumes when the socket drains or the peer opens its windows.
extension FirestoreWireHandler {
    /// One Listen stream's state. Used only on the connection's loop.
    final class WireListen {
        let stream: ListenStream
        /// Ends the stream when the caller's access token expires.
        var expiry: Scheduled<Void>?

        init(stream: ListenStream) { self.stream = stream }

        var connection: ListenConnection { stream.connection }

        /// The stream is over: its feed connection drops its targets.
        func end() {
            expiry?.cancel()
            expiry = nil
            connection.close()
        }
    }

    /// NIO's default high water mark, which bounds a WebSocket listener's socket the same way: a larger budget
    /// only queues snapshots that would otherwise merge while they wait, and delivers them later.
    static let maxUnwrittenListenBytes = 64 << 10

    /// Opens a Listen stream: the caller is decided first (refused trailers-only), then a feed connection is
    /// opened and the response headers go out.
    func startListen(_ id: StreamID, _ authorization: String?) {
        guard let context, let readyListens else { return }
        let caller: FirestoreCaller
        do {
            caller = try service.authenticate(authorization)
        } catch {
            return trailersOnly(id, FirestoreStatus.rpcError(error, logger: logger))
        }
        let connection = service.feed.connect(identity: caller.identity, session: caller.session, expires: caller.expires)
        let listen = WireListen(stream: ListenStream(connection: connection))
        var call = Call(method: .listen, authorization: nil)
        call.listen = listen
        calls[id] = call
        sendHeaders(id)
        endWrite()
        if let expires = caller.expires {
            // A user's access token ends the stream when it expires (the client reopens it with a fresh token and
            // resumes), as it ends a WebSocket listener.
            let left = ContinuousClock.now.duration(to: expires).components
            let nanoseconds = max(0, left.seconds * 1_000_000_000 + left.attoseconds / 1_000_000_000)
            listen.expiry = context.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
                connection.terminate(.unauthenticated("the access token expired; reopen the stream with a fresh one and resume"),
                                     closeCode: 1008)
            }
        }
        // Held strongly, as a WebSocket's writer is: the connection lets the callback go when the stream ends, and
        // every stream ends when the channel does (a weak reference would make every retain of the handler slow).
        connection.onEventsReady { [readyListens, self] in readyListens.schedule(self, id) }
    }

    /// The client's request messages, in order: each is handed to the stream; a bad one ends it.
    func listenRequests(_ id: StreamID, _ messages: [ByteBuffer]) {
        for bytes in messages {
            guard let listen = calls[id]?.listen else { return }
            let request: Google_Firestore_V1_ListenRequest
            do {
                request = try Google_Firestore_V1_ListenRequest(serializedBytes: Array(bytes.readableBytesView))
            } catch {
                return endListen(id, RPCError(code: .invalidArgument, message: "Can't deserialize to message of type ListenRequest."))
            }
            do {
                writeListen(id, [try ListenStream.encoded(listen.stream.receive(request))])
            } catch {
                return endListen(id, FirestoreStatus.rpcError(error, logger: logger))
            }
        }
        endWrite()
    }

    /// Writes the ready events of the streams named (those the peer has caught up on), then flushes once.
    func drainListens(_ ids: [StreamID]) {
        for id in ids { drainListen(id) }
        endWrite()
    }

    /// Writes what the stream's connection has queued while the peer takes it.
    func drainListen(_ id: StreamID) {
        guard let context, let listen = calls[id]?.listen else { return }
        while true {
            let writable = listensMayWrite
            let (events, finished) = listen.connection.takeReady(writable: writable)
            if events.isEmpty {
                if finished { endListen(id, nil) } else if !writable { blockedListens.insert(id) }
                return
            }
            var encoded: [SharedEncodings.Encoded] = []
            encoded.reserveCapacity(events.count)
            do {
                for event in events { encoded.append(try listen.stream.encoded(event)) }
            } catch {
                writeListen(id, encoded)
                return endListen(id, FirestoreStatus.rpcError(error, logger: logger))
            }
            writeListen(id, encoded)
            if finished { return endListen(id, nil) }
        }
    }

    /// The streams that were left behind, once the socket drains.
    func resumeListens() {
        guard !blockedListens.isEmpty else { return }
        let blocked = Array(blockedListens)
        blockedListens = []
        drainListens(blocked)
    }

    /// Writes a stream's encoded responses (length-prefixed messages), each event's as one piece of data (framed
    /// to the peer's frame size and window): a peer parses one frame per snapshot, not one per message. The bytes
    /// are shared by the view's listeners; each is copied once, into the connection's output.
    func writeListen(_ id: StreamID, _ encoded: [SharedEncodings.Encoded]) {
        for part in encoded where part.messages > 0 { connection.writeData(id, part.bytes, promise: nil) }
    }

    /// Whether Listen responses may be taken: the socket is writable and less than `maxUnwrittenListenBytes`
    /// wait for the peer's HTTP/2 windows.
    var listensMayWrite: Bool {
        channel?.isWritable == true && connection.queuedBytes < Self.maxUnwrittenListenBytes
    }

    /// Ends a stream with its status: OK when the client half-closed or the connection finished without an error.
    func endListen(_ id: StreamID, _ error: RPCError?) {
        calls[id]?.listen?.end()
        finish(id, error)
    }
}

/// The Listen streams of one event loop's connections that have events to write: however many the feed makes
/// ready at once, the loop is handed one task that writes them all, and each connection flushes once.
final class ReadyListens: Sendable {
    private let state = Mutex<(ready: [(FirestoreWireHandler, FirestoreWireHandler.StreamID)], scheduled: Bool)>(([], false))
    let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    /// Writes the stream's events on the loop soon, with the others waiting.
    func schedule(_ handler: FirestoreWireHandler, _ id: FirestoreWireHandler.StreamID) {
        let start = state.withLock { state in
            state.ready.append((handler, id))
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if start { eventLoop.execute { self.run() } }
    }

    private func run() {
        let ready = state.withLock { state in
            defer { state = ([], false) }
            return state.ready
        }
        var written: [FirestoreWireHandler] = []
        for (handler, id) in ready {
            handler.drainListen(id)
            if !handler.drainedInPass {
                handler.drainedInPass = true
                written.append(handler)
            }
        }
        for handler in written {
            handler.drainedInPass = false
            handler.endWrite()
        }
    }
}

import HearthCore
import NIOCore
import Synchronization

/// What the feed tells a connection.
public enum ListenEvent: Sendable {
    /// A target's snapshot.
    case snapshot(ListenSnapshot)
    /// A target ended with an error (denied, invalid, failed); the connection stays open.
    case targetError(id: String, error: HearthError)
    /// The answer to a `ping`.
    case pong
    /// A message was refused (malformed, unknown, over a limit, denied); the connection stays usable.
    case requestError(id: String?, error: HearthError)
    /// The connection must end: revoked, too slow, or the server is stopping. `closeCode` is the WebSocket
    /// close code to send.
    case closed(error: HearthError, closeCode: UInt16)
}

/// One target's snapshot: its changes since the previous one, and the position it reflects.
public struct ListenSnapshot: Sendable {
    /// The target's id, as the client named it.
    public var targetID: String
    /// True for the first snapshot of a target (its whole result, or what changed since the resume token).
    public var initial: Bool
    /// True when the client must drop its view first: the log no longer reached back to the resume token.
    public var reset: Bool
    /// The changes, in order.
    public var changes: [ViewChange]
    /// The changes as a JSON array, encoded once for every listener of the view.
    public var changesJSON: [UInt8]
    /// The committed state the client's view now equals.
    public var position: LogPosition
    /// Which listen of `targetID` this is for (an id may be reused after `unlisten`).
    var serial: Int
    /// The whole frame, when it was encoded once for every listener of the view that names the target alike.
    public var frame: [UInt8]?
    /// Other faces' encodings of this snapshot (a gRPC stream's responses), made by the first listener of the view
    /// that needs one and kept for the others; nil for a snapshot of one listener's own.
    public var encodings: SharedEncodings?
    /// The view before and after `changes`, so that a later snapshot can be merged into this one while it
    /// waits to be sent; nil for first and reset snapshots, which are never merged.
    var states: SnapshotStates?
    /// For a resumed target's first snapshot: how many documents its result holds after `changes`, which
    /// Firestore's clients check against their view (an existence filter) to catch a document they missed.
    public var resumedCount: Int?

    /// The time of `position`, as `readTime`.
    public var readTime: Timestamp { position.commitTime }
    /// The token that resumes from here.
    public var resumeToken: String { position.resumeToken }

    /// The snapshot frame (docs/api.md, Live updates): `frame` when encoded already, or encoded now.
    public func encodedFrame() -> [UInt8] {
        if let frame { return frame }
        var w = JSONWriter(capacity: changesJSON.count + 160)
        write(to: &w)
        return w.bytes
    }

    /// Writes the snapshot frame (docs/api.md, Live updates).
    public func write(to w: inout JSONWriter) {
        w.raw("{\"type\":\"snapshot\",\"id\":")
        w.string(targetID)
        w.raw(initial ? ",\"initial\":true" : ",\"initial\":false")
        if reset { w.raw(",\"reset\":true") }
        w.raw(",\"changes\":")
        w.raw(changesJSON)
        w.raw(",\"readTime\":\"")
        w.rfc3339(readTime)
        w.raw("\",\"resumeToken\":")
        w.string(resumeToken)
        w.raw("}")
    }
}

/// A snapshot's encodings, shared by every listener of its view: each made once, on the first listener's loop
/// that asks, keyed by what it depends on besides the snapshot (the database and the target id as the client
/// named them; only the gRPC face encodes this way, the WebSocket's frame is the snapshot's own). The bytes are a `ByteBuffer`, so every listener is handed the same storage, not a copy.
public final class SharedEncodings: Sendable {
    /// An encoding: its bytes, and how many messages they hold.
    public struct Encoded: Sendable {
        public var messages: Int
        public var bytes: ByteBuffer

        public init(messages: Int, bytes: ByteBuffer) { (self.messages, self.bytes) = (messages, bytes) }
    }

    /// What an encoding depends on besides the snapshot: strings a listener holds already, so a lookup
    /// allocates nothing.
    public struct Key: Hashable, Sendable {
        public let database: String
        public let target: String

        public init(database: String, target: String) { (self.database, self.target) = (database, target) }
    }

    private let byKey = Mutex<[Key: Encoded]>([:])

    public init() {}

    /// The encoding kept under `key`, or `encode`'s, kept for the next listener (up to 64 keys). Encoded outside
    /// the lock: two loops asking at once may both encode, and the second result is the one kept.
    public func encoded(_ key: Key, _ encode: () throws -> Encoded) rethrows -> Encoded {
        if let kept = byKey.withLock({ $0[key] }) { return kept }
        let made = try encode()
        byKey.withLock { if $0.count < 64 { $0[key] = made } }
        return made
    }
}

/// A view's result before and after one snapshot's changes, shared by every listener of the view.
final class SnapshotStates: Sendable {
    let target: ListenTarget
    let before: [Document]
    let after: [Document]

    init(target: ListenTarget, before: [Document], after: [Document]) {
        self.target = target
        self.before = before
        self.after = after
    }
}

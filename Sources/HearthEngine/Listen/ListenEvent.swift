import HearthCore
import HearthStore

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

    /// The time of `position`, as `readTime`.
    public var readTime: Timestamp { position.commitTime }
    /// The token that resumes from here.
    public var resumeToken: String { position.resumeToken }

    /// Writes the snapshot frame of DESIGN §6.
    public func write(to w: inout JSONWriter) {
        w.raw("{\"type\":\"snapshot\",\"id\":")
        w.string(targetID)
        w.raw(initial ? ",\"initial\":true" : ",\"initial\":false")
        if reset { w.raw(",\"reset\":true") }
        w.raw(",\"changes\":")
        w.raw(changesJSON)
        w.raw(",\"readTime\":\"")
        w.raw(readTime.rfc3339)
        w.raw("\",\"resumeToken\":")
        w.string(resumeToken)
        w.raw("}")
    }
}

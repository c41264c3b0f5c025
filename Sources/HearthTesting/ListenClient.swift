import Foundation
import HearthCore
import HearthEngine
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import NIOWebSocket

/// A client of the listen protocol (`GET /v1/listen`) for tests and benchmarks: sends messages, receives
/// frames in order, and keeps each target's materialized view as the snapshots describe it.
public final class ListenClient: @unchecked Sendable {
    /// How the client presents credentials.
    public enum Credentials: Sendable {
        /// None in the upgrade request (send an `auth` message, or stay anonymous).
        case none
        /// `Authorization: Bearer <token>`.
        case header(String)
        /// `?token=<token>` in the URL.
        case query(String)
    }

    /// A failure of the test client itself.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened.
        public var description: String

        /// Makes a failure.
        public init(description: String) { self.description = description }
    }

    private let lock = NSLock()
    private var frames: [JSON] = []
    private var waiter: CheckedContinuation<Void, Never>?
    private var outbound: WebSocketOutboundWriter?
    private var connected: CheckedContinuation<Void, any Error>?
    private var finished = false
    /// The close frame the server sent, once the connection ended.
    public private(set) var closeCode: Int?
    private var task: Task<Void, Never>?
    /// Each target's view after the snapshots received so far (`apply`).
    public private(set) var views: [String: [Document]] = [:]
    /// Each target's last snapshot position (`readTime`, `resumeToken`).
    public private(set) var positions: [String: (readTime: Timestamp, resumeToken: String)] = [:]

    /// Whether snapshots are applied to `views` (a load generator only needs the frames).
    let tracksViews: Bool
    /// Receives every frame as it arrives, instead of queueing it for `next` (a load generator's cheap path).
    let onFrame: (@Sendable (JSON) -> Void)?

    init(tracksViews: Bool, onFrame: (@Sendable (JSON) -> Void)?) {
        self.tracksViews = tracksViews
        self.onFrame = onFrame
    }

    /// Connects to a server on loopback; returns once the upgrade is done. With `onFrame`, every frame goes to
    /// it on the connection's reading task as it arrives and `next` never returns one (nor are views tracked):
    /// a load generator measuring delivery then pays for no queue, wake-up or timer per frame.
    public static func connect(port: Int, credentials: Credentials = .none, maxFrameSize: Int = 1 << 20,
                               tracksViews: Bool = true, onFrame: (@Sendable (JSON) -> Void)? = nil) async throws -> ListenClient {
        let client = ListenClient(tracksViews: tracksViews && onFrame == nil, onFrame: onFrame)
        try await client.start(port: port, credentials: credentials, maxFrameSize: maxFrameSize)
        return client
    }

    private func start(port: Int, credentials: Credentials, maxFrameSize: Int) async throws {
        var url = "ws://127.0.0.1:\(port)/v1/listen"
        var configuration = WebSocketClientConfiguration(maxFrameSize: maxFrameSize)
        switch credentials {
        case .none: break
        case .header(let token): configuration.additionalHeaders[.authorization] = "Bearer \(token)"
        case .query(let token): url += "?token=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)
        }
        let logger = Logger(label: "hearth.listen-client")
        let (target, settings) = (url, configuration)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            lock.withLock { connected = continuation }
            let task = Task { [self] in
                do {
                    let close = try await WebSocketClient.connect(url: target, configuration: settings, logger: logger) { inbound, outbound, _ in
                        self.lock.withLock { self.outbound = outbound }
                        self.resumeConnected(nil)
                        for try await message in inbound.messages(maxSize: 64 << 20) {
                            guard case .text(let text) = message, let json = try? JSON.parse(text) else { continue }
                            if let onFrame = self.onFrame { onFrame(json) } else { self.received(json) }
                        }
                    }
                    self.lock.withLock { self.closeCode = close.map { Int(UInt16(webSocketErrorCode: $0.closeCode)) } }
                    self.resumeConnected(Failure(description: "the server did not upgrade the connection"))
                } catch {
                    self.resumeConnected(error)
                }
                self.end()
            }
            lock.withLock { self.task = task }
        }
    }

    private func resumeConnected(_ error: (any Error)?) {
        let c = lock.withLock { () -> CheckedContinuation<Void, any Error>? in
            defer { connected = nil }
            return connected
        }
        if let error { c?.resume(throwing: error) } else { c?.resume() }
    }

    private func received(_ frame: JSON) {
        let w = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            frames.append(frame)
            defer { waiter = nil }
            return waiter
        }
        w?.resume()
    }

    private func end() {
        let w = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            finished = true
            defer { waiter = nil }
            return waiter
        }
        w?.resume()
    }

    /// True once the server closed the connection.
    public var isClosed: Bool { lock.withLock { finished } }

    /// Sends a text message as is.
    public func send(_ text: String) async throws {
        guard let outbound = lock.withLock({ outbound }) else { throw Failure(description: "not connected") }
        try await outbound.writeTextMessage(text)
    }

    /// Sends `{"type": "listen", "id", "doc"}`.
    public func listen(_ id: String, doc path: String, resumeToken: String? = nil) async throws {
        try await send(Self.listenMessage(id, key: "doc", value: quote(path), resumeToken: resumeToken))
    }

    /// Sends `{"type": "listen", "id", "query"}` with the query's JSON text.
    public func listen(_ id: String, query json: String, resumeToken: String? = nil) async throws {
        try await send(Self.listenMessage(id, key: "query", value: json, resumeToken: resumeToken))
    }

    static func listenMessage(_ id: String, key: String, value: String, resumeToken: String?) -> String {
        var text = "{\"type\":\"listen\",\"id\":\(quote(id)),\"\(key)\":\(value)"
        if let resumeToken { text += ",\"resumeToken\":\(quote(resumeToken))" }
        return text + "}"
    }

    /// Sends `{"type": "unlisten", "id"}`.
    public func unlisten(_ id: String) async throws {
        forget(id)
        try await send("{\"type\":\"unlisten\",\"id\":\(quote(id))}")
    }

    /// The next frame, in arrival order; fails after `timeout` or when the connection ended.
    public func next(timeout: Duration = .seconds(30)) async throws -> JSON {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (frame, done) = lock.withLock { () -> (JSON?, Bool) in
                if !frames.isEmpty { return (frames.removeFirst(), false) }
                return (nil, finished)
            }
            if let frame {
                if tracksViews && frame["type"]?.stringValue == "snapshot" { try apply(frame) }
                return frame
            }
            if done { throw Failure(description: "the connection closed (code \(closeCode.map(String.init) ?? "none"))") }
            if ContinuousClock.now >= deadline { throw Failure(description: "no frame within \(timeout)") }
            await waitForFrame(until: deadline)
        }
    }

    private func waitForFrame(until deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    let ready = self.lock.withLock { () -> Bool in
                        if !self.frames.isEmpty || self.finished { return true }
                        self.waiter = c
                        return false
                    }
                    if ready { c.resume() }
                }
            }
            group.addTask {
                try? await Task.sleep(until: deadline)
                let w = self.lock.withLock { () -> CheckedContinuation<Void, Never>? in
                    defer { self.waiter = nil }
                    return self.waiter
                }
                w?.resume()
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// The next frame of a type (and target id, when given), skipping nothing: fails if another frame comes first.
    @discardableResult
    public func expect(_ type: String, id: String? = nil, timeout: Duration = .seconds(30)) async throws -> JSON {
        let frame = try await next(timeout: timeout)
        guard frame["type"]?.stringValue == type, id == nil || frame["id"]?.stringValue == id else {
            throw Failure(description: "expected a \(type) frame\(id.map { " for \($0)" } ?? ""), got \(String(decoding: frame.serialized(), as: UTF8.self))")
        }
        return frame
    }

    /// True when no frame arrives within `wait`.
    public func isQuiet(for wait: Duration = .milliseconds(200)) async -> Bool {
        do {
            _ = try await next(timeout: wait)
            return false
        } catch {
            return true
        }
    }

    /// Applies a snapshot frame to its target's view, checking every index.
    func apply(_ frame: JSON) throws {
        guard let id = frame["id"]?.stringValue, case .array(let items)? = frame["changes"],
              let readTime = frame["readTime"]?.stringValue.flatMap(Timestamp.init(rfc3339:)),
              let token = frame["resumeToken"]?.stringValue else {
            throw Failure(description: "malformed snapshot \(String(decoding: frame.serialized(), as: UTF8.self))")
        }
        var changes: [ViewChange] = []
        for item in items {
            guard let kind = item["type"]?.stringValue.flatMap(ViewChange.Kind.init(rawValue:)), let doc = item["doc"],
                  case .int(let oldIndex)? = item["oldIndex"], case .int(let newIndex)? = item["newIndex"] else {
                throw Failure(description: "malformed change \(String(decoding: item.serialized(), as: UTF8.self))")
            }
            changes.append(ViewChange(kind: kind, document: try Self.document(doc), oldIndex: Int(oldIndex), newIndex: Int(newIndex)))
        }
        try lock.withLock { () throws in
            let base = frame["reset"] == .bool(true) || frame["initial"] == .bool(true) && frame["reset"] == nil && views[id] == nil
                ? [] : (views[id] ?? [])
            guard let view = ViewChange.apply(changes, to: base) else {
                throw Failure(description: "snapshot for \(id) does not apply to the view: \(String(decoding: frame.serialized(), as: UTF8.self))")
            }
            views[id] = view
            positions[id] = (readTime, token)
        }
    }

    /// Forgets a target's view (before listening again under the same id without resuming).
    public func forget(_ id: String) {
        lock.withLock {
            views[id] = nil
            positions[id] = nil
        }
    }

    /// Sets a target's view, as a client resuming with a token holds it.
    public func restore(_ id: String, view: [Document]) {
        lock.withLock { views[id] = view }
    }

    /// A document from its wire form.
    public static func document(_ json: JSON) throws -> Document {
        guard let pathText = json["path"]?.stringValue, let data = json["data"],
              let create = json["createTime"]?.stringValue.flatMap(Timestamp.init(rfc3339:)),
              let update = json["updateTime"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) else {
            throw Failure(description: "malformed document \(String(decoding: json.serialized(), as: UTF8.self))")
        }
        return Document(path: try DocumentPath(pathText), fields: try Value.decodeFields(data), createTime: create, updateTime: update)
    }

    /// Closes the connection and waits for it to end.
    public func close() async {
        if let outbound = lock.withLock({ outbound }) { try? await outbound.close(.normalClosure, reason: nil) }
        await lock.withLock({ task })?.value
    }
}

func quote(_ s: String) -> String {
    var w = JSONWriter()
    w.string(s)
    return String(decoding: w.bytes, as: UTF8.self)
}

import Foundation
import HearthCore

/// Answers one delivery, without HTTP: verifies the signature, reads the event, runs its handler and makes
/// the answer. `FunctionsServer` is this over Hummingbird.
public struct FunctionsResponder: Sendable {
    /// An answer: its status and JSON body (empty for `204`).
    public struct Answer: Sendable {
        /// The HTTP status.
        public var status: Int
        /// The JSON body; empty for `204`.
        public var body: [UInt8]
    }

    let verifier: WebhookVerifier
    let functions: Functions

    /// Serves `functions` to deliveries signed with `secret` (`whsec_...`, the endpoint's in the functions file).
    public init(secret: String, functions: Functions) throws(FunctionsError) {
        verifier = try WebhookVerifier(secret: secret)
        self.functions = functions
    }

    /// The answer to a delivery; `header` gives a request header by its lower-case name.
    ///
    /// - `401` when the signature or its timestamp is refused: no handler runs.
    /// - `400` when the body is not an event, `404` when no handler takes it (Hearth retries both, then keeps the
    ///   event as dead with this answer as its reason).
    /// - `500` with the error when the handler throws: Hearth delivers the event again later.
    /// - `200 {"writes": [...]}` when the handler returns writes, `204` when it returns none.
    public func answer(header: (String) -> String?, body: [UInt8], now: Date = Date()) async -> Answer {
        do {
            try verifier.verify(id: header("webhook-id"), timestamp: header("webhook-timestamp"),
                                signature: header("webhook-signature"), body: body, now: now)
        } catch {
            return Self.error(401, error.message)
        }
        let event: FunctionEvent
        do {
            event = try FunctionEvent(body: body)
        } catch {
            return Self.error(400, error.message)
        }
        guard let (handler, bound) = functions.match(event) else {
            let path = event.document?.path ?? event.file?["path"]?.stringValue
            return Self.error(404, "no handler for the \(event.type) event '\(event.name)'" + (path.map { " at \($0)" } ?? "")
                              + " (handlers: \(functions.summary))")
        }
        do {
            let writes = try await handler(bound)
            return writes.isEmpty ? Answer(status: 204, body: []) : Answer(status: 200, body: FunctionWrite.answer(writes))
        } catch {
            return Self.error(500, "the handler of '\(event.name)' failed: \(error)")
        }
    }

    static func error(_ status: Int, _ message: String) -> Answer {
        var w = JSONWriter()
        w.raw("{\"error\":")
        w.string(message)
        w.raw("}")
        return Answer(status: status, body: w.bytes)
    }
}

import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The bookkeeping of `InlineAnswerHandler` as a plain value: which requests a connection answers itself,
/// what waits while an answer is awaited, and when the connection may read on or quiesce. The handler
/// carries out what it says; tests drive it with request parts alone.
///
/// The rules: a request is taken (`Take`) only when no routed request is unanswered, so that pipelined
/// answers keep their order; its body is held up to the kind's limit, past which it is passed to the router
/// with the rest of the request; while an answer is awaited from another thread, every part that arrives
/// waits, as does a request to quiesce, and the connection reads nothing more; while the connection cannot
/// write, it reads nothing more either.
struct InlineAnswerState<Take: Sendable>: Sendable {
    /// What to do with a request part.
    enum Action {
        /// Pass it on to the router.
        case forward
        /// Keep it; it is taken up again once the awaited answer is written (`answered`).
        case hold
        /// Nothing: it belongs to a request taken here, whose end has not come.
        case keep
        /// Pass the taken request on to the router whole so far (its head, then the body held, if any); what
        /// comes after goes on to the router too.
        case route(Take, HTTPRequest, ByteBuffer?)
        /// The taken request is whole: answer it (or route it with its end, see `routeEnded`).
        case answer(Take, HTTPRequest, ByteBuffer?)
    }

    /// Decides whether a head starts a request answered here, and how large a body it may hold.
    let takes: @Sendable (HTTPRequest) -> (Take, maxBody: Int?)?

    /// Requests passed to the router whose answers have not ended yet.
    private(set) var routed = 0
    /// The request being received here (its head has come, its end not yet), its body limit (nil: the body
    /// is ignored, as the router ignores a read's), and the body so far.
    private var taking: (take: Take, head: HTTPRequest, maxBody: Int?, body: ByteBuffer?)?
    /// Whether an answer is awaited from another thread.
    private(set) var awaiting = false
    /// Parts that arrived while an answer was awaited.
    private var held: [HTTPRequestPart] = []
    /// A read the connection asked for while it could not take one.
    private var readHeld = false
    /// A request to quiesce that came while a request was being answered here.
    private(set) var quiesceHeld = false

    init(takes: @escaping @Sendable (HTTPRequest) -> (Take, maxBody: Int?)?) {
        self.takes = takes
    }

    /// A part of a request arrived.
    mutating func received(_ part: HTTPRequestPart) -> Action {
        if awaiting {
            held.append(part)
            return .hold
        }
        switch part {
        case .head(let head):
            if routed == 0, let (take, maxBody) = takes(head) {
                taking = (take, head, maxBody, nil)
                return .keep
            }
            routed += 1
            return .forward
        case .body(let piece):
            guard var request = taking else { return .forward }
            guard let maxBody = request.maxBody else { return .keep }
            if request.body == nil { request.body = piece } else { request.body!.writeImmutableBuffer(piece) }
            guard request.body!.readableBytes > maxBody else {
                taking = request
                return .keep
            }
            // Too large to hold here: the router reads it, and the rest of it, as it arrives.
            taking = nil
            routed += 1
            return .route(request.take, request.head, request.body)
        case .end:
            guard let request = taking else { return .forward }
            taking = nil
            return .answer(request.take, request.head, request.body)
        }
    }

    /// A request whose end came (`answer`) goes to the router after all: its head, body and end are passed on.
    mutating func routeEnded() {
        routed += 1
    }

    /// The answer to the request just ended will come from another thread.
    mutating func awaitAnswer() {
        awaiting = true
    }

    /// The awaited answer was written: the parts that waited, to take again in order (`received` holds any
    /// that come after another awaited answer begins).
    mutating func answered() -> [HTTPRequestPart] {
        awaiting = false
        defer { held = [] }
        return held
    }

    /// A routed request's answer ended.
    mutating func routedAnswerEnded() {
        routed -= 1
    }

    /// The connection asks to read; true when it may now.
    mutating func readAsked(writable: Bool) -> Bool {
        if !awaiting && writable { return true }
        readHeld = true
        return false
    }

    /// True when a read asked for earlier may go on now.
    mutating func mayReadAgain(writable: Bool) -> Bool {
        guard readHeld, !awaiting, writable else { return false }
        readHeld = false
        return true
    }

    /// A request to quiesce (graceful shutdown) arrived; true when it may pass on now, false when it waits for
    /// the request answered here.
    mutating func quiesceAsked() -> Bool {
        if awaiting || taking != nil {
            quiesceHeld = true
            return false
        }
        return true
    }

    /// True when a request to quiesce that waited may pass on now.
    mutating func mayQuiesce() -> Bool {
        guard quiesceHeld, !awaiting, taking == nil else { return false }
        quiesceHeld = false
        return true
    }
}

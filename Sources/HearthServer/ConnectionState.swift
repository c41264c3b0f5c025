import NIOCore

/// What an HTTP/1 connection is waiting for and since when, as `ConnectionGuard` sees it: the requests
/// received, the answers owed for them, and which timeout of `ConnectionConfiguration` runs now. A plain
/// value told what happens and asked what to do, with an injected clock, so it is tested without sockets.
///
/// Time counts against the client only while it is the client's turn: a head or body stops counting while
/// answers to earlier requests are owed (the server may hold back reading then), and only the idle timeout
/// runs while the client does not collect its answers.
struct ConnectionState<C: Clock> where C.Duration == Duration {
    /// Where the connection is in receiving requests.
    enum Receiving: Equatable {
        /// Between requests, since this instant: nothing of a next request has come.
        case between(since: C.Instant)
        /// Some bytes of a request head have come, the first at this instant.
        case head(since: C.Instant)
        /// A head has come and its body is arriving; bytes last came at this instant.
        case body(since: C.Instant)
        /// The connection is being closed: nothing more is decided.
        case closing
    }

    /// How one request's answer is framed.
    struct Framing: Equatable {
        /// The request was HTTP/1.0, so its answer's status line is too.
        var http10: Bool
        /// The connection closes after this answer (`Connection: close`, or HTTP/1.0 without keep-alive).
        var closes: Bool
        /// The request's `Origin`, kept only when CORS is configured: the answer's CORS headers depend on it.
        var origin: String? = nil

        /// The framing of an answer to a request whose head never arrived whole.
        static var unknownRequest: Framing { Framing(http10: false, closes: true) }
    }

    /// What to do when the timer fires.
    enum Expiry: Equatable {
        /// Nothing has run out: look again then.
        case lookAgain(at: C.Instant)
        /// Close the connection without a word (idle, or an answer already under way).
        case close
        /// Answer `408` (`head`: the head did not arrive in time; otherwise the body stalled), then close.
        case requestTimeout(Framing, head: Bool)
    }

    /// What to do once an answer has ended.
    enum AfterAnswer: Equatable {
        case keepOpen
        /// The request asked to close the connection after its answer.
        case close
        /// A malformed request waited for this answer: answer it `400` now, then close.
        case refuseMalformed(Framing)
    }

    /// What to do about a request the decoder refused.
    enum Malformed: Equatable {
        /// Answer `400` now, then close.
        case refuseNow(Framing)
        /// Answers to earlier requests go first; `answerEnded` says when.
        case afterOwedAnswers
        /// The connection is closing already.
        case ignore
    }

    let configuration: ConnectionConfiguration
    let clock: C
    private(set) var receiving: Receiving
    /// How the requests received and not answered yet want their answers framed, oldest first.
    private(set) var owed = CircularBuffer<Framing>(initialCapacity: 4)
    /// Whether an answer has begun (its head is written) and not ended.
    private(set) var answering = false
    /// Whether a request part has come since the last read from the socket completed.
    private var partsSinceRead = false
    /// Since when the client has not collected its answers (the connection is not writable).
    private var uncollectedSince: C.Instant?
    /// Whether a malformed request waits for the answers owed before it.
    private(set) var malformedWaits = false

    init(configuration: ConnectionConfiguration, clock: C) {
        self.configuration = configuration
        self.clock = clock
        receiving = .between(since: clock.now)
    }

    // MARK: What the client sends

    // Parts come within a read, and the read's completion stamps a body's clock; between requests the clock
    // starts when the last answer ends. So a part needs the time only when neither follows: the hot path
    // asks the clock once per request.

    mutating func receivedHead(_ framing: Framing) {
        guard let since = phaseSince else { return }
        owed.append(framing)
        receiving = .body(since: since)
        partsSinceRead = true
    }

    mutating func receivedBody() {
        partsSinceRead = true
    }

    mutating func receivedEnd() {
        guard let since = phaseSince else { return }
        // Answered already (before its body ended): nothing else starts the idle clock.
        receiving = .between(since: owed.isEmpty ? clock.now : since)
        partsSinceRead = true
    }

    /// When the current phase began or last moved; nil while closing.
    private var phaseSince: C.Instant? {
        switch receiving {
        case .between(let since), .head(let since), .body(let since): return since
        case .closing: return nil
        }
    }

    /// A read from the socket completed. One that gave no request part, between requests, brought the
    /// start of a head; one during a body is progress, even if it held only chunk framing.
    mutating func readCompleted() {
        switch receiving {
        case .between where !partsSinceRead: receiving = .head(since: clock.now)
        case .body: receiving = .body(since: clock.now)
        case .between, .head, .closing: break
        }
        partsSinceRead = false
    }

    /// The client stopped collecting its answers (`false`), or collects them again.
    mutating func writabilityChanged(writable: Bool) {
        if !writable {
            if uncollectedSince == nil { uncollectedSince = clock.now }
            return
        }
        guard uncollectedSince != nil else { return }
        uncollectedSince = nil
        // The server read nothing meanwhile: the head or body starts its wait again.
        restartClock(between: false, head: true, body: true)
    }

    // MARK: What the server answers

    /// An answer begins (the router's, with its head); answers how to frame it.
    mutating func answerBegins() -> Framing? {
        answering = true
        return owed.first
    }

    /// The answer under way cannot say how long its body is: on HTTP/1.0 only closing the connection ends it.
    mutating func closesAfterAnswer() {
        guard !owed.isEmpty else { return }
        owed[owed.startIndex].closes = true
    }

    /// An answer has ended (been written whole).
    mutating func answerEnded() -> AfterAnswer {
        answering = false
        guard let framing = owed.popFirst() else { return .keepOpen }
        if receiving == .closing { return .keepOpen }
        if framing.closes {
            receiving = .closing
            return .close
        }
        if malformedWaits, let refusal = refusalIfDue() { return .refuseMalformed(refusal) }
        // The client's wait for the server is over: its own clock starts now.
        restartClock(between: owed.isEmpty, head: owed.isEmpty, body: owed.count == 1)
        return .keepOpen
    }

    /// The decoder refused what the client sent. The `400` goes out once the answers owed to earlier
    /// requests have; a request whose body was arriving is the malformed one, and is owed no other answer.
    mutating func malformed() -> Malformed {
        guard receiving != .closing else { return .ignore }
        malformedWaits = true
        if let refusal = refusalIfDue() { return .refuseNow(refusal) }
        return .afterOwedAnswers
    }

    private mutating func refusalIfDue() -> Framing? {
        guard !answering else { return nil }
        var framing = Framing.unknownRequest
        var earlier = owed.count
        if case .body = receiving, let current = owed.last {
            earlier -= 1
            framing.http10 = current.http10
            framing.origin = current.origin
        }
        guard earlier == 0 else { return nil }
        receiving = .closing
        return framing
    }

    // MARK: Time

    /// When the timeout that runs now expires, and which it is; nil while none runs.
    var deadline: (at: C.Instant, expiry: Expiry)? {
        if let since = uncollectedSince { return (since.advanced(by: configuration.idleTimeout), .close) }
        switch receiving {
        case .between(let since):
            guard owed.isEmpty else { return nil }
            return (since.advanced(by: configuration.idleTimeout), .close)
        case .head(let since):
            guard owed.isEmpty else { return nil }
            let expiry: Expiry = answering ? .close : .requestTimeout(.unknownRequest, head: true)
            return (since.advanced(by: configuration.requestHeadTimeout), expiry)
        case .body(let since):
            guard owed.count <= 1 else { return nil }
            // Answered already (the router may answer before the body ends): nothing more to say.
            guard let current = owed.first, !answering else { return (since.advanced(by: configuration.requestBodyTimeout), .close) }
            let expiry: Expiry = .requestTimeout(Framing(http10: current.http10, closes: true, origin: current.origin), head: false)
            return (since.advanced(by: configuration.requestBodyTimeout), expiry)
        case .closing:
            return nil
        }
    }

    /// The timer fired. Answers what to do; `lookAgain` is never later than any timeout that may start
    /// meanwhile (none is shorter than `configuration.shortest`), so one timer per connection suffices.
    mutating func timerFired() -> Expiry {
        let now = clock.now
        let soonest = now.advanced(by: configuration.shortest)
        guard let (at, expiry) = deadline else { return .lookAgain(at: soonest) }
        guard now >= at else { return .lookAgain(at: min(at, soonest)) }
        receiving = .closing
        return expiry
    }

    /// Whether the connection is being closed.
    var isClosing: Bool {
        if case .closing = receiving { return true }
        return false
    }

    /// Whether a request's body is arriving (its head came, its end not yet).
    var isReceivingBody: Bool {
        if case .body = receiving { return true }
        return false
    }

    /// Whether nothing is under way, so a server shutting down may close the connection at once.
    var isIdle: Bool {
        if case .between = receiving { return owed.isEmpty && !answering }
        return false
    }

    /// Starts the wait of the current phase again, for the phases named.
    private mutating func restartClock(between: Bool, head: Bool, body: Bool) {
        switch receiving {
        case .between where between: receiving = .between(since: clock.now)
        case .head where head: receiving = .head(since: clock.now)
        case .body where body: receiving = .body(since: clock.now)
        default: break
        }
    }
}

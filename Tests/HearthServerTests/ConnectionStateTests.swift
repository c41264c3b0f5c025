import HearthTesting
import Testing
@testable import HearthServer

/// `ConnectionState`, the decisions behind `ConnectionGuard`, without sockets: each row is a script of what
/// the client sends, what the server answers and how the clock moves, with what the state must decide.
/// The timeouts are the defaults: idle 60 s, head 10 s, body 30 s.
@Suite struct ConnectionStateTests {
    typealias State = ConnectionState<StepClock>
    typealias Framing = State.Framing

    enum Timer: Equatable {
        /// Nothing runs out yet; the timer looks again at this many seconds from the start.
        case lookAgain(at: Double)
        case close
        case requestTimeout(http10: Bool, head: Bool)
    }

    enum Step {
        case head(http10: Bool = false, closes: Bool = false)
        case body, end
        /// A read from the socket completes.
        case read
        case wait(Double)
        case answerBegins
        case answerEnds(State.AfterAnswer)
        case malformed(State.Malformed)
        case writable(Bool)
        case timer(Timer)
        case idle(Bool)
    }

    static let plain = Framing(http10: false, closes: false)
    static let unknown = Framing.unknownRequest

    static let scripts: [(String, [Step])] = [
        ("a connection that sends nothing is closed after the idle timeout, without a word",
         [.wait(59), .timer(.lookAgain(at: 60)), .wait(1), .timer(.close)]),
        ("idle counts from the last answer, not from the request; no timeout runs while an answer is owed",
         [.head(), .end, .read, .wait(100), .timer(.lookAgain(at: 110)), .answerBegins, .answerEnds(.keepOpen),
          .wait(59.5), .timer(.lookAgain(at: 160)), .wait(0.5), .timer(.close)]),
        ("a head that does not arrive whole within 10 s of its first byte gets a 408",
         [.wait(30), .read, .wait(9.9), .timer(.lookAgain(at: 40)), .wait(0.1), .timer(.requestTimeout(http10: false, head: true))]),
        ("a head trickling in still counts from its first byte",
         [.read, .wait(5), .read, .wait(4), .read, .wait(1), .timer(.requestTimeout(http10: false, head: true))]),
        ("a whole request in one read leaves no head under way: idle, not a 408, follows its answer",
         [.head(), .end, .read, .answerBegins, .answerEnds(.keepOpen), .wait(10), .timer(.lookAgain(at: 20)),
          .wait(50), .timer(.close)]),
        ("a body without a byte for 30 s gets a 408 framed as its request",
         [.head(http10: true), .read, .wait(29), .timer(.lookAgain(at: 30)), .wait(1), .timer(.requestTimeout(http10: true, head: false))]),
        ("a body that keeps coming, however slowly, is not cut",
         [.head(), .read, .wait(20), .body, .read, .wait(20), .read, .wait(20), .body, .read, .wait(20), .timer(.lookAgain(at: 90))]),
        ("a body answered before it ended (a 413) that then stalls is closed without a second answer",
         [.head(), .read, .answerBegins, .answerEnds(.keepOpen), .wait(30), .timer(.close)]),
        ("a request answered before its body ended is idle from its end",
         [.head(), .read, .answerBegins, .answerEnds(.keepOpen), .wait(5), .end, .read, .wait(59), .timer(.lookAgain(at: 65)),
          .wait(1), .timer(.close)]),
        ("a head behind an owed answer waits for it, then gets its own 10 s",
         [.head(), .end, .read, .read, .wait(100), .timer(.lookAgain(at: 110)), .answerBegins, .answerEnds(.keepOpen),
          .wait(9), .timer(.lookAgain(at: 110)), .wait(1), .timer(.requestTimeout(http10: false, head: true))]),
        ("a client that does not collect its answers is closed after the idle timeout, answers owed or not",
         [.head(), .end, .read, .writable(false), .wait(59), .timer(.lookAgain(at: 60)), .wait(1), .timer(.close)]),
        ("collecting again restarts a head's wait",
         [.read, .wait(5), .writable(false), .wait(30), .timer(.lookAgain(at: 45)), .writable(true), .wait(9.5),
          .timer(.lookAgain(at: 45)), .wait(0.5), .timer(.requestTimeout(http10: false, head: true))]),
        ("a malformed request with nothing owed is refused at once",
         [.read, .malformed(.refuseNow(unknown)), .wait(1000), .timer(.lookAgain(at: 1010))]),
        ("a malformed request behind an owed answer is refused right after it",
         [.head(), .end, .read, .malformed(.afterOwedAnswers), .answerBegins, .answerEnds(.refuseMalformed(unknown))]),
        ("a malformed body is refused at once, framed as its own request",
         [.head(http10: true), .read, .malformed(.refuseNow(Framing(http10: true, closes: true)))]),
        ("a malformed request waits for an answer under way, even its own",
         [.head(), .read, .answerBegins, .malformed(.afterOwedAnswers), .answerEnds(.refuseMalformed(unknown))]),
        ("an answer to a request that closes the connection closes it, and nothing is decided after",
         [.head(closes: true), .end, .answerBegins, .answerEnds(.close), .malformed(.ignore), .wait(1000), .timer(.lookAgain(at: 1010))]),
        ("pipelined answers end in order; only the last leaves the connection idle",
         [.head(), .end, .head(), .end, .read, .idle(false), .answerBegins, .answerEnds(.keepOpen), .idle(false),
          .answerBegins, .answerEnds(.keepOpen), .idle(true)]),
        ("a connection is idle for a shutdown only between requests",
         [.idle(true), .read, .idle(false), .head(), .idle(false), .end, .idle(false), .answerBegins, .answerEnds(.keepOpen), .idle(true)]),
    ]

    @Test(arguments: scripts)
    func decides(_ name: String, _ steps: [Step]) {
        let clock = StepClock()
        var state = State(configuration: ConnectionConfiguration(), clock: clock)
        for (k, step) in steps.enumerated() {
            let place = Comment(rawValue: "\(name), step \(k + 1)")
            switch step {
            case .head(let http10, let closes): state.receivedHead(Framing(http10: http10, closes: closes))
            case .body: state.receivedBody()
            case .end: state.receivedEnd()
            case .read: state.readCompleted()
            case .wait(let seconds): clock.advance(by: .milliseconds(Int64(seconds * 1000)))
            case .answerBegins: _ = state.answerBegins()
            case .answerEnds(let expected): #expect(state.answerEnded() == expected, place)
            case .malformed(let expected): #expect(state.malformed() == expected, place)
            case .writable(let writable): state.writabilityChanged(writable: writable)
            case .idle(let expected): #expect(state.isIdle == expected, place)
            case .timer(let expected):
                let got: Timer
                switch state.timerFired() {
                case .lookAgain(let at): got = .lookAgain(at: Double(at.offset.components.seconds) + Double(at.offset.components.attoseconds) / 1e18)
                case .close: got = .close
                case .requestTimeout(let framing, let head):
                    #expect(framing.closes, place)
                    got = .requestTimeout(http10: framing.http10, head: head)
                }
                #expect(got == expected, place)
            }
        }
    }

    /// The timer never sleeps past a timeout that may start meanwhile: it looks again within the shortest.
    @Test func theTimerLooksAtLeastAsOftenAsTheShortestTimeout() {
        let clock = StepClock()
        var configuration = ConnectionConfiguration()
        configuration.requestHeadTimeout = .milliseconds(200)
        var state = State(configuration: configuration, clock: clock)
        guard case .lookAgain(let at) = state.timerFired() else {
            Issue.record("expected to look again")
            return
        }
        #expect(at.offset == .milliseconds(200))
    }
}

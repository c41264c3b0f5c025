import HTTPTypes
import NIOCore
import NIOHTTPTypes
@testable import HearthServer
import Testing

/// `InlineAnswerHandler`'s decisions as a plain value, driven with request parts alone: what it takes,
/// holds, passes on, and when the connection may read or quiesce.
@Suite struct InlineAnswerStateTests {
    /// Heads under `/here` are taken (a body of at most 4 bytes; none for `/here/read`); the rest is routed.
    static func state() -> InlineAnswerState<String> {
        InlineAnswerState { head in
            guard let path = head.path, path.hasPrefix("/here") else { return nil }
            return (path, path == "/here/read" ? nil : 4)
        }
    }

    static func head(_ path: String) -> HTTPRequestPart {
        .head(HTTPRequest(method: .post, scheme: nil, authority: nil, path: path))
    }

    static func body(_ text: String) -> HTTPRequestPart { .body(ByteBuffer(string: text)) }

    /// What an action came to, as text a table can hold.
    static func describe(_ action: InlineAnswerState<String>.Action) -> String {
        switch action {
        case .forward: return "forward"
        case .hold: return "hold"
        case .keep: return "keep"
        case .route(let take, _, let body): return "route \(take) \(body.map { String(buffer: $0) } ?? "-")"
        case .answer(let take, _, let body): return "answer \(take) \(body.map { String(buffer: $0) } ?? "-")"
        }
    }

    enum Step {
        case part(HTTPRequestPart, String)
        /// The request just ended is answered later, from another thread.
        case await
        /// The awaited answer is written: the parts that waited come back.
        case answered([String])
        case routedAnswerEnds
    }

    static let scripts: [(String, [Step])] = [
        ("a request taken whole", [.part(head("/here/a"), "keep"), .part(body("{}"), "keep"), .part(.end(nil), "answer /here/a {}")]),
        ("a routed one passes", [.part(head("/there"), "forward"), .part(body("{}"), "forward"), .part(.end(nil), "forward")]),
        ("a body past the limit goes to the router, then the rest",
         [.part(head("/here/a"), "keep"), .part(body("123"), "keep"), .part(body("45"), "route /here/a 12345"),
          .part(body("6"), "forward"), .part(.end(nil), "forward")]),
        ("a read's body is ignored", [.part(head("/here/read"), "keep"), .part(body("whatever"), "keep"), .part(.end(nil), "answer /here/read -")]),
        ("behind a routed request, nothing is taken until its answer ends",
         [.part(head("/there"), "forward"), .part(.end(nil), "forward"), .part(head("/here/a"), "forward"), .part(.end(nil), "forward"),
          .routedAnswerEnds, .part(head("/here/b"), "forward"), .part(.end(nil), "forward"), .routedAnswerEnds, .routedAnswerEnds,
          .part(head("/here/c"), "keep"), .part(.end(nil), "answer /here/c -")]),
        ("while an answer is awaited everything waits, then comes back in order",
         [.part(head("/here/a"), "keep"), .part(.end(nil), "answer /here/a -"), .await,
          .part(head("/there"), "hold"), .part(.end(nil), "hold"), .answered(["head /there", "end"]),
          .part(head("/there"), "forward")]),
    ]

    @Test(arguments: scripts.indices)
    func script(_ index: Int) {
        let (name, steps) = Self.scripts[index]
        var state = Self.state()
        for (k, step) in steps.enumerated() {
            switch step {
            case .part(let part, let expected):
                let action = state.received(part)
                #expect(Self.describe(action) == expected, "\(name), step \(k)")
            case .await:
                state.awaitAnswer()
            case .answered(let expected):
                let parts = state.answered().map { part -> String in
                    switch part {
                    case .head(let h): return "head \(h.path ?? "")"
                    case .body(let b): return "body \(String(buffer: b))"
                    case .end: return "end"
                    }
                }
                #expect(parts == expected, "\(name), step \(k)")
            case .routedAnswerEnds:
                state.routedAnswerEnded()
            }
        }
    }

    /// No read while an answer is awaited or the connection cannot write; a held read goes on once both pass.
    @Test func readsWaitForTheAnswerAndForWritability() {
        var state = Self.state()
        let steps: [(inout InlineAnswerState<String>) -> Bool] = [
            { $0.readAsked(writable: true) }, { !$0.readAsked(writable: false) }, { !$0.mayReadAgain(writable: false) },
            { $0.mayReadAgain(writable: true) }, { !$0.mayReadAgain(writable: true) },
            { _ = $0.received(Self.head("/here/a")); _ = $0.received(.end(nil)); $0.awaitAnswer(); return !$0.readAsked(writable: true) },
            { !$0.mayReadAgain(writable: true) }, { _ = $0.answered(); return $0.mayReadAgain(writable: true) },
        ]
        for (k, step) in steps.enumerated() { #expect(step(&state), "step \(k)") }
    }

    /// A request to quiesce waits for a request being taken or answered here, then passes once.
    @Test func quiescingWaitsForTheRequestAnsweredHere() {
        var state = Self.state()
        let steps: [(inout InlineAnswerState<String>) -> Bool] = [
            { $0.quiesceAsked() }, { _ = $0.received(Self.head("/here/a")); return !$0.quiesceAsked() }, { !$0.mayQuiesce() },
            { _ = $0.received(.end(nil)); $0.awaitAnswer(); return !$0.mayQuiesce() },
            { _ = $0.answered(); return $0.mayQuiesce() }, { !$0.mayQuiesce() },
        ]
        for (k, step) in steps.enumerated() { #expect(step(&state), "step \(k)") }
    }
}

import Foundation

/// Gathers what an `AsyncSequence` yields, on a task of its own, so that a test can wait (with a generous
/// bound, never asserting how long it took) until the elements so far satisfy a condition.
public final class AsyncCollector<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    private var ending: (any Error)??
    private var task: Task<Void, Never>?

    /// Starts consuming `sequence`.
    public init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        task = Task { [self] in
            do {
                for try await element in sequence { lock.withLock { elements.append(element) } }
                lock.withLock { ending = .some(nil) }
            } catch {
                lock.withLock { ending = .some(error) }
            }
        }
    }

    /// The elements so far.
    public var collected: [Element] { lock.withLock { elements } }

    /// Whether the sequence ended, and with which error (nil for a normal end).
    public var ended: (any Error)?? { lock.withLock { ending } }

    /// Waits until `condition` holds for the elements so far; fails after `timeout` seconds or when the sequence
    /// ended without it holding.
    @discardableResult
    public func wait(timeout: Double = 30, _ what: String = "the expected elements",
                     until condition: ([Element]) -> Bool) async throws -> [Element] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let (now, end) = lock.withLock { (elements, ending) }
            if condition(now) { return now }
            if let end { throw ExpectationFailure("the sequence ended (\(end.map { "\($0)" } ?? "normally")) before \(what); got \(now.count) elements") }
            if Date() >= deadline { throw ExpectationFailure("no \(what) within \(timeout) s; got \(now.count) elements") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Stops consuming (the sequence's consumer task is cancelled, which ends a listener's stream).
    public func cancel() { task?.cancel() }
}

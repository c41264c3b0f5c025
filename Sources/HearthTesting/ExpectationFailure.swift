/// A harness expectation that did not hold; thrown, so that any test framework reports it as a failure.
public struct ExpectationFailure: Error, CustomStringConvertible {
    /// What was expected and what happened.
    public let message: String

    /// Makes a failure.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// A read run within a bound of work (a bounded read on the calling thread) needed more than its bound.
public struct ReadBudgetExceeded: Error {
    /// Makes the error.
    public init() {}
}

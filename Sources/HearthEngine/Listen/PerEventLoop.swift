import NIOCore
import Synchronization

/// One value per event loop, made on first use: what the listeners of one loop share (the drains that run
/// on it), whichever face they came in by.
package final class PerEventLoop<Value: Sendable>: Sendable {
    private let byLoop = Mutex<[ObjectIdentifier: Value]>([:])
    private let make: @Sendable (any EventLoop) -> Value

    /// `make` builds the value of a loop the first time the loop asks.
    package init(_ make: @escaping @Sendable (any EventLoop) -> Value) { self.make = make }

    /// The value of `eventLoop`.
    package func callAsFunction(_ eventLoop: any EventLoop) -> Value {
        byLoop.withLock { byLoop in
            if let value = byLoop[ObjectIdentifier(eventLoop)] { return value }
            let value = make(eventLoop)
            byLoop[ObjectIdentifier(eventLoop)] = value
            return value
        }
    }
}

/// A stream of byte chunks, whatever produces them (an HTTP body, a file, an array in a test): what a put
/// reads from and a download is read as. Consumed once, in order, by one task; memory holds one chunk at a
/// time, never the whole object.
public struct ByteChunks: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    /// Makes the function that yields the next chunk (nil at the end) for one pass.
    let makeNext: @Sendable () -> @Sendable () async throws -> [UInt8]?

    /// Chunks from any sequence of byte arrays.
    public init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == [UInt8] {
        makeNext = {
            let box = IteratorBox(sequence.makeAsyncIterator())
            return { try await box.next() }
        }
    }

    /// Chunks from a function called until it returns nil.
    public init(next: @escaping @Sendable () async throws -> [UInt8]?) {
        makeNext = { next }
    }

    /// The bytes of an array, in chunks of `chunkSize`.
    public init(_ bytes: [UInt8], chunkSize: Int = 64 * 1024) {
        makeNext = {
            let cursor = Cursor()
            return {
                let start = cursor.advance(by: chunkSize, limit: bytes.count)
                return start < bytes.count ? Array(bytes[start..<Swift.min(bytes.count, start + chunkSize)]) : nil
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(produce: makeNext()) }

    /// Reads the chunks in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let produce: @Sendable () async throws -> [UInt8]?

        public mutating func next() async throws -> [UInt8]? { try await produce() }
    }

    /// Holds an iterator that is used by one task at a time, in turn.
    private final class IteratorBox<I: AsyncIteratorProtocol>: @unchecked Sendable where I.Element == [UInt8] {
        var iterator: I

        init(_ iterator: I) { self.iterator = iterator }

        func next() async throws -> [UInt8]? { try await iterator.next() }
    }

    /// A position advanced by one task at a time.
    private final class Cursor: @unchecked Sendable {
        var position = 0

        func advance(by step: Int, limit: Int) -> Int {
            let start = position
            position = Swift.min(limit, position + step)
            return start
        }
    }
}

extension ByteChunks {
    /// Every chunk joined (for tests and small objects only: memory grows with the size).
    public func collect() async throws -> [UInt8] {
        var out: [UInt8] = []
        for try await chunk in self { out += chunk }
        return out
    }
}

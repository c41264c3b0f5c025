import NIOPosix

/// Blocking file work (writes, `fsync`, reads of stored bytes) runs on NIO's thread pool, never on Swift
/// concurrency's shared threads: a sync can take tens of milliseconds, and those threads are one per core.
enum BlockingIO {
    /// Runs `body` on a thread of the pool and returns its result to the calling task.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(body)
    }
}

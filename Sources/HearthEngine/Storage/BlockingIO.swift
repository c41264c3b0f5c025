import NIOPosix

/// Blocking file work (writes, `fsync`, reads of stored bytes) runs on NIO's thread pool, never on Swift
/// concurrency's shared threads: a sync can take tens of milliseconds, and those threads are one per core.
enum BlockingIO {
    /// Runs `body` on a thread of the pool and returns its result to the calling task.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(body)
    }

    /// Runs `body`, whose time is a sync (a write of bytes already in memory, `fsync`, a rename), on threads
    /// kept for syncs: concurrent puts' syncs are then in flight together and share the filesystem's journal
    /// commits, instead of queueing behind NIO's pool of one thread a core. The work allocates next to
    /// nothing (no buffers), so these threads' allocator arenas stay small.
    static func sync<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await syncPool.runIfActive(body)
    }

    /// Runs `body` on a thread kept for syncs without awaiting it, for work that goes on from that thread;
    /// `body` is told false, on the calling thread, when the threads have stopped.
    static func onSyncThread(_ body: @escaping @Sendable (_ active: Bool) -> Void) {
        syncPool.submit { state in
            if case .active = state { body(true) } else { body(false) }
        }
    }

    /// As many syncs in flight as a busy server has puts at once; started once, for the process's life.
    static let syncThreads = 16
    private static let syncPool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: syncThreads)
        pool.start()
        return pool
    }()
}

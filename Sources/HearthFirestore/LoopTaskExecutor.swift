import NIOCore
import NIOPosix

/// Runs tasks on event loops: the gRPC server's tasks prefer it, so that a call runs on its stream's loop,
/// where the channel's reads and writes are direct calls, instead of crossing to Swift's global executor and
/// back for every part of every call. Work that blocks stays off these tasks as it stays off the loops
/// (SQLite runs on threads of its own).
package final class LoopTaskExecutor: TaskExecutor {
    private let group: any EventLoopGroup
    private let loops: Set<ObjectIdentifier>

    /// Each job on the loop of `group` it was enqueued from, or on the group's next loop when it came from
    /// another thread.
    package init(group: MultiThreadedEventLoopGroup) {
        self.group = group
        self.loops = Set(group.makeIterator().map { ObjectIdentifier($0) })
    }

    /// Every job on `loop`: one call's task, wherever it is resumed from (a commit is answered on the writer's
    /// thread, a listener woken from the change feed's).
    package init(loop: any EventLoop) {
        self.group = loop
        self.loops = [ObjectIdentifier(loop)]
    }

    /// The loop the calling code runs on, as an executor to pin a task to; nil off the loops.
    package static func current() -> LoopTaskExecutor? {
        MultiThreadedEventLoopGroup.currentEventLoop.map { LoopTaskExecutor(loop: $0) }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let loop = MultiThreadedEventLoopGroup.currentEventLoop.flatMap { loops.contains(ObjectIdentifier($0)) ? $0 : nil }
            ?? group.next()
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

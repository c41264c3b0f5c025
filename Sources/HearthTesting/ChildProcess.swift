import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for the test helpers that run the `hearth` binary.
///
/// Foundation's `Process.run()` on Linux lists `/proc/self/fd` to close the child's descriptors and, in this
/// toolchain, copies each directory entry as a whole 256-byte name: when an entry ends a page the read runs
/// past it and the test process crashes, now and then, in a suite that holds many sockets open. This starts
/// the child directly and closes every descriptor but its standard three in the child.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    private let lock = NSLock()
    private var status: Int32?

    /// A pipe: read end and write end.
    static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw ServerProcessError(message: "pipe() failed: errno \(errno)") }
        return (fds[0], fds[1])
    }

    /// Starts a child that takes `childEnds` (pipe ends it uses as standard descriptors) and closes them here,
    /// where only `parentEnds` are used from then on; when the start fails, closes both and rethrows.
    static func start(childEnds: [Int32], parentEnds: [Int32], _ start: () throws -> ChildProcess) throws -> ChildProcess {
        do {
            let child = try start()
            Set(childEnds).forEach { _ = close($0) }
            return child
        } catch {
            Set(childEnds + parentEnds).forEach { _ = close($0) }
            throw error
        }
    }

    /// Starts `path` with `arguments` (without the program name), `environment` (nil: this process's), and
    /// the given descriptors as its standard input, output and error (nil: this process's).
    init(path: String, arguments: [String], environment: [String: String]? = nil, currentDirectory: String? = nil,
         stdin: Int32? = nil, stdout: Int32? = nil, stderr: Int32? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, target) in [(stdin, Int32(0)), (stdout, 1), (stderr, 2)] {
            if let fd { posix_spawn_file_actions_adddup2(&actions, fd, target) }
        }
        guard Self.addCloseFrom(&actions, 3) else {
            throw ServerProcessError(message: "posix_spawn_file_actions_addclosefrom_np is not available")
        }
        if let currentDirectory {
            guard Self.addChdir(&actions, currentDirectory) else {
                throw ServerProcessError(message: "posix_spawn_file_actions_addchdir_np is not available")
            }
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            env.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, env)
        guard result == 0 else { throw ServerProcessError(message: "cannot start \(path): error \(result)") }
        self.pid = pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which the Swift module does not
    /// declare (it is a GNU extension).
    private static func addCloseFrom(_ actions: inout posix_spawn_file_actions_t, _ from: Int32) -> Bool {
        typealias Function = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            return false
        }
        return unsafeBitCast(symbol, to: Function.self)(&actions, from) == 0
    }

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later), likewise.
    private static func addChdir(_ actions: inout posix_spawn_file_actions_t, _ path: String) -> Bool {
        typealias Function = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else {
            return false
        }
        return path.withCString { unsafeBitCast(symbol, to: Function.self)(&actions, $0) } == 0
    }

    /// The exit status once the child has ended (the signal's number if a signal ended it, as `Process`
    /// reports it); nil while it runs.
    var exitStatus: Int32? {
        lock.lock()
        defer { lock.unlock() }
        if status == nil { reap(options: WNOHANG) }
        return status
    }

    var isRunning: Bool { exitStatus == nil }

    /// Waits for the child to end; answers its exit status.
    func waitUntilExit() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        while status == nil { reap(options: 0) }
        return status!
    }

    /// Sends a signal.
    func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Stops the child: SIGTERM, then SIGKILL if it has not ended within 30 s; returns once it is reaped.
    func terminate() async {
        signal(SIGTERM)
        let deadline = Date().addingTimeInterval(30)
        while isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if isRunning { signal(SIGKILL) }
        _ = try? await RawHTTPConnection.onOwnThread { [self] in waitUntilExit() }
    }

    private func reap(options: Int32) {
        var raw: Int32 = 0
        let r = waitpid(pid, &raw, options)
        if r == pid {
            let signal = raw & 0x7F
            status = signal == 0 ? (raw >> 8) & 0xFF : signal
        } else if r < 0 && errno != EINTR {
            status = -1
        }
    }
}

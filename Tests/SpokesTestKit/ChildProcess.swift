import Foundation
import Synchronization

/// A child process started with `posix_spawn`, for tests that start many: Foundation's
/// `Process.run()` crashed the whole test process twice (a bad pointer inside a memory
/// copy) while the suite started nodes, even one at a time. Its standard input is
/// `/dev/null`; its output and error go to the descriptors given (or `/dev/null`). The
/// test reaps it: ``isRunning`` and ``waitForExit(within:)`` call `waitpid` for it alone.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// The exit status once reaped (a signal's number plus 128 for a killed child).
    private let status = Mutex<Int32?>(nil)

    /// A pipe whose descriptors close on exec: the child gets its write end as a standard
    /// stream (`dup2` clears the flag there) and no copy of any other. (Glibc's `pipe2`
    /// is not visible to Swift here, so the flag is set just after.)
    public static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    /// Starts `executable` with `arguments` and exactly `environment`.
    public init(executable: String, arguments: [String], environment: [String: String], standardOutput: Int32?, standardError: Int32?) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        for (source, target) in [(standardOutput, Int32(1)), (standardError, Int32(2))] {
            if let source {
                posix_spawn_file_actions_adddup2(&actions, source, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            }
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        pid = child
    }

    /// Whether it still runs (reaping it if it ended).
    public var isRunning: Bool { reap() == nil }

    /// Its exit status, once it ended and was reaped.
    public var terminationStatus: Int32? { status.withLock { $0 } }

    /// Sends `signal` while it runs (never to a reaped pid, which may be another's now).
    public func kill(_ signal: Int32) {
        if isRunning { Glibc.kill(pid, signal) }
    }

    /// Waits at most `seconds` for it to end; its status, or nil if it still runs.
    public func waitForExit(within seconds: Double) async -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return terminationStatus
    }

    /// Its status if it ended (reaped now or before), else nil.
    private func reap() -> Int32? {
        status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            let reaped = waitpid(pid, &raw, WNOHANG)
            guard reaped == pid else { return nil }
            let signal = raw & 0x7f
            status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            return status
        }
    }

    deinit {
        if isRunning { Glibc.kill(pid, SIGKILL) }
    }
}

import Glibc

/// Starts child processes with `posix_spawn`: what `spokes demo` and `spokes bench` start
/// their nodes with, and the test kit's `ChildProcess`.
///
/// Why not Foundation's `Process`: it is Foundation's, not `FoundationEssentials`', and
/// linking it links CoreFoundation and ICU into every process (BENCHMARKS.md, "Where an
/// idle node's memory goes"); and it crashed the whole test process twice (a bad pointer
/// inside a memory copy) while the suite started nodes. A child's standard input is
/// `/dev/null`; its output and error go to the descriptors given (or `/dev/null`). The
/// caller reaps it (`waitpid`), by its pid alone.
public enum Subprocess {
    /// A pipe whose descriptors close on exec: the child gets its write end as a standard
    /// stream (`dup2` clears the flag there) and no copy of any other. (Glibc's `pipe2`
    /// is not visible to Swift here, so the flag is set just after.)
    public static func pipe() throws(SubprocessError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw SubprocessError(operation: "make a pipe for", executable: "a child", code: errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    /// Starts `executable` with `arguments` and exactly `environment`; its pid.
    public static func start(
        executable: String, arguments: [String], environment: [String: String], standardOutput: Int32?, standardError: Int32?
    ) throws(SubprocessError) -> pid_t {
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
        guard result == 0 else { throw SubprocessError(operation: "start", executable: executable, code: result) }
        return child
    }
}

/// A child process that could not be started, and why (an `errno` value).
public struct SubprocessError: Error, Sendable, Hashable, CustomStringConvertible {
    public var operation: String
    public var executable: String
    public var code: Int32

    public init(operation: String, executable: String, code: Int32) {
        self.operation = operation
        self.executable = executable
        self.code = code
    }

    public var description: String { "cannot \(operation) \(executable): \(String(cString: strerror(code)))" }
}

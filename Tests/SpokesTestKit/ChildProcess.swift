import Foundation
import SpokesConcurrency
import Synchronization

/// A child process for tests that start many, started by ``Subprocess`` (`posix_spawn`;
/// its standard input `/dev/null`, its output and error the descriptors given, or
/// `/dev/null`). The test reaps it: ``isRunning`` and ``waitForExit(within:)`` call
/// `waitpid` for it alone, and a child still running when this goes is killed.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// The exit status once reaped (a signal's number plus 128 for a killed child).
    private let status = Mutex<Int32?>(nil)

    /// A pipe for a child's output (``Subprocess/pipe()``).
    public static func pipe() throws -> (read: Int32, write: Int32) { try Subprocess.pipe() }

    /// Starts `executable` with `arguments` and exactly `environment` (``Subprocess/start(executable:arguments:environment:standardOutput:standardError:)``).
    public init(executable: String, arguments: [String], environment: [String: String], standardOutput: Int32?, standardError: Int32?) throws {
        pid = try Subprocess.start(executable: executable, arguments: arguments, environment: environment,
                                   standardOutput: standardOutput, standardError: standardError)
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

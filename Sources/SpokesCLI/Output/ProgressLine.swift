import FoundationEssentials
import Glibc
import SpokesBikes
import SpokesConcurrency
import Synchronization

/// Progress of a run on stderr: on a terminal one line redrawn in place and erased at
/// the end; elsewhere (with `--progress`) one line per update. At most ten updates a
/// second, plus the first and the last.
final class ProgressLine: Sendable {
    enum Mode: Sendable {
        case off
        /// Redraw one line in place (a terminal).
        case redraw
        /// Append a line per update (a log file or pipe).
        case lines
    }

    private let mode: Mode
    private let write: @Sendable (String) -> Void
    private let lastDraw = Mutex<Double?>(nil)
    private let clock = RealClock()

    init(mode: Mode, write: @escaping @Sendable (String) -> Void) {
        self.mode = mode
        self.write = write
    }

    /// Draws the first line, before any user has finished.
    func start(users: Int) {
        draw(Self.text(SimulationProgress(usersDone: 0, usersTotal: users, pathsRidden: 0, elapsed: 0)), force: true)
    }

    func show(_ progress: SimulationProgress) {
        draw(Self.text(progress), force: progress.usersDone == progress.usersTotal)
    }

    /// Draws every job update: the coordinator already sends at most ten a second, and a
    /// second throttle here could drop the last one of a burst.
    func show(_ progress: JobProgress) {
        draw(Self.text(progress), force: true)
    }

    /// Erases the line on a terminal.
    func finish() {
        if mode == .redraw { write("\r\u{1B}[K") }
    }

    private func draw(_ text: String, force: Bool) {
        guard mode != .off else { return }
        let now = clock.now
        let due = lastDraw.withLock { last in
            guard force || last.map({ now - $0 >= 0.1 }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        write(mode == .redraw ? "\r\u{1B}[K" + text : text + "\n")
    }

    /// "users 120/200 (60%) · 3 retries · 45.2 users/s · ETA 2s · running n1 4, n2 3"
    static func text(_ progress: JobProgress) -> String {
        let finished = progress.usersDone + progress.usersFailed
        let percent = progress.usersTotal > 0 ? finished * 100 / progress.usersTotal : 100
        var parts = ["users \(progress.usersDone)/\(progress.usersTotal) (\(percent)%)"]
        if progress.usersFailed > 0 { parts.append("\(progress.usersFailed) failed") }
        parts.append("\(progress.retries) retries")
        parts.append(String(printf: "%.1f users/s", progress.rate))
        if let remaining = progress.estimatedRemaining, finished < progress.usersTotal {
            parts.append("ETA \(Int(saturating: remaining.rounded(.up)))s")
        }
        if !progress.runningPerNode.isEmpty {
            parts.append("running " + progress.runningPerNode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        return parts.joined(separator: " · ")
    }

    /// "users 120/200 (60%) · 1234 paths · 45.2 users/s · ETA 2s"
    static func text(_ progress: SimulationProgress) -> String {
        let percent = progress.usersTotal > 0 ? progress.usersDone * 100 / progress.usersTotal : 100
        var parts = [
            "users \(progress.usersDone)/\(progress.usersTotal) (\(percent)%)",
            "\(progress.pathsRidden) paths",
            String(printf: "%.1f users/s", progress.rate),
        ]
        if let remaining = progress.estimatedRemaining, progress.usersDone < progress.usersTotal {
            parts.append("ETA \(Int(saturating: remaining.rounded(.up)))s")
        }
        return parts.joined(separator: " · ")
    }
}

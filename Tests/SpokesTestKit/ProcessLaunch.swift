import Foundation
import Synchronization

/// Starts child processes one at a time. Foundation's `Process.run()` on Linux is not safe
/// to call from several threads at once: a full test run crashed inside it (a bad pointer
/// in a memory copy) while tests started nodes in parallel. Every test that starts a
/// process starts it through here; the lock is held only while the child is spawned.
public enum ProcessLaunch {
    private static let lock = Mutex(())

    public static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}

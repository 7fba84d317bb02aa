import SpokesConcurrency

/// How a coordinator goes on trying to store a finished job's report that its disk
/// refused (full): again after ``first`` seconds, then twice as long each time up to
/// ``longest``, until it is stored or the job is no longer this node's (the task is
/// cancelled). Its desk counts the job as running meanwhile, so the job's watcher does not
/// run it again: before, a replicated job whose report could not be stored was taken
/// over every 0.25 s, each run committing a new epoch to a log on the same full disk.
/// The job's client has its report already (saying it was not stored, and why).
public enum ReportStoreRetry {
    /// Seconds before the first try again.
    public static let first = 1.0
    /// The longest wait between two tries.
    public static let longest = 30.0

    /// Tries `store` after each wait until it succeeds (true) or the task is cancelled
    /// (false); says in `log` when it stored.
    public static func keepTrying(job: String, clock: any RuntimeClock, log: @Sendable (String) -> Void,
                                  _ store: @Sendable () async throws -> Void) async -> Bool {
        var wait = first
        var tries = 1
        while true {
            guard (try? await clock.sleep(for: wait)) != nil else { return false }
            tries += 1
            do {
                try await store()
                log("stored job \(job)'s report at try \(tries) (the disk has room again)")
                return true
            } catch {
                wait = min(wait * 2, longest)
            }
        }
    }
}

import Testing
@testable import SpokesCluster

@Suite struct JobBoardTests {
    @Test func eventsMoveTheCountsAndEachNodesShare() throws {
        let board = JobBoard(coordinator: "a")
        let tracker = board.track(job: "j", kind: "k", title: "t", total: 3, at: 1)
        tracker.record(.started(task: 0, attempt: 1, node: "a"))
        tracker.record(.started(task: 1, attempt: 1, node: "b"))
        tracker.record(.started(task: 2, attempt: 1, node: "b"))
        tracker.record(.finished(task: 0, node: "a"))
        tracker.record(.failed(task: 1, attempt: 1, node: "b", reason: "lost", willRetry: true))
        tracker.record(.started(task: 1, attempt: 2, node: "a"))
        let record = try #require(board.records.first)
        #expect(record.state == .running)
        #expect(record.done == 1 && record.failed == 0 && record.retries == 1)
        #expect(record.perNode["a"] == JobBoard.Share(done: 1, running: 1))
        #expect(record.perNode["b"] == JobBoard.Share(done: 0, running: 1))
        #expect(record.coordinator == "a" && record.startedAt == 1)
    }

    @Test func endedJobsAreCountedByHowTheyEndedEvenOnceNoLongerKept() {
        let board = JobBoard(coordinator: "a", keepFinished: 1)
        for (index, ending) in ["finished", "failed", "cancelled", "finished"].enumerated() {
            let tracker = board.track(job: "j\(index)", kind: "k", title: "t", total: 1, at: Double(index))
            tracker.record(.started(task: 0, attempt: 1, node: "a"))
            switch ending {
            case "finished": tracker.record(.finished(task: 0, node: "a"))
            case "failed": tracker.record(.failed(task: 0, attempt: 1, node: "a", reason: "x", willRetry: false))
            default: tracker.record(.cancelled(task: 0, attempt: 1, node: "a"))
            }
            tracker.end(cancelled: ending == "cancelled")
        }
        _ = board.track(job: "running", kind: "k", title: "t", total: 1, at: 9)
        #expect(board.endedCounts == [.finished: 2, .failed: 1, .cancelled: 1])
        #expect(board.runningCount == 1)
        #expect(board.records.count == 2, "one running, and only the newest ended one kept")
    }

    @Test func theRetriedCounterOnlyGoesUpAndOutlivesItsJobs() {
        let board = JobBoard(coordinator: "a", keepFinished: 0)
        let tracker = board.track(job: "j", kind: "k", title: "t", total: 2, at: 0)
        tracker.record(.started(task: 0, attempt: 1, node: "a"))
        tracker.record(.failed(task: 0, attempt: 1, node: "a", reason: "x", willRetry: true))
        tracker.record(.started(task: 0, attempt: 2, node: "b"))
        tracker.record(.busy(task: 0, attempt: 2, node: "b"))
        #expect(board.retriedCount == 1, "a retry turned away busy is still a failed attempt retried")
        tracker.record(.failed(task: 1, attempt: 1, node: "a", reason: "x", willRetry: false))
        tracker.end(cancelled: false)
        tracker.record(.failed(task: 0, attempt: 2, node: "a", reason: "after the end", willRetry: true))
        #expect(board.retriedCount == 1, "an ended job counts nothing more, and its count stays")
    }

    @Test func retriesCountAttemptsStartedAgainAndNothingElse() throws {
        let board = JobBoard(coordinator: "a")
        let tracker = board.track(job: "j", kind: "k", title: "t", total: 5, at: 0)
        // Failures with no retry left, as with --retries 0: failed tasks, no retry.
        for task in [0, 4] {
            tracker.record(.started(task: task, attempt: 1, node: "a"))
            tracker.record(.failed(task: task, attempt: 1, node: "a", reason: "x", willRetry: false))
        }
        // A retry sent to a full worker, then started elsewhere: one retry.
        tracker.record(.started(task: 1, attempt: 1, node: "a"))
        tracker.record(.failed(task: 1, attempt: 1, node: "a", reason: "x", willRetry: true))
        tracker.record(.started(task: 1, attempt: 2, node: "b"))
        tracker.record(.busy(task: 1, attempt: 2, node: "b"))
        tracker.record(.started(task: 1, attempt: 2, node: "c"))
        // The job is cancelled: a running attempt and one that never started.
        tracker.record(.started(task: 2, attempt: 1, node: "b"))
        tracker.record(.cancelled(task: 2, attempt: 1, node: "b"))
        tracker.record(.cancelled(task: 3, attempt: 1, node: nil))
        let record = try #require(board.record(of: "j"))
        #expect(record.retries == 1)
        #expect(record.failed == 2 && record.cancelled == 2)
        #expect(record.perNode["b"]?.running == 0 && record.perNode["c"]?.running == 1)
        #expect(record.perNode[""] == nil)
    }

    @Test func aJobEndsFinishedFailedOrCancelled() throws {
        let board = JobBoard(coordinator: "a")
        let finished = board.track(job: "ok", kind: "k", title: "t", total: 1, at: 1)
        finished.record(.started(task: 0, attempt: 1, node: "a"))
        finished.record(.finished(task: 0, node: "a"))
        finished.end(cancelled: false)
        let failed = board.track(job: "bad", kind: "k", title: "t", total: 1, at: 2)
        failed.record(.started(task: 0, attempt: 1, node: "b"))
        failed.record(.failed(task: 0, attempt: 1, node: "b", reason: "x", willRetry: false))
        failed.end(cancelled: false)
        let stopped = board.track(job: "stop", kind: "k", title: "t", total: 5, at: 3)
        stopped.record(.started(task: 0, attempt: 1, node: "a"))
        stopped.end(cancelled: true)
        stopped.end(cancelled: false)
        let states = Dictionary(uniqueKeysWithValues: board.records.map { ($0.id, $0.state) })
        #expect(states == ["ok": .finished, "bad": .failed, "stop": .cancelled])
        #expect(board.records.map(\.id) == ["stop", "bad", "ok"], "newest first")
        #expect(board.records.allSatisfy { $0.endedAt != nil && $0.perNode.values.allSatisfy { $0.running == 0 } })
    }

    /// A job another node took over is not an ending here: it leaves the board, counted
    /// nowhere, so the dashboard does not show a job that runs on as cancelled.
    @Test func aJobTakenOverLeavesTheBoardWithoutEnding() {
        let board = JobBoard(coordinator: "a")
        let moved = board.track(job: "moved", kind: "k", title: "t", total: 3, at: 1)
        moved.record(.started(task: 0, attempt: 1, node: "b"))
        moved.handOver()
        moved.end(cancelled: true)
        #expect(board.records.isEmpty && board.record(of: "moved") == nil)
        #expect(board.endedCounts.isEmpty && board.runningCount == 0)
    }

    @Test func runningJobsComeFirstAndOnlySoManyEndedAreKept() {
        let board = JobBoard(coordinator: "a", keepFinished: 2)
        for number in 0..<5 { board.track(job: "old\(number)", kind: "k", title: "t", total: 1, at: Double(number)).end(cancelled: false) }
        _ = board.track(job: "live", kind: "k", title: "t", total: 1, at: 0)
        #expect(board.records.map(\.id) == ["live", "old4", "old3"])
    }

    @Test func countsNeverPassTheTotalWhateverEventsArrive() throws {
        let board = JobBoard(coordinator: "a")
        let tracker = board.track(job: "j", kind: "k", title: "t", total: 2, at: 0)
        for _ in 0..<5 { tracker.record(.finished(task: 0, node: "a")) }
        for _ in 0..<5 { tracker.record(.failed(task: 1, attempt: 1, node: "a", reason: "x", willRetry: false)) }
        let record = try #require(board.records.first)
        #expect(record.done + record.failed <= record.total)
        #expect(record.perNode["a"]?.running == 0)
    }
}

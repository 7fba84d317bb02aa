import Testing
@testable import SpokesCluster
@testable import SpokesDashboard

@Suite struct JobViewTests {
    func record(done: Int, failed: Int = 0, startedAt: Double = 100, endedAt: Double? = nil, state: JobBoard.State = .running) -> JobBoard.Record {
        var record = JobBoard.Record(id: "j", kind: "bikes.user", title: "t", coordinator: "a", total: 100, startedAt: startedAt)
        record.done = done
        record.failed = failed
        record.endedAt = endedAt
        record.state = state
        record.perNode = ["a": .init(done: done, running: 3)]
        return record
    }

    @Test func aRunningJobHasARateAndAnEstimate() throws {
        let view = JobView(record(done: 20, failed: 10), coordinatorNow: 110, stationBikes: [3])
        #expect(view.elapsed == 10)
        #expect(view.rate == 2)
        #expect(view.estimatedRemaining == 35, "70 left at 2 a second")
        #expect(view.perNode["a"] == .init(done: 20, running: 3))
        #expect(view.stationBikes == [3])
        #expect(view.state == "running")
    }

    @Test func anEndedJobStopsItsClockAndHasNoEstimate() {
        let view = JobView(record(done: 100, endedAt: 150, state: .finished), coordinatorNow: 400, stationBikes: nil)
        #expect(view.elapsed == 50)
        #expect(view.estimatedRemaining == nil)
        #expect(view.state == "finished")
    }

    @Test func aJobWithNothingDoneHasNoEstimateAndNoDivisionByZero() {
        let view = JobView(record(done: 0), coordinatorNow: 100, stationBikes: nil)
        #expect(view.rate == 0)
        #expect(view.estimatedRemaining == nil)
        #expect(view.elapsed == 0)
    }

    /// A job taken over is listed by the board of the node that runs it (running) and, from
    /// an older release, by the board of the one that lost it (ended): the page shows it
    /// once, running, and a job only one board lists as ended still shows.
    @Test func aJobTwoBoardsListShowsOnceAsTheRunningOne() throws {
        let lost = record(done: 0, endedAt: 120, state: .cancelled)
        let runs = record(done: 5)
        var other = record(done: 100, endedAt: 130, state: .finished)
        other.id = "k"
        let shown = ClusterObserver.oneRecordPerJob(["a": [lost, other], "b": [runs]])
        #expect(shown["a"] == [other])
        #expect(shown["b"] == [runs])
        let twice = ClusterObserver.oneRecordPerJob(["a": [other], "b": [other]])
        #expect(twice["a"] == [other] && twice["b"] == [], "an ended job listed twice shows once")
    }
}

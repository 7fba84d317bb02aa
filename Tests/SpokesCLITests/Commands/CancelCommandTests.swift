import SpokesJobs
import Testing
@testable import SpokesCLI

/// What `spokes cancel` says of the job it reached.
@Suite struct CancelCommandTests {
    static func summary(_ state: JobStore.Summary.State, succeeded: Int, cancelled: Int) -> JobStore.Summary {
        JobStore.Summary(job: "map-1", state: state, finished: nil, coordinator: "n1", title: "a map", tasks: 2,
                         succeeded: succeeded, failed: 0, cancelled: cancelled, retries: 0, wallTime: 1, kind: "test.cube")
    }

    /// (`simulate-cluster --model nodes --scenario bike-failover --nodes 3`, seed 395): a
    /// cancel reached a sweep after its last task ended, while its report was being
    /// stored; the command said "cancelled job" and the report was stored completed.
    @Test func aJobThatHadEndedBeforeTheCancelIsNotSaidToBeCancelled() {
        #expect(CancelCommand.ended("map-1", on: "n1 at 127.0.0.2:7000", Self.summary(.cancelled, succeeded: 1, cancelled: 1))
            == "cancelled job map-1 on n1 at 127.0.0.2:7000: 1 of 2 tasks completed, 1 cancelled, 0 failed")
        #expect(CancelCommand.ended("map-1", on: "n1 at 127.0.0.2:7000", Self.summary(.completed, succeeded: 2, cancelled: 0))
            == "job map-1 on n1 at 127.0.0.2:7000 had ended (completed) before the cancel reached it: 2 of 2 tasks completed, 0 cancelled, 0 failed")
    }
}

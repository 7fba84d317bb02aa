import Testing
@testable import SpokesCluster

@Suite struct TaskCountersTests {
    @Test func endedAttemptsAreCountedPerKindAndTheTotalsAddThemUp() {
        let counters = TaskCounters()
        counters.started(.cpu)
        counters.started(.waiting)
        #expect(counters.inUse == TaskBudgets(cpu: 1, waiting: 1))
        counters.finished(.cpu, kind: "math.square", succeeded: true)
        counters.finished(.waiting, kind: "bikes.user", succeeded: false)
        counters.answeredBusy(kind: "bikes.user")
        #expect(counters.byKind == ["math.square": TaskAttemptCounts(succeeded: 1), "bikes.user": TaskAttemptCounts(failed: 1, busy: 1)])
        #expect(counters.succeeded == 1 && counters.failed == 1 && counters.busy == 1 && counters.completed == 2)
        #expect(counters.running == 0)
    }
}

import Testing
@testable import SpokesCluster

@Suite struct JobSlotsTests {
    @Test func runningJobsShareTheClustersSlotsOfTheirOwnBudget() {
        let jobs = [
            "sweep": JobSlots(share: JobShare(owner: "ada"), cost: .cpu, inUse: 8, remaining: 5_000),
            "short": JobSlots(share: JobShare(owner: "bob"), cost: .cpu, inUse: 0, remaining: 20),
            "capped": JobSlots(share: JobShare(owner: "bob", maxSlots: 1), cost: .cpu, inUse: 1, remaining: 100),
            "bikes": JobSlots(share: JobShare(owner: "cy"), cost: .waiting, inUse: 300, remaining: 300),
        ]
        let shares = JobSlots.shares(of: jobs, budgets: TaskBudgets(cpu: 8, waiting: 4_000))
        // Ada and Bob share the 8 cpu slots; Bob's 4 go 3 to the short job and 1 to the capped one.
        #expect(shares == ["sweep": 4, "short": 3, "capped": 1, "bikes": 300])
    }
}

import Testing
@testable import SpokesCluster

/// How a worker shares its slots between jobs (issue 32): a queue per job, the place that
/// frees goes to the job furthest below its share, and a full queue gives way to a job
/// below its share.
/// A ``WorkerAdmission`` held by reference, so its mutating calls can sit inside `#expect`.
private final class SharedAdmission {
    var machine: WorkerAdmission
    init(cpu: Int) { machine = WorkerAdmission(budgets: TaskBudgets(cpu: cpu, waiting: 0)) }
    func arrive(_ cost: TaskCost, job: String, share: JobShare) -> WorkerAdmission.Decision { machine.arrive(cost, job: job, share: share) }
    func finish(_ cost: TaskCost, job: String) -> (ticket: WorkerAdmission.Ticket, job: String)? { machine.finish(cost, job: job) }
    func withdraw(_ ticket: WorkerAdmission.Ticket) -> Bool { machine.withdraw(ticket) }
    func jobs(_ cost: TaskCost) -> [String: WorkerAdmission.JobState] { machine.jobs(cost) }
    func queued(_ cost: TaskCost) -> Int { machine.queued(cost) }
    func shares(_ cost: TaskCost) -> [String: Double] { machine.shares(cost) }
    var inUse: TaskBudgets { machine.inUse }
}

@Suite struct WorkerAdmissionSharingTests {
    private let ada = JobShare(owner: "ada")
    private let bob = JobShare(owner: "bob")

    private func ticket(_ decision: WorkerAdmission.Decision) -> WorkerAdmission.Ticket? {
        if case .wait(let ticket) = decision { ticket } else { nil }
    }

    @Test func aJobArrivingBehindAnotherHasAPlaceInLineAndTakesTheNextFreeSlot() throws {
        let worker = SharedAdmission(cpu: 2)
        #expect(worker.arrive(.cpu, job: "long", share: ada) == .run)
        #expect(worker.arrive(.cpu, job: "long", share: ada) == .run)
        let longQueued = try #require(ticket(worker.arrive(.cpu, job: "long", share: ada)))
        #expect(worker.arrive(.cpu, job: "long", share: ada) == .busy, "the long job's own queue is full")
        let shortQueued = try #require(ticket(worker.arrive(.cpu, job: "short", share: bob)), "the short job has a queue of its own")
        #expect(longQueued < shortQueued)
        // A long task ends: the short job, below its share (0 of 1 slot), goes first,
        // though the long job's attempt waited longer.
        #expect(worker.finish(.cpu, job: "long")?.ticket == shortQueued)
        #expect(worker.jobs(.cpu)["short"]?.running == 1 && worker.jobs(.cpu)["long"]?.running == 1)
        // Both hold their share now; the job whose task ended is below it, so its own next
        // attempt goes on, then the other's.
        let shortNext = try #require(ticket(worker.arrive(.cpu, job: "short", share: bob)))
        #expect(worker.finish(.cpu, job: "short")?.ticket == shortNext, "0 of 1 share against 1 of 1: the short job")
        #expect(worker.finish(.cpu, job: "long")?.ticket == longQueued)
        #expect(worker.inUse.cpu == 2 && worker.queued(.cpu) == 0)
    }

    @Test func theFreedPlaceFollowsOwnersThenWeights() throws {
        let worker = SharedAdmission(cpu: 6)
        let heavy = JobShare(owner: "ada", priority: 10), light = JobShare(owner: "ada", priority: 1), other = JobShare(owner: "bob", priority: 5)
        for _ in 0..<2 {
            for (job, share) in [("heavy", heavy), ("light", light), ("other", other)] { #expect(worker.arrive(.cpu, job: job, share: share) == .run) }
        }
        for (job, share) in [("heavy", heavy), ("light", light), ("other", other)] {
            _ = try #require(ticket(worker.arrive(.cpu, job: job, share: share)), "each job has a queue place")
        }
        // Owners first: ada's and bob's parts are 3 slots each; ada's 3 go 10 to 1.
        let shares = worker.shares(.cpu)
        #expect(shares["other"] == 3)
        #expect(abs(shares["heavy"]! - 30.0 / 11) < 1e-9 && abs(shares["light"]! - 3.0 / 11) < 1e-9)
        // A light task ends: bob's job (2 of 3) is further below its share than heavy (2 of 2.7).
        #expect(worker.finish(.cpu, job: "light")?.job == "other")
        // Another: light now runs nothing and waits: it is furthest below (0 of 0.27).
        #expect(worker.finish(.cpu, job: "light")?.job == "light")
        #expect(worker.finish(.cpu, job: "other")?.job == "heavy")
    }

    @Test func aFullQueueGivesWayToAJobBelowItsShare() throws {
        let worker = SharedAdmission(cpu: 1)
        #expect(worker.arrive(.cpu, job: "hog-0", share: ada) == .run)
        var waiting: [WorkerAdmission.Ticket] = []
        for index in 0..<WorkerAdmission.queuedJobsLimit {
            waiting.append(try #require(ticket(worker.arrive(.cpu, job: "hog-\(index)", share: ada))))
        }
        #expect(worker.queued(.cpu) == WorkerAdmission.queuedJobsLimit)
        // Bob has nothing here: his share is half the slot, and the queue is full of ada's.
        guard case .waitDisplacing(let mine, let displaced) = worker.arrive(.cpu, job: "bob-1", share: bob) else {
            Issue.record("bob's job should take a place from ada's, which hold more than their share")
            return
        }
        #expect(waiting.contains(displaced) && !waiting.contains(mine))
        #expect(worker.queued(.cpu) == WorkerAdmission.queuedJobsLimit, "the total stays bounded")
        // Bob's job again: its own queue is full, so nothing gives way.
        #expect(worker.arrive(.cpu, job: "bob-1", share: bob) == .busy)
        #expect(worker.withdraw(displaced) == false, "a displaced ticket no longer waits")
        #expect(worker.finish(.cpu, job: "hog-0")?.ticket == mine, "bob's owner is furthest below its share")
    }

    /// Two slots, four jobs that always have an attempt waiting: bob's and cy's (2/3 of a
    /// slot each) and ada's two (1/3 each). Every job is at 0 running when its turn comes,
    /// so the pass decides: places go 2:2:1:1, and a job of share `s` waits at most
    /// `2 / s` places for its next, plus one while its own attempt still runs (bob and cy
    /// at most 4, ada's jobs 7).
    @Test func jobsOfLessThanASlotsShareGetPlacesInProportionAndNoneIsPassedOverForGood() throws {
        let worker = SharedAdmission(cpu: 2)
        let shares = ["bob": bob, "cy": JobShare(owner: "cy"), "ada-1": ada, "ada-2": ada]
        #expect(worker.arrive(.cpu, job: "bob", share: bob) == .run)
        #expect(worker.arrive(.cpu, job: "cy", share: shares["cy"]!) == .run)
        for job in ["bob", "cy", "ada-1", "ada-2"] { _ = try #require(ticket(worker.arrive(.cpu, job: job, share: shares[job]!))) }
        var running = ["bob", "cy"], given: [String: Int] = [:], lastGiven: [String: Int] = [:], longestWait: [String: Int] = [:]
        for place in 0..<120 {
            // The older of the two running attempts ends; its job sends its next one.
            let ended = running.removeFirst()
            let next = try #require(worker.finish(.cpu, job: ended))
            running.append(next.job)
            given[next.job, default: 0] += 1
            longestWait[next.job] = max(longestWait[next.job] ?? 0, place - (lastGiven[next.job] ?? -1))
            lastGiven[next.job] = place
            _ = try #require(ticket(worker.arrive(.cpu, job: next.job, share: shares[next.job]!)), "\(next.job) queues its next attempt")
        }
        #expect(given == ["bob": 40, "cy": 40, "ada-1": 20, "ada-2": 20], "places given: \(given)")
        for (job, share) in worker.shares(.cpu) {
            #expect((longestWait[job] ?? .max) <= Int((2 / share).rounded()) + 1, "the most places between two of \(job)'s: \(longestWait)")
        }
    }

    @Test func aCapLowersAJobsShareAtTheWorker() {
        let worker = SharedAdmission(cpu: 4)
        for _ in 0..<4 { _ = worker.arrive(.cpu, job: "capped", share: JobShare(owner: "ada", maxSlots: 1)) }
        _ = worker.arrive(.cpu, job: "free", share: JobShare(owner: "ada"))
        #expect(worker.shares(.cpu) == ["capped": 1, "free": 1], "demands 1 (capped) and 1 (queued): both met")
    }

    @Test func aWorkerForgetsAJobOnceNothingOfItRunsOrWaits() throws {
        let worker = SharedAdmission(cpu: 1)
        #expect(worker.arrive(.cpu, job: "a", share: ada) == .run)
        let queued = try #require(ticket(worker.arrive(.cpu, job: "b", share: bob)))
        #expect(worker.withdraw(queued))
        #expect(worker.finish(.cpu, job: "a") == nil)
        #expect(worker.jobs(.cpu).isEmpty && worker.inUse.cpu == 0 && worker.queued(.cpu) == 0)
    }
}

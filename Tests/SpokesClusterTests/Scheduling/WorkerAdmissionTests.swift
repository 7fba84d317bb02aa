import SpokesTestKit
import Testing
@testable import SpokesCluster

/// A ``WorkerAdmission`` held by reference, so its mutating calls can sit inside `#expect`.
final class Admission {
    private(set) var machine: WorkerAdmission
    init(budgets: TaskBudgets) { machine = WorkerAdmission(budgets: budgets) }
    func arrive(_ cost: TaskCost) -> WorkerAdmission.Decision { machine.arrive(cost) }
    func finish(_ cost: TaskCost) -> WorkerAdmission.Ticket? { machine.finish(cost) }
    func withdraw(_ ticket: WorkerAdmission.Ticket) -> Bool { machine.withdraw(ticket) }
    var inUse: TaskBudgets { machine.inUse }
    func queued(_ cost: TaskCost) -> Int { machine.queued(cost) }
}

/// A worker's slots and queues, without a node: run, wait or busy, and who goes next.
@Suite struct WorkerAdmissionTests {
    @Test func queuesAreATenthOfTheBudgetAtLeastOneAndNoneBesideNoBudget() {
        #expect([0, 1, 9, 10, 11, 20, 2_000, 100_000].map(WorkerAdmission.queueLength(places:)) == [0, 1, 1, 1, 2, 2, 200, 10_000])
    }

    @Test func anAttemptRunsWhileTheBudgetHasRoomThenWaitsThenIsTurnedAwayBusy() throws {
        let worker = Admission(budgets: TaskBudgets(cpu: 2, waiting: 0))
        #expect(worker.arrive(.cpu) == .run)
        #expect(worker.arrive(.cpu) == .run)
        guard case .wait = worker.arrive(.cpu) else { Issue.record("the third waits in the queue"); return }
        #expect(worker.arrive(.cpu) == .busy, "two running, one queued: the queue of 2 slots has one place")
        #expect(worker.inUse == TaskBudgets(cpu: 2, waiting: 0) && worker.queued(.cpu) == 1)
        #expect(worker.arrive(.waiting) == .busy, "no waiting budget: no waiting task, whatever the cpu slots")
    }

    @Test func theTwoBudgetsAreEnforcedApart() {
        let worker = Admission(budgets: TaskBudgets(cpu: 1, waiting: 30))
        #expect(worker.arrive(.cpu) == .run)
        let waiting = (0..<30).map { _ in worker.arrive(.waiting) }
        #expect(waiting.allSatisfy { $0 == .run }, "a full cpu slot leaves the waiting slots free")
        #expect(worker.inUse == TaskBudgets(cpu: 1, waiting: 30))
        let queued = (0..<3).map { _ in worker.arrive(.waiting) }
        #expect(queued.allSatisfy { if case .wait = $0 { true } else { false } }, "30 waiting slots have 3 queue places")
        #expect(worker.arrive(.waiting) == .busy)
        #expect(worker.queued(.cpu) == 0)
        guard case .wait = worker.arrive(.cpu) else { Issue.record("a cpu task still finds its own queue place"); return }
    }

    @Test func aFreedPlacePassesToTheOldestWaitingAttemptOfTheSameCost() throws {
        let worker = Admission(budgets: TaskBudgets(cpu: 1, waiting: 1))
        #expect(worker.arrive(.cpu) == .run && worker.arrive(.waiting) == .run)
        guard case .wait(let cpuNext) = worker.arrive(.cpu), case .wait(let waitingNext) = worker.arrive(.waiting) else {
            Issue.record("both queue")
            return
        }
        #expect(worker.finish(.waiting) == waitingNext, "the waiting task's place goes to the waiting queue")
        #expect(worker.finish(.cpu) == cpuNext)
        #expect(worker.inUse == TaskBudgets(cpu: 1, waiting: 1), "a place passed on stays held")
        #expect(worker.finish(.cpu) == nil && worker.finish(.waiting) == nil)
        #expect(worker.inUse == .zero, "with nobody waiting the places are free")
        #expect(worker.finish(.cpu) == nil && worker.inUse == .zero, "an extra finish never goes below zero")
    }

    @Test func waitingAttemptsGoInArrivalOrder() throws {
        let worker = Admission(budgets: TaskBudgets(cpu: 30, waiting: 1))
        for _ in 0..<30 { _ = worker.arrive(.cpu) }
        let tickets = (0..<3).compactMap { _ -> WorkerAdmission.Ticket? in
            if case .wait(let ticket) = worker.arrive(.cpu) { ticket } else { nil }
        }
        #expect(tickets.count == 3)
        #expect((0..<3).map { _ in worker.finish(.cpu) } == tickets)
    }

    @Test func aCancelledWaitingAttemptLeavesTheQueueAndHoldsNothing() throws {
        let worker = Admission(budgets: TaskBudgets(cpu: 20, waiting: 1))
        for _ in 0..<20 { _ = worker.arrive(.cpu) }
        guard case .wait(let first) = worker.arrive(.cpu), case .wait(let second) = worker.arrive(.cpu) else {
            Issue.record("two queue")
            return
        }
        #expect(worker.withdraw(first))
        #expect(!worker.withdraw(first), "gone already")
        #expect(worker.queued(.cpu) == 1)
        #expect(worker.finish(.cpu) == second, "the cancelled one is skipped")
        #expect(!worker.withdraw(second), "it has its place: too late to leave the queue")
        #expect(worker.inUse.cpu == 20)
    }

    /// Seeded runs of arrivals, finishes and cancellations against a plain model: places in
    /// use never pass the budget, the queue never passes its length, an attempt waits only
    /// while the budget is full, and places are handed on in arrival order.
    @Test(arguments: 1...20 as ClosedRange<UInt64>)
    func neverMoreThanItsBudgetAndQueueWhateverArrives(seed: UInt64) {
        var generator = TestGenerator(seed: seed)
        let budgets = TaskBudgets(cpu: Int.random(in: 1...4, using: &generator), waiting: Int.random(in: 1...25, using: &generator))
        let worker = Admission(budgets: budgets)
        var running = TaskBudgets.zero
        var waiting: [TaskCost: [WorkerAdmission.Ticket]] = [.cpu: [], .waiting: []]
        for _ in 0..<2_000 {
            let cost: TaskCost = Bool.random(using: &generator) ? .cpu : .waiting
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                let full = running[cost] == budgets[cost]
                switch worker.arrive(cost) {
                case .run:
                    #expect(!full)
                    running[cost] += 1
                case .wait(let ticket):
                    #expect(full && waiting[cost]!.count < WorkerAdmission.queueLength(places: budgets[cost]))
                    waiting[cost]!.append(ticket)
                case .busy:
                    #expect(full && waiting[cost]!.count == WorkerAdmission.queueLength(places: budgets[cost]))
                case .waitDisplacing:
                    Issue.record("one job's attempt never displaces its own")
                }
            case 5..<9 where running[cost] > 0:
                let next = worker.finish(cost)
                #expect(next == waiting[cost]!.first, "the oldest waiting attempt of that cost goes next")
                if next != nil { waiting[cost]!.removeFirst() } else { running[cost] -= 1 }
            case 9:
                if let ticket = waiting[cost]!.randomElement(using: &generator) {
                    #expect(worker.withdraw(ticket))
                    waiting[cost]!.removeAll { $0 == ticket }
                }
            default:
                break
            }
            #expect(worker.inUse == running && worker.inUse.cpu <= budgets.cpu && worker.inUse.waiting <= budgets.waiting)
            #expect(worker.queued(.cpu) == waiting[.cpu]!.count && worker.queued(.waiting) == waiting[.waiting]!.count)
        }
    }
}

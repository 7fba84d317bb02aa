import SpokesTestKit
import Testing
@testable import SpokesCluster

/// A worker of a simulated cluster: a node name and an incarnation.
struct SimulatedWorker: Hashable, Sendable {
    var node: String
    var incarnation = 1
}

/// A ``Placement`` held by reference, so its mutating calls can sit inside `#expect`.
final class Coordinator {
    typealias Grant = Placement<SimulatedWorker>.Grant
    private(set) var machine: Placement<SimulatedWorker>
    init(local: SimulatedWorker, node: String, budgets: TaskBudgets) { machine = Placement(local: local, node: node, budgets: budgets) }
    func add(node: String, worker: SimulatedWorker, budgets: TaskBudgets) { machine.add(node: node, worker: worker, budgets: budgets) }
    func remove(node: String) { machine.remove(node: node) }
    func take(_ cost: TaskCost, avoiding: String? = nil, stillToSend: Int = .max, now: Double) -> Grant? {
        machine.take(cost, avoiding: avoiding, stillToSend: stillToSend, now: now)
    }
    func release(_ grant: Grant) { machine.release(grant) }
    func releaseBusy(_ grant: Grant, now: Double) -> Double { machine.releaseBusy(grant, now: now) }
    func inFlight(on node: String, cost: TaskCost? = nil) -> Int? { machine.inFlight(on: node, cost: cost) }
    var nodes: [String] { machine.nodes }
    var workers: [Placement<SimulatedWorker>.Load] { machine.workers }
    func totalSlots(_ cost: TaskCost) -> Int { machine.totalSlots(cost) }
    var busyCooldown: Double { machine.busyCooldown }
}

/// Where a coordinator's tasks go, without a node: workers are names, time is a number.
@Suite struct PlacementTests {
    typealias Worker = SimulatedWorker

    /// `w0` local, then `w1`, `w2`, ... with the same budgets.
    func cluster(_ count: Int, cpu: Int = 2, waiting: Int = 10) -> Coordinator {
        let placement = Coordinator(local: Worker(node: "w0"), node: "w0", budgets: TaskBudgets(cpu: cpu, waiting: waiting))
        for index in 1..<count {
            placement.add(node: "w\(index)", worker: Worker(node: "w\(index)"), budgets: TaskBudgets(cpu: cpu, waiting: waiting))
        }
        return placement
    }

    @Test func cpuTasksTakeEverySlotLocalFirstBeforeAnyQueuePlace() {
        let placement = cluster(2)
        let taken = (0..<6).compactMap { _ in placement.take(.cpu, now: 0) }
        #expect(taken.map(\.node) == ["w0", "w0", "w1", "w1", "w0", "w1"], "local slots, remote slots, then one queue place each")
        #expect(taken.map(\.isQueued) == [false, false, false, false, true, true])
        #expect(taken.map(\.isLocal) == [true, true, false, false, true, false])
        #expect(placement.take(.cpu, now: 0) == nil, "slots and queue places all taken")
    }

    @Test func waitingTasksSpreadOverTheWorkersLeastLoadedFirst() {
        let placement = cluster(3, waiting: 10)
        let taken = (0..<9).compactMap { _ in placement.take(.waiting, now: 0) }
        #expect(taken.map(\.node) == ["w0", "w1", "w2", "w0", "w1", "w2", "w0", "w1", "w2"])
        // A release makes that worker the least loaded.
        placement.release(taken[4])
        #expect(placement.take(.waiting, now: 0)?.node == "w1")
        // Load is measured against each worker's budget: one with twice the waiting slots
        // gets twice the tasks.
        let uneven = Coordinator(local: Worker(node: "a"), node: "a", budgets: TaskBudgets(cpu: 1, waiting: 10))
        uneven.add(node: "b", worker: Worker(node: "b"), budgets: TaskBudgets(cpu: 1, waiting: 20))
        let spread = (0..<30).compactMap { _ in uneven.take(.waiting, stillToSend: 0, now: 0)?.node }
        #expect(spread.count { $0 == "a" } == 10 && spread.count { $0 == "b" } == 20)
    }

    @Test func theBudgetsAreCountedApart() {
        let placement = cluster(1, cpu: 1, waiting: 3)
        #expect(placement.take(.cpu, stillToSend: 0, now: 0) != nil)
        #expect(placement.take(.cpu, stillToSend: 0, now: 0) == nil, "the one cpu slot is taken")
        let waiting = (0..<3).compactMap { _ in placement.take(.waiting, stillToSend: 0, now: 0) }
        #expect(waiting.count == 3 && waiting.allSatisfy { $0.cost == .waiting && !$0.isQueued })
        #expect(placement.inFlight(on: "w0", cost: .cpu) == 1 && placement.inFlight(on: "w0", cost: .waiting) == 3)
        #expect(placement.inFlight(on: "w0") == 4)
        #expect(placement.totalSlots(.cpu) == 1 && placement.totalSlots(.waiting) == 3)
    }

    @Test func queuePlacesOnlyWhileAWholeRoundIsStillToSend() {
        let placement = cluster(2, cpu: 2)
        for _ in 0..<4 { #expect(placement.take(.cpu, stillToSend: 0, now: 0)?.isQueued == false) }
        #expect(placement.take(.cpu, stillToSend: 3, now: 0) == nil, "less than a round (4 slots) still to send: no queue place")
        #expect(placement.take(.cpu, stillToSend: 0, now: 0) == nil, "a retry never queues")
        #expect(placement.take(.cpu, stillToSend: 4, now: 0)?.isQueued == true)
    }

    @Test func aRetryAvoidsTheNodeItFailedOnWhileAnotherIsOffered() {
        let placement = cluster(2, cpu: 1)
        #expect(placement.take(.cpu, avoiding: "w0", stillToSend: 0, now: 0)?.node == "w1")
        #expect(placement.take(.cpu, avoiding: "w0", stillToSend: 0, now: 0) == nil, "w1 is full: wait rather than go back to w0")
        placement.remove(node: "w1")
        #expect(placement.take(.cpu, avoiding: "w0", stillToSend: 0, now: 0)?.node == "w0", "with nobody else, the avoided node")
    }

    @Test func aWorkerThatAnsweredBusyIsSkippedForThatCostUntilItsCooldownEnds() throws {
        let placement = cluster(2, cpu: 1, waiting: 1)
        let onLocal = try #require(placement.take(.cpu, stillToSend: 0, now: 10))
        let onRemote = try #require(placement.take(.cpu, stillToSend: 0, now: 10))
        #expect(onRemote.node == "w1")
        let until = placement.releaseBusy(onRemote, now: 10)
        #expect(until == 10 + placement.busyCooldown)
        #expect(placement.take(.cpu, stillToSend: 0, now: 10.001) == nil, "w1 is cooling down, w0 is full")
        #expect(placement.take(.waiting, stillToSend: 0, now: 10.001) != nil, "busy for cpu says nothing of its waiting slots")
        #expect(placement.take(.waiting, stillToSend: 0, now: 10.001)?.node == "w1")
        #expect(placement.take(.cpu, stillToSend: 0, now: until)?.node == "w1", "the cool-down is over")
        placement.release(onLocal)
    }

    @Test func flappingMembershipNeverForgetsTasksInFlight() throws {
        let placement = cluster(2, cpu: 1)
        let taken = (0..<4).compactMap { _ in placement.take(.cpu, now: 0) }
        #expect(taken.map(\.node).sorted() == ["w0", "w0", "w1", "w1"], "a slot and a queue place on each")
        let w1 = Worker(node: "w1")
        let budgets = TaskBudgets(cpu: 1, waiting: 10)
        placement.add(node: "w1", worker: w1, budgets: budgets)
        placement.remove(node: "w1")
        #expect(placement.nodes == ["w0"] && placement.inFlight(on: "w1") == nil)
        placement.add(node: "w1", worker: w1, budgets: budgets)
        #expect(placement.inFlight(on: "w1") == 2, "the flapping forgot tasks in flight")
        #expect(placement.take(.cpu, now: 0) == nil, "a place was handed out beyond w1's slot and queue")
        // A new incarnation is another worker: it starts with none in flight, and the old
        // one's releases do not count against it.
        let reborn = Worker(node: "w1", incarnation: 2)
        placement.add(node: "w1", worker: reborn, budgets: budgets)
        #expect(placement.inFlight(on: "w1") == 0)
        let fresh = try #require(placement.take(.cpu, now: 0))
        #expect(fresh.node == "w1" && fresh.worker == reborn)
        for grant in taken where grant.node == "w1" { placement.release(grant) }
        #expect(placement.inFlight(on: "w1") == 1, "only the new incarnation's own task")
        #expect(placement.workers.count == 2, "the old incarnation, drained, is forgotten")
    }

    /// Seeded runs of membership changes (joins, flaps, deaths, new incarnations), takes,
    /// releases and busy answers, against a count of the grants outstanding: no worker ever
    /// has more tasks of a cost in flight than its budget plus queue places, and its count is
    /// exactly the grants not yet given back.
    @Test(arguments: 1...20 as ClosedRange<UInt64>)
    func aWorkerIsNeverSentMoreThanItsPlacesWhateverMembershipDoes(seed: UInt64) {
        var generator = TestGenerator(seed: seed)
        let budgets = TaskBudgets(cpu: 2, waiting: 5)
        let placement = Coordinator(local: Worker(node: "n0"), node: "n0", budgets: budgets)
        var incarnations = ["n1": 1, "n2": 1, "n3": 1]
        var outstanding: [Placement<Worker>.Grant] = []
        var now = 0.0
        for _ in 0..<3_000 {
            now += Double.random(in: 0...0.01, using: &generator)
            let node = ["n1", "n2", "n3"].randomElement(using: &generator)!
            let cost: TaskCost = Bool.random(using: &generator) ? .cpu : .waiting
            switch Int.random(in: 0..<20, using: &generator) {
            case 0: placement.add(node: node, worker: Worker(node: node, incarnation: incarnations[node]!), budgets: budgets)
            case 1: placement.remove(node: node)
            case 2:
                incarnations[node]! += 1
                placement.add(node: node, worker: Worker(node: node, incarnation: incarnations[node]!), budgets: budgets)
            case 3..<10:
                let avoiding = Bool.random(using: &generator) ? node : nil
                if let grant = placement.take(cost, avoiding: avoiding, stillToSend: Int.random(in: 0...40, using: &generator), now: now) {
                    outstanding.append(grant)
                }
            case 10..<19 where !outstanding.isEmpty:
                let grant = outstanding.remove(at: Int.random(in: 0..<outstanding.count, using: &generator))
                if Int.random(in: 0..<4, using: &generator) == 0 { _ = placement.releaseBusy(grant, now: now) } else { placement.release(grant) }
            default:
                break
            }
            for load in placement.workers {
                for cost in [TaskCost.cpu, .waiting] {
                    let held = outstanding.count { $0.worker == load.worker && $0.cost == cost }
                    #expect(load.inFlight[cost] == held, "\(load.worker) \(cost): counted \(load.inFlight[cost]), \(held) outstanding")
                    #expect(load.inFlight[cost] <= load.places(cost), "\(load.worker) \(cost) over its places")
                }
            }
            let counted = Set(placement.workers.map(\.worker))
            #expect(outstanding.allSatisfy { counted.contains($0.worker) }, "a worker with tasks in flight was forgotten")
        }
    }
}

extension PlacementTests {
    @Test func aLocalWorkerThatDoesNotRunTheKindGetsNothingAndStaysFirst() {
        var placement = Placement(local: Worker(node: "w0"), node: "w0", budgets: TaskBudgets(cpu: 4, waiting: 10), localOffered: false)
        #expect(placement.take(.cpu, now: 0) == nil, "nothing else offered: no place")
        placement.add(node: "w1", worker: Worker(node: "w1"), budgets: TaskBudgets(cpu: 1, waiting: 10))
        let grants = (0..<3).compactMap { _ in placement.take(.cpu, now: 0) }
        #expect(grants.map(\.node) == ["w1", "w1"], "w1's slot and its queue place, never w0")
        #expect(placement.nodes == ["w1"])
        placement.remove(node: "w1")
        for grant in grants { placement.release(grant) }
        #expect(placement.workers.map(\.node) == ["w0"], "the local entry stays first when the others drain")
    }
}

import SpokesConcurrency
import SpokesSimulatedCluster
import Synchronization
import SpokesTestKit
import Testing
@testable import SpokesSimulation

/// Whole nodes in the simulator (issue 28 §2): `NodesModel` plays seeds of three nodes
/// assembled as `spokes node` assembles them, with real clients and seeded crashes,
/// partitions and loss, in virtual time; `simulate-cluster --model nodes` plays more.
@Suite(.simulated, .serialized) struct NodesSimulationTests {
    @Test(.hangGuard)
    func threeNodesKeepEveryJobsInvariantsOverTwoSeeds() async {
        // Lighter than the command's seeds (two maps of four tasks, a bike job, one or two
        // faults): a few seconds each in a debug build.
        var options = NodesModel.Options(nodes: 3)
        options.maps = 2
        options.tasksPerMap = 4
        options.faultCount = 1...2
        for seed: UInt64 in 1...2 {
            let verdict = await NodesModel.play(seed: seed, options: options)
            #expect(verdict.violation == nil, "seed \(seed): \(verdict.violation ?? "") \n\(verdict.faults)\n\(verdict.trace.suffix(40).joined(separator: "\n"))")
        }
    }

    /// One map of eight tasks on three nodes, submitted at once and cancelled by its
    /// client `cancelAt` virtual s later, while `fault` (aimed at its coordinator) holds.
    static func cancelledMapScenario(seed: UInt64, cancelAt: Double, pausedFrom start: Double, for duration: Double) async -> NodesModel.Verdict {
        var options = NodesModel.Options(nodes: 3)
        options.maps = 1
        options.bikeJobs = 0
        options.submitWithin = 0...0
        options.cancelAfter = cancelAt...cancelAt
        let pause = NodesModel.Fault(kind: .pause, node: 0, atCoordinator: true, start: start, duration: duration, rate: 0)
        return await NodesModel.play(seed: seed, options: options, faults: [pause])
    }

    /// Issue 28's first client bug, found as seeds 3, 13, 63 and 84 of
    /// `simulate-cluster --model nodes --nodes 5`: the coordinator of a map is paused,
    /// the map's client cancels it meanwhile, another replica takes the job over; the
    /// paused one resumes, cannot commit the cancellation (it was deposed), stops the job
    /// and says so (`TaskJobError.takenOver`). The client, its task cancelled, stopped
    /// following at once and said `JobRefused` while the job ran to its end elsewhere.
    /// Now it follows the job, carries its cancellation to the member that runs it, and
    /// prints the report that member stored.
    @Test(.hangGuard)
    func aCancelledMapWhoseCoordinatorWasDeposedIsNeverToldRefused() async {
        for seed: UInt64 in 1...2 {
            // Paused for 2.5 s: the others elect within 1.2 s; the client's heartbeats
            // give up only after 3.2 s, so its cancellation reaches the deposed node.
            let verdict = await Self.cancelledMapScenario(seed: seed, cancelAt: 4, pausedFrom: 3, for: 2.5)
            Self.expectToldTheStoredCancelledReport(verdict)
        }
    }

    /// Issue 28's second client bug, found as seeds 37, 58, 66, 68, 80 and 85: the same,
    /// the coordinator paused for longer than the client's heartbeats wait (3.2 s). The
    /// client, its task cancelled, gave up at once with `CoordinatorLost` while the member
    /// that took the job over had been running it for 2 s and answered. Now it follows.
    @Test(.hangGuard)
    func aCancelledMapWhoseCoordinatorWasPausedIsFollowedToItsNewCoordinator() async {
        for seed: UInt64 in 1...2 {
            let verdict = await Self.cancelledMapScenario(seed: seed, cancelAt: 4, pausedFrom: 3, for: 6)
            Self.expectToldTheStoredCancelledReport(verdict)
        }
    }

    /// The scenario set up as planned (the map accepted before the pause), every
    /// invariant held, and the client printed the cancelled report that was stored.
    static func expectToldTheStoredCancelledReport(_ verdict: NodesModel.Verdict) {
        let trace = verdict.trace.joined(separator: "\n")
        let accepted = verdict.trace.firstIndex { $0.contains("map0 accepted by") }
        let paused = verdict.trace.firstIndex { $0.contains("FAULT pause") }
        #expect(accepted != nil && paused != nil && accepted! < paused!, "seed \(verdict.seed): the map was accepted before its coordinator was paused\n\(trace)")
        #expect(verdict.trace.contains { $0.contains("aimed at map0's coordinator") }, "seed \(verdict.seed)\n\(trace)")
        #expect(verdict.violation == nil, "seed \(verdict.seed): \(verdict.violation ?? "")\n\(trace)")
        #expect(verdict.trace.contains { $0.contains("map0 told:") && $0.contains("(job cancelled)") }, "seed \(verdict.seed): told the cancelled report\n\(trace)")
    }

    /// The four faults added last, one after another on three nodes while a map and a
    /// bike job run (each aimed at the map's coordinator): every invariant holds.
    @Test(.hangGuard)
    func delaySlowAndFullDisksAndAClockJumpKeepEveryJobsInvariants() async {
        var options = NodesModel.Options(nodes: 3)
        options.maps = 1
        options.tasksPerMap = 6
        options.cancelAfter = 1000...1000
        options.submitWithin = 0...0
        let faults = [
            NodesModel.Fault(kind: .delay, node: 1, atCoordinator: false, start: 0.5, duration: 2, rate: 0, amount: 0.2, everyHost: true),
            NodesModel.Fault(kind: .slowDisk, node: 0, atCoordinator: true, start: 3, duration: 2, rate: 0, amount: 0.3),
            NodesModel.Fault(kind: .fullDisk, node: 0, atCoordinator: true, start: 5.5, duration: 2, rate: 0, amount: 0),
            NodesModel.Fault(kind: .clockJump, node: 0, atCoordinator: true, start: 8, duration: 1, rate: 0, amount: 5),
        ]
        let verdict = await NodesModel.play(seed: 1, options: options, faults: faults)
        let trace = verdict.trace.joined(separator: "\n")
        for kind in ["delay", "slow-disk", "full-disk", "clock-jump"] {
            #expect(verdict.trace.contains { $0.contains("FAULT \(kind)") }, "\(kind) began\n\(trace)")
        }
        #expect(verdict.violation == nil, "\(verdict.violation ?? "")\n\(trace)")
    }

    /// The hardening issue's duplicate-name eviction (`MembershipModel`'s twin, now on the
    /// real nodes, `--scenario twin-name`): a second process with n1's name, a newer
    /// incarnation at its own address, starts while n1 runs a map. Its greeting is refused
    /// (`NameConflict`) and it yields the name; no observer replaces n1, which runs and is
    /// heard from, by the twin, checked after every event (``NodesSafety``).
    @Test(.hangGuard)
    func aTwinOfALiveNodesNameIsRefusedAndYields() async {
        var options = NodesModel.Options.twinName(nodes: 3)
        options.maps = 1
        options.tasksPerMap = 4
        options.bikeJobs = 0
        options.submitWithin = 0...0
        options.twinAt = 0.5
        let verdict = await NodesModel.play(seed: 1, options: options, faults: [])
        let trace = verdict.trace.joined(separator: "\n")
        #expect(verdict.trace.contains { $0.contains("a twin of n1 starts") }, "\(trace)")
        #expect(verdict.trace.contains { $0.contains("the twin of n1 yields the name") }, "\(trace)")
        #expect(verdict.violation == nil, "\(verdict.violation ?? "")\n\(trace)")
    }

    @Test func aNodesClockJumpWakesItsTimersDueByThenAndNoOneElses() async throws {
        let clock = VirtualClock()
        let node = PausableClock(base: clock), other = PausableClock(base: clock)
        let woke = Woken()
        @Sendable func sleeper(_ name: String, _ clock: PausableClock, _ seconds: Double) -> Task<Void, any Error> {
            Task {
                try await clock.sleep(for: seconds)
                woke.add(name)
            }
        }
        let sleepers = [sleeper("node 2", node, 2), sleeper("node 9", node, 9), sleeper("other 2", other, 2)]
        while clock.sleepers < 3 { await Task.yield() }
        let wall = node.unixNow
        #expect(node.jump(by: 5, wallBy: -30) == 1, "its timer due within 5 s fires at once")
        try await sleepers[0].value
        #expect(woke.names == ["node 2"])
        #expect(clock.now == 0 && other.now == 0 && node.now == 5, "only its own clock leapt")
        #expect(node.unixNow == wall - 30, "its wall clock went back")
        clock.advance(by: 2)
        try await sleepers[2].value
        clock.advance(by: 2)
        try await sleepers[1].value
        #expect(woke.names == ["node 2", "other 2", "node 9"], "its later timer is due 5 s early, at 4 on the shared clock")
        node.resetWallClock()
        #expect(node.unixNow == clock.unixNow && node.now == clock.now + 5, "NTP steps its wall clock in line; its monotonic clock keeps its leap")
    }

    @Test func aPausedNodesDeadlinesFireInTurnWhenItResumesUnlessTakenBack() async throws {
        let clock = VirtualClock()
        let node = PausableClock(base: clock)
        let fired = Mutex<[String]>([])
        node.pause()
        _ = node.startTimer(after: 1) { fired.withLock { $0.append("first") } }
        let takenBack = node.startTimer(after: 1.5) { fired.withLock { $0.append("taken back while it waited") } }
        let sleeper = Task {
            try await node.sleep(for: 1.2)
            fired.withLock { $0.append("sleeper") }
        }
        _ = node.startTimer(after: 1.8) { fired.withLock { $0.append("last") } }
        while clock.sleepers < 4 { await Task.yield() }
        clock.advance(by: 2)
        for _ in 0..<1000 { await Task.yield() }
        #expect(fired.withLock { $0 }.isEmpty, "a paused node's deadlines do not fire")
        takenBack.cancel()
        node.resume()
        try await sleeper.value
        #expect(fired.withLock { $0 } == ["first", "last", "sleeper"], "they fire late, in the order they came due (the sleeper resumed between them, its task runs after)")
        // Not paused, a jump of its clock brings a deadline forward.
        _ = node.startTimer(after: 10) { fired.withLock { $0.append("jumped to") } }
        #expect(node.jump(by: 10) == 1)
        #expect(fired.withLock { $0.last } == "jumped to")
    }

    @Test func aPausedNodesTimersWakeOnlyWhenItResumes() async throws {
        let clock = VirtualClock()
        let node = PausableClock(base: clock)
        let woke = Mutex<[String]>([])
        node.pause()
        let sleeper = Task {
            try await node.sleep(for: 1)
            woke.withLock { $0.append("node at \(clock.now)") }
        }
        // Wait until it sleeps on the shared clock, then move past its deadline.
        while clock.sleepers == 0 { await Task.yield() }
        clock.advance(by: 2)
        for _ in 0..<1000 { await Task.yield() }
        #expect(woke.withLock { $0 }.isEmpty, "a paused node's timer does not wake")
        #expect(node.now == 2, "its time moves on")
        node.resume()
        try await sleeper.value
        #expect(woke.withLock { $0 } == ["node at 2.0"], "it wakes, late, when the node resumes")
        // A cancelled sleeper of a paused node ends at once with CancellationError.
        node.pause()
        let cancelled = Task { try await node.sleep(for: 0) }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        node.resume()
    }

    @Test func aSeedDrawsItsFaultsOneAfterAnother() {
        let options = NodesModel.Options(nodes: 5)
        for seed: UInt64 in 1...50 {
            let plan = NodesModel.plan(seed: seed, options: options)
            #expect(plan == NodesModel.plan(seed: seed, options: options), "the same seed, the same plan")
            #expect(options.faultCount.contains(plan.count))
            for (earlier, later) in zip(plan, plan.dropFirst()) { #expect(earlier.end <= later.start, "faults do not overlap") }
            #expect(plan.allSatisfy { (0..<5).contains($0.node) })
            #expect(plan.allSatisfy { !($0.kind == .loss && $0.atCoordinator) }, "loss hits no node")
        }
    }
}

/// The names of the sleepers that woke, in the order they woke.
private final class Woken: Sendable {
    private let state = Mutex<[String]>([])
    func add(_ name: String) { state.withLock { $0.append(name) } }
    var names: [String] { state.withLock { $0 } }
}

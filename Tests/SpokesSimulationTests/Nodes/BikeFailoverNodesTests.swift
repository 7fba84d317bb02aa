import SpokesTestKit
import Testing
@testable import SpokesSimulation

/// A bike job failing over on whole nodes (issue 19 §3, issue 28 §2): the real
/// job desk, `ReplicatedTaskJobs` and `BikeJobService` of three nodes assembled as `spokes node`
/// assembles them, the faults aimed at the coordinator of the running job; every
/// replica's book is checked after every event (``NodesSafety``), the stored report and
/// what the client was told at the end. These were `BikeFailoverModel`'s scenarios, played
/// on a copy of the coordinator.
@Suite(.simulated, .serialized) struct BikeFailoverNodesTests {
    /// One bike job of six users on three nodes, submitted at once, under `faults`.
    static func play(_ faults: [NodesModel.Fault], seed: UInt64 = 1, adjust: (inout NodesModel.Options) -> Void = { _ in }) async -> NodesModel.Verdict {
        var options = NodesModel.Options.bikeFailover(nodes: 3)
        options.bikeJobs = 1
        options.bikeUsers = 6...6
        options.bikePaths = 12
        options.submitWithin = 0...0
        adjust(&options)
        return await NodesModel.play(seed: seed, options: options, faults: faults)
    }

    static func expectEveryUserOnce(_ verdict: NodesModel.Verdict, _ what: String) {
        let trace = verdict.trace.joined(separator: "\n")
        #expect(verdict.trace.contains { $0.contains("aimed at bike0's coordinator") }, "\(what): the fault hit the running job's coordinator\n\(trace)")
        // Its client had every user, or (its coordinator and its own node cut off until
        // after its patience) gave up truthfully; the stored report has every user once.
        #expect(verdict.trace.contains { $0.contains("bike0 told: 6 of 6 users") || $0.contains("bike0: no reachable member runs it") },
                "\(what): the client had every user\n\(trace)")
        #expect(verdict.trace.contains { $0.contains("bike0 stored on") }, "\(what): the job's report was stored\n\(trace)")
        #expect(verdict.violation == nil, "\(what): \(verdict.violation ?? "")\n\(trace)")
    }

    /// The node coordinating a running bike job crashes, keeping half of each file's
    /// unflushed bytes (a torn write), and restarts; another replica takes the job over
    /// from the committed book, and the client, which followed the job, is told every user.
    @Test(.hangGuard)
    func aBikeJobWhoseCoordinatorCrashesWithATornWriteEndsWithEveryUserOnce() async {
        let verdict = await Self.play([NodesModel.Fault(kind: .crash, node: 0, atCoordinator: true, start: 0.8, duration: 3, rate: 0.5)])
        #expect(verdict.trace.contains { $0.contains("bike0 told: 6 of 6 users") }, "the client had every user\n\(verdict.trace.joined(separator: "\n"))")
        Self.expectEveryUserOnce(verdict, "a crash with a torn write")
    }

    /// The coordinator is cut off (it goes on making moves it cannot commit until it
    /// steps down), and while the other two elect a new leader, one of them is cut off
    /// too for a moment, at a different point of the election each time: the take-over
    /// waits for the election, and the job ends with every user once.
    @Test(.hangGuard)
    func aPartitionDuringAnElectionDelaysTheTakeOverOnly() async {
        for (seed, offset) in [(UInt64(1), 0.6), (2, 1.0), (3, 1.4)] {
            let verdict = await Self.play([
                NodesModel.Fault(kind: .partition, node: 0, atCoordinator: true, start: 0.8, duration: 4, rate: 0),
                NodesModel.Fault(kind: .partition, node: 1, atCoordinator: false, start: 0.8 + offset, duration: 0.6, rate: 0, besideCoordinator: true),
            ], seed: seed)
            Self.expectEveryUserOnce(verdict, "seed \(seed), the second cut \(offset) s into the first")
        }
    }

    /// The coordinator is paused (as `SIGSTOP` stops it) past the others' election: it
    /// resumes believing it leads its stale term, where it can commit nothing (Raft allows
    /// such a leader; `RaftSimulationTests.aStaleTermsLeaderIsNoViolation` is the checker's
    /// side), steps down, and the job ends with every user once, from the committed book.
    @Test(.hangGuard)
    func aStaleTermsLeaderCommitsNothing() async {
        for seed: UInt64 in 1...2 {
            let verdict = await Self.play([NodesModel.Fault(kind: .pause, node: 0, atCoordinator: true, start: 0.8, duration: 3, rate: 0)], seed: seed)
            Self.expectEveryUserOnce(verdict, "seed \(seed)")
        }
    }

    /// The checker's own test: a batch of the job's epoch made from a book that is not the
    /// committed one (user 0's result from an attempt the committed book never began, as a
    /// coordinator that took the job over from an uncommitted book would count it) is
    /// caught as soon as it applies.
    @Test(.hangGuard)
    func theInvariantsCatchABatchMadeFromAnotherBookThanTheCommittedOne() async {
        let verdict = await Self.play([]) { $0.staleBatchAt = 0.5 }
        let trace = verdict.trace.joined(separator: "\n")
        #expect(verdict.trace.contains { $0.contains("SABOTAGE") }, "the stale batch was proposed\n\(trace)")
        #expect(verdict.violation?.contains("a coordinator made a batch from a book that is not the committed one") == true, "\(verdict.violation ?? "no violation")\n\(trace)")
    }
}

import SpokesClusterTestKit
import SpokesConcurrency
import Synchronization
import Testing
import SpokesCluster
@testable import SpokesJobs

/// How a client follows a job whose coordinator it lost (``LostJobFollower``), on a
/// simulated cluster in virtual time, with the members' answers scripted.
@Suite struct LostJobFollowerTests {
    /// Issue 28, `simulate-cluster --model nodes` seed 214: the lost coordinator, cut off,
    /// never answers; the member that takes the job over says "unknown" at first and runs
    /// it a second later. The follower asked the members one after another, each question
    /// bounded by the patience left, so the silent coordinator used the whole patience and
    /// the client gave up (``CoordinatorLost``) while the job ran, and answered, elsewhere.
    /// Each member is now asked on its own: the job is followed to its end.
    @Test func aSilentMemberDoesNotHoldBackTheMemberThatTookTheJobOver() async throws {
        let cluster = try SimulatedCluster(2, prefix: "f")
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let client = try cluster.client()
        let taker = cluster[0].system.node.name
        let start = cluster.clock.now
        let clock = cluster.clock
        let asked = Mutex<[String: Int]>([:])
        let follower = LostJobFollower(system: client, questionTimeout: 30, patience: 3)
        // The taker first, as the client's list of members has it; the lost coordinator last.
        let addresses = [cluster[0].system.address.description, cluster[1].system.address.description]
        let followed = try await cluster.complete("the follow", within: 20) {
            await follower.follow(at: addresses) { node -> LostJobFollower.Answer<String> in
                asked.withLock { $0[node.name, default: 0] += 1 }
                guard node.name == taker else {
                    // The lost coordinator: its answer never comes within a question's bound.
                    try await clock.sleep(for: 60)
                    return .unknown
                }
                let since = clock.now - start
                return since < 1 ? .unknown : since < 5 ? .running : .ended("the report")
            }
        }
        guard case .ended(let report) = followed else {
            Issue.record("the follower gave up (\(followed)) while \(taker) ran the job; asked: \(asked.withLock { $0 })")
            return
        }
        #expect(report == "the report")
        #expect(asked.withLock { $0[taker] ?? 0 } >= 3, "the taker was asked again while the other stayed silent")
    }

    /// Nobody knows the job (it was not replicated, and its coordinator is cut off): the
    /// follower gives up after its patience, however long a question to the silent
    /// coordinator may take, and says so.
    @Test func noMemberKnowingTheJobEndsTheFollowWithinThePatience() async throws {
        let cluster = try SimulatedCluster(2, prefix: "g")
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let client = try cluster.client()
        let clock = cluster.clock
        let silent = cluster[1].system.node.name
        let follower = LostJobFollower(system: client, questionTimeout: 30, patience: 3)
        let addresses = cluster.nodes.map { $0.system.address.description }
        let start = clock.now
        let followed = try await cluster.complete("the follow", within: 20) {
            await follower.follow(at: addresses) { node -> LostJobFollower.Answer<String> in
                if node.name == silent { try await clock.sleep(for: 60) }
                return .unknown
            }
        }
        guard case .notFound = followed else {
            Issue.record("want not found, got \(followed)")
            return
        }
        #expect(clock.now - start <= 3.6, "given up within the patience and a round: \(clock.now - start) s")
    }
}

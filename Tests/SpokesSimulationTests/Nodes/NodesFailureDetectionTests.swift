import SpokesCluster
import SpokesSimulatedCluster
import SpokesTestKit
import Testing
@testable import SpokesSimulation

/// "A member nothing arrived from for longer than the suspect timeout is not shown alive
/// by an observer whose ticks ran on time" (``NodesFailureDetection``, checked by
/// ``NodesSafety`` after every event), on the real nodes: caught when a node's membership
/// keeps a paused member alive, silent on a correct run of the same plan, and blind to
/// nothing the membership takes as news (a helper's relayed probe answers).
@Suite(.simulated, .serialized) struct NodesFailureDetectionTests {
    /// One map on three nodes, submitted at once, while n2 is paused for 3 s from 2 s.
    static func pausedMember(adjust: (inout NodesModel.Options) -> Void = { _ in }) async -> NodesModel.Verdict {
        var options = NodesModel.Options(nodes: 3)
        options.maps = 1
        options.tasksPerMap = 4
        options.bikeJobs = 0
        options.submitWithin = 0...0
        options.cancelAfter = 1000...1000
        adjust(&options)
        let pause = NodesModel.Fault(kind: .pause, node: 2, atCoordinator: false, start: 2, duration: 3, rate: 0)
        return await NodesModel.play(seed: 1, options: options, faults: [pause])
    }

    @Test(.hangGuard)
    func aNodeThatKeepsAPausedMemberAliveIsCaught() async {
        // n0's membership suspects only after a hundred times the cluster's suspect
        // timeout: it shows n2 alive through the pause.
        let verdict = await Self.pausedMember { $0.slowSuspicionOf = 0 }
        let trace = verdict.trace.joined(separator: "\n")
        #expect(verdict.trace.contains { $0.contains("SABOTAGE") }, "the sabotage was made\n\(trace)")
        let violation = verdict.violation ?? ""
        #expect(violation.contains("n0 shows n2#") && violation.contains("alive after its tick") && violation.contains("nothing arrived from it for"),
                "\(verdict.violation ?? "no violation")\n\(trace)")
        #expect(verdict.trace.contains { $0.contains("FAULT pause n2") }, "caught during the pause\n\(trace)")
    }

    @Test(.hangGuard)
    func aCorrectRunOfTheSamePlanPasses() async {
        let verdict = await Self.pausedMember()
        let trace = verdict.trace.joined(separator: "\n")
        #expect(verdict.trace.contains { $0.contains("FAULT ENDS pause n2") }, "the pause ended\n\(trace)")
        #expect(verdict.violation == nil, "\(verdict.violation ?? "")\n\(trace)")
    }

    /// n0 and n2 cut off from each other, n1 reaching both: n0 probes n2 through n1, whose
    /// relayed answers are all n0 hears of n2, and keeps it alive. Those count as news of
    /// n2 (nothing arrives from n2's host), so the check passes where a record of direct
    /// arrivals alone would blame n0.
    @Test(.hangGuard)
    func aMemberVouchedForByAHelpersRelayedAnswersIsNotSilent() async throws {
        let cluster = try SimulatedCluster(3)
        defer { cluster.stop() }
        let settings = cluster[0].settings
        let detection = NodesFailureDetection(cluster: cluster, suspectTimeout: settings.suspectTimeout, heartbeatInterval: settings.heartbeatInterval)
        try await cluster.awaitMesh()
        cluster.network.cut(between: SimulatedCluster.host(0), and: SimulatedCluster.host(2))
        let observers = cluster.nodes.enumerated().map { (index: $0.offset, node: $0.element) }
        var broken: String?
        let end = cluster.clock.now + 4
        try await cluster.run(until: "4 s of the cut", within: 5) {
            broken = broken ?? detection.check(observers)
            return cluster.clock.now >= end
        }
        #expect(broken == nil, "\(broken ?? "")")
        #expect(cluster[0].members.first { $0.node.name == "n2" }?.state == .alive, "n0 keeps n2 alive on n1's relayed answers")
        let now = cluster[0].system.runtime.clock.now
        let direct = detection.lastArrival(at: 0, from: 2) ?? -.infinity
        #expect(now - direct > 3, "nothing arrived at n0 from n2's host for \(now - direct) s")
    }

    /// What the record of arrivals keys hosts by: ``SimulatedCluster/host(_:)``'s index.
    @Test func aHostsIndexIsReadFromItsAddress() {
        for index in [0, 2, 9, 253] {
            #expect(SimulatedCluster.hostIndex(of: SimulatedCluster.host(index)) == index)
            #expect(SimulatedCluster.hostIndex(of: SimulatedCluster.host(index) + ":7000") == index)
        }
        for other in ["", "127.0.0.0", "127.0.1.3", "203.0.113.1", "127.0.0.1000", "127.0.0.", "127.0.0.3x", "n1", ":7000", "127.0.0.3.4", "127.0.0:3", "128.0.0.3", "127.0.0.:7000", "127.0.0.0:7000"] {
            #expect(SimulatedCluster.hostIndex(of: other) == nil, "\(other)")
        }
    }
}

import SpokesClusterTestKit
import SpokesConcurrency
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCluster

/// The nodes that ship (discovery, handshake, heartbeats, probes, membership, calls) on a
/// simulated network under a virtual clock: what the process lane tests in real time and
/// on real sockets, here in the unit lane, with bounds in virtual seconds.
@Suite(.simulated, .hangGuard)
struct ClusterNodeInVirtualTimeTests {
    @Test func threeNodesFindEachOtherByBeaconsWithinAFewBeaconIntervals() async throws {
        let cluster = try SimulatedCluster(3)
        defer { cluster.stop() }
        let start = cluster.clock.now
        try await cluster.awaitMesh()
        #expect(cluster.clock.now - start < 1, "beacons every 50 ms and an answer at once: \(cluster.clock.now - start) s")
        #expect(cluster[0].members.map(\.node.name) == ["n1", "n2"])
        
    }

    /// A shell that waits on the machine's clock inside the simulation fails the run at
    /// the next step of time, naming the wait: virtual time would not wake it.
    @Test func aWaitOnTheMachinesClockInsideTheSimulationFailsTheRun() async throws {
        let cluster = try SimulatedCluster(1)
        defer { cluster.stop() }
        let timer = RealClock().startTimer(after: 30) {}
        defer { timer.cancel() }
        await #expect(throws: RealTimeInSimulation.self) { try await cluster.settle() }
        try await cluster.settle()
        let slept = Task { try? await RealClock().sleep(for: 0.001) }
        await #expect(throws: RealTimeInSimulation.self) { try await cluster.run(for: 0.1) }
        await slept.value
        // The node's own clock is the simulation's: no failure.
        try await cluster.complete("a sleep on the node's clock", within: 1) { try await cluster[0].system.runtime.clock.sleep(for: 0.5) }
    }

    /// ``ClusterNode/membershipChanges`` counts the observations the membership is handed
    /// (the only way its members change): it moves as the nodes find each other and with
    /// every tick and beacon after, and stays once the node stopped, its members as they
    /// were. The simulator's membership check skips an observer whose count stayed.
    @Test func theMembershipsChangeCountMovesWithEveryObservationAndOnlyThen() async throws {
        let cluster = try SimulatedCluster(3)
        defer { cluster.stop() }
        let node = cluster[0]
        try await cluster.awaitMesh()
        var seen = node.membershipChanges.value
        #expect(seen > 0, "joining the others took observations")
        for _ in 0..<3 {
            try await cluster.run(for: node.settings.heartbeatInterval)
            #expect(node.membershipChanges.value > seen, "a tick is an observation")
            seen = node.membershipChanges.value
        }
        // Without waiting for the goodbyes (the synchronous stop).
        let stopNow: () -> Void = { node.stop() }
        stopNow()
        let stopped = (node.membershipChanges.value, node.members)
        try await cluster.run(for: 1)
        #expect(node.membershipChanges.value == stopped.0 && node.members == stopped.1, "a stopped node observes nothing")
    }

    @Test func aNodeCutOffIsDeclaredDeadWithinDeadAfterAndTwoIntervalsAndReturnsWhenHealed() async throws {
        let cluster = try SimulatedCluster(3)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let settings = cluster[0].settings
        let cut = cluster.clock.now
        cluster.network.cut(between: SimulatedCluster.host(0), and: SimulatedCluster.host(2))
        cluster.network.cut(between: SimulatedCluster.host(1), and: SimulatedCluster.host(2))
        try await cluster.run(until: "n0 sees n2 dead", within: 10) {
            cluster[0].members.first { $0.node.name == "n2" }?.state == .dead
        }
        let verdict = cluster.clock.now - cut
        #expect(verdict >= settings.deadTimeout - settings.heartbeatInterval, "not before its silence: \(verdict) s")
        #expect(verdict <= settings.deadTimeout + 2 * settings.heartbeatInterval, "within dead_after and two intervals: \(verdict) s")
        #expect(cluster[0].members.first { $0.node.name == "n1" }?.state == .alive, "n1 was never cut off")
        cluster.network.heal()
        try await cluster.run(until: "every node sees the two others alive again", within: 10) {
            cluster.nodes.allSatisfy { $0.members.count { $0.state == .alive } == 2 }
        }
    }

    @Test func aGlitchShorterThanThePromiseDeclaresNobodyDead() async throws {
        let cluster = try SimulatedCluster(3)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let settings = cluster[0].settings
        // The promise (README): a glitch shorter than dead_after minus two intervals costs nothing.
        let glitch = settings.deadTimeout - 2 * settings.heartbeatInterval - 0.05
        let judged = Mutex<[String]>([])
        func watch() {
            for node in cluster.nodes {
                for member in node.members where member.state == .dead || member.state == .left {
                    judged.withLock { $0.append("\(node.system.node.name) saw \(member.node.name) \(member.state)") }
                }
            }
        }
        cluster.network.cut(between: SimulatedCluster.host(0), and: SimulatedCluster.host(1))
        let healAt = cluster.clock.now + glitch
        try await cluster.run(until: "the glitch ends", within: glitch + 1) {
            watch()
            return cluster.clock.now >= healAt
        }
        cluster.network.heal()
        let end = cluster.clock.now + 3
        try await cluster.run(until: "3 s after the glitch", within: 4) {
            watch()
            return cluster.clock.now >= end
        }
        #expect(judged.withLock { $0 } == [], "a glitch of \(glitch) s")
    }

    /// Each node heartbeats each peer every interval and that alone keeps it heard; one
    /// heartbeat in ``WireMessage/Heartbeat/acknowledgedEvery`` is answered, which times
    /// the round trip. Answering every one doubled an idle cluster's frames.
    @Test func anIdleClusterAnswersOneHeartbeatInFiveAndStillTimesItsRoundTrips() async throws {
        let cluster = try SimulatedCluster(3)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let settings = cluster[0].settings
        let before = cluster[0].system.traffic.counts
        let seconds = 4.0
        try await cluster.run(for: seconds)
        let received = cluster[0].system.traffic.counts.framesReceived - before.framesReceived
        let rounds = seconds / settings.heartbeatInterval
        let expected = 2 * rounds * (1 + 1 / Double(WireMessage.Heartbeat.acknowledgedEvery))
        #expect(abs(Double(received) - expected) <= 6, "two peers' heartbeats and one answer in five of n0's: want about \(expected) frames, got \(received)")
        #expect(cluster.nodes.allSatisfy { $0.members.count { $0.state == .alive } == 2 }, "nobody suspected")
        #expect(cluster.nodes.allSatisfy { $0.system.heartbeatRoundTrips.count == 2 }, "every node timed both peers")
    }

    /// A heartbeat goes only on a connection that sent nothing for a quarter interval: any
    /// frame refreshes the peer's `lastReceived` as a heartbeat does, so on a busy
    /// connection it would be a frame (a write, a wake-up) for nothing. The heartbeats
    /// that ask for an answer always go (they time the round trip).
    @Test func aConnectionBusyWithCallsCarriesOnlyTheHeartbeatsThatAskForAnAnswer() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let settings = cluster[0].settings
        let peer = try #require(cluster[0].members.first)
        let status = try NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: cluster[0].system)
        let seconds = 4.0
        let gap = settings.heartbeatInterval / 8
        let answered = Atomic(0)
        let calls = Task {
            for _ in 0..<Int(seconds / gap) {
                _ = try await status.members()
                answered.add(1, ordering: .relaxed)
                try await cluster.clock.sleep(for: gap)
            }
        }
        let before = cluster[1].system.traffic.counts.framesReceived
        try await cluster.complete("the calls", within: seconds * 2) { try await calls.value }
        let received = cluster[1].system.traffic.counts.framesReceived - before
        let beyondCalls = received - answered.load(ordering: .relaxed)
        let rounds = seconds / settings.heartbeatInterval
        let asking = 2 * rounds / Double(WireMessage.Heartbeat.acknowledgedEvery)
        #expect(Double(beyondCalls) <= asking + 4, "n0's asking heartbeats and the answers to n1's: want about \(asking) frames beside the calls, got \(beyondCalls)")
        #expect(cluster.nodes.allSatisfy { $0.members.count { $0.state == .alive } == 1 }, "nobody suspected")
        #expect(cluster.nodes.allSatisfy { $0.system.heartbeatRoundTrips.count == 1 }, "both ends still time the round trip")
    }

    @Test func aNodeCallsAnotherOverTheSimulatedNetwork() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let peer = try #require(cluster[0].members.first)
        let status = try NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: cluster[0].system)
        let answer = Mutex<[String]?>(nil)
        let call = Task { answer.withLock { $0 = nil }; let members = try await status.members(); answer.withLock { $0 = members.map(\.name) } }
        try await cluster.run(until: "n1 answers", within: 5) { answer.withLock { $0 } != nil }
        try await call.value
        #expect(answer.withLock { $0 } == ["n1", "n0"])
    }

    @Test func aCallToANodeThatFellSilentFailsOnceItIsDeclaredDead() async throws {
        let cluster = try SimulatedCluster(2)
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        let peer = try #require(cluster[0].members.first)
        let status = try NodeStatus.resolve(id: ActorID(node: peer.node, name: NodeStatus.wellKnownName), using: cluster[0].system)
        cluster.network.cut(between: SimulatedCluster.host(0), and: SimulatedCluster.host(1))
        /// The call's error's words, or "answered".
        let outcome = Mutex<String?>(nil)
        let failed = Mutex(false)
        let call = Task {
            do {
                _ = try await status.members()
                outcome.withLock { $0 = "answered" }
            } catch {
                failed.withLock { $0 = error is RemoteCallError }
                outcome.withLock { $0 = "\(error)" }
            }
        }
        let start = cluster.clock.now
        try await cluster.run(until: "the call to the silent node ends", within: 40) { outcome.withLock { $0 } != nil }
        await call.value
        let waited = cluster.clock.now - start
        let words = outcome.withLock { $0 } ?? ""
        #expect(failed.withLock { $0 }, "a call across a cut link fails with a RemoteCallError: \(words)")
        #expect(waited < cluster[0].settings.callTimeout, "it ends with the verdict, not at the call's deadline: \(waited) s (\(words))")
    }
}

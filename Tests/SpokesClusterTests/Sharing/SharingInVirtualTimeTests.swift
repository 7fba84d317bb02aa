import SpokesJobs
import SpokesClusterTestKit
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCluster

/// Several people on one cluster (issue 32), with real nodes on a simulated network in
/// virtual time: a short job submitted behind a long one runs at its share from the
/// next places that free, not after the long job's queue drains.
@Suite(.simulated) struct SharingInVirtualTimeTests {
    /// A task of 0.2 s of virtual time (`test.cube` sleeps number - 1000 ms).
    private static let fifthOfASecond = CubeTask.Input(number: 1200)

    private func startNodes() async throws -> SimulatedCluster {
        let cluster = try SimulatedCluster(2, prefix: "s", configure: { $1.slots = 2 }, registry: { _ in TaskRegistry(kinds: [CubeTask()]) })
        try await cluster.awaitMesh()
        return cluster
    }

    private func connect(to node: ClusterNode, in cluster: SimulatedCluster) async throws -> ClusterClient {
        try await cluster.clusterClient(to: node, registry: TaskRegistry(kinds: [CubeTask()])) { $0.taskDeadline = SchedulingTests.noDeadline }
    }

    /// Virtual seconds a map of `count` 0.2 s tasks takes, submitted now by `client`.
    private func timeShortJob(_ client: ClusterClient, in cluster: SimulatedCluster, count: Int = 20, owner: String) async throws -> Double {
        let start = cluster.clock.now
        let inputs = Array(repeating: Self.fifthOfASecond, count: count)
        let outputs = try await cluster.complete("the short job", within: 60) {
            try await client.map(CubeTask.self, over: inputs, share: JobShare(owner: owner))
        }
        #expect(outputs.count == count)
        return cluster.clock.now - start
    }

    @Test func aShortJobBehindALongOneRunsAtItsShareNotAfterIt() async throws {
        let cluster = try await startNodes()
        defer { cluster.stop() }
        let ada = try await connect(to: cluster[0], in: cluster)
        let bob = try await connect(to: cluster[1], in: cluster)
        // Alone: 20 tasks on 4 slots, 5 rounds of 0.2 s.
        let alone = try await timeShortJob(bob, in: cluster, owner: "bob")
        #expect(alone < 1.5, "alone: \(alone) s")

        // Ada's long job: 400 tasks, 20 s on the whole cluster; coordinated by s0.
        let longInputs = Array(repeating: Self.fifthOfASecond, count: 400)
        let long = Task { try await ada.map(CubeTask.self, over: longInputs, share: JobShare(owner: "ada")) }
        defer { long.cancel() }
        try await cluster.run(until: "the long job fills every slot", within: 10) {
            cluster.nodes.allSatisfy { $0.counters.runningCPU == 2 }
        }
        try await cluster.run(for: 2)
        // Bob's short job, coordinated by s1, while every slot is the long job's: each
        // worker gives it the next place that frees, and half the slots from then on.
        let behind = try await timeShortJob(bob, in: cluster, owner: "bob")
        #expect(behind <= 2.5 * alone + 0.2, "alone \(alone) s, behind the long job \(behind) s: at most its share's time and one task's wait")
        #expect(!long.isCancelled)
        long.cancel()
        _ = try await cluster.complete("the long job ends cancelled", within: 30) { try? await long.value }
    }

    /// Tasks each job has finished, by name.
    private final class Done: Sendable {
        private let state = Mutex<[String: Int]>([:])
        var counts: [String: Int] { state.withLock { $0 } }
        func set(_ name: String, _ count: Int) { state.withLock { $0[name] = count } }
    }

    /// Submits `name`'s map of `inputs` through `client`, counting its ends in `done`.
    private static func start(_ name: String, owner: String, via client: ClusterClient, inputs: [CubeTask.Input], done: Done) -> Task<Void, Never> {
        Task {
            _ = try? await client.map(CubeTask.self, over: inputs, share: JobShare(owner: owner)) { progress in done.set(name, progress.done) }
        }
    }

    @Test func anOwnerWithThreeJobsGetsNoMoreThanAnOwnerWithOne() async throws {
        let cluster = try await startNodes()
        defer { cluster.stop() }
        // Three coordinators: ada's first two jobs through s0, her third and bob's through s1.
        let viaFirst = try await connect(to: cluster[0], in: cluster)
        let viaSecond = try await connect(to: cluster[1], in: cluster)
        let inputs = Array(repeating: Self.fifthOfASecond, count: 300)
        let done = Done()
        let jobs = [
            Self.start("ada-1", owner: "ada", via: viaFirst, inputs: inputs, done: done),
            Self.start("ada-2", owner: "ada", via: viaFirst, inputs: inputs, done: done),
            Self.start("ada-3", owner: "ada", via: viaSecond, inputs: inputs, done: done),
            Self.start("bob", owner: "bob", via: viaSecond, inputs: inputs, done: done),
        ]
        defer { jobs.forEach { $0.cancel() } }
        try await cluster.run(until: "every job has run a task", within: 10) { done.counts.count == 4 }
        try await cluster.run(for: 1)
        let before = done.counts
        try await cluster.run(for: 5)
        let after = done.counts
        let ran = after.merging(before) { $0 - $1 }
        let bob = Double(ran["bob"] ?? 0), ada = Double(["ada-1", "ada-2", "ada-3"].reduce(0) { $0 + (ran[$1] ?? 0) })
        // 4 slots for 5 s of 0.2 s tasks: about 100 tasks, half of them bob's.
        #expect(bob + ada >= 90, "tasks ended in 5 s: \(ran)")
        #expect(abs(bob / (bob + ada) - 0.5) <= 0.1, "bob's share of the tasks that ended: \(bob) of \(bob + ada) (\(ran))")
        jobs.forEach { $0.cancel() }
        for job in jobs { _ = try await cluster.complete("a job ends cancelled", within: 30) { await job.value } }
    }

    @Test func maxSlotsCapsAJobAcrossTheCluster() async throws {
        let cluster = try await startNodes()
        defer { cluster.stop() }
        let client = try await connect(to: cluster[0], in: cluster)
        let most = Most()
        let inputs = Array(repeating: Self.fifthOfASecond, count: 12)
        let start = cluster.clock.now
        let job = Task {
            defer { most.end() }
            return try await client.map(CubeTask.self, over: inputs, share: JobShare(owner: "ada", maxSlots: 2))
        }
        try await cluster.run(until: "the capped job ends", within: 30) {
            most.note(cluster.nodes.reduce(0) { $0 + $1.counters.runningCPU })
            return most.ended
        }
        #expect(try await job.value.count == 12)
        #expect(most.value <= 2, "at most 2 of its tasks ran at once on 4 slots: \(most.value)")
        #expect(cluster.clock.now - start >= 1.2 - 0.01, "12 tasks of 0.2 s, 2 at a time")
    }
}

/// The most tasks seen running at once, and whether a job ended.
private final class Most: Sendable {
    private let state = Mutex((most: 0, ended: false))
    var value: Int { state.withLock { $0.most } }
    func note(_ running: Int) { state.withLock { $0.most = max($0.most, running) } }
    var ended: Bool { state.withLock { $0.ended } }
    func end() { state.withLock { $0.ended = true } }
}

import FoundationEssentials
import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesReplication
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesJobs

/// A workload's job run by the one job desk (Docs/one-job-layer.md, step 3): the test
/// kit's ``TokenWorkload`` keeps shared state beside its tasks, as the bike job keeps its
/// stations. On three nodes wired as `spokes node` wires them, in virtual time.
@Suite(.simulated, .hangGuard)
struct WorkloadJobTests {
    func nodes() async throws -> JobDeskCluster {
        try await JobDeskCluster(3, kinds: [CubeTask()], workloads: TokenWorkload.workloads)
    }

    static func spec(_ id: String, numbers: [Int]) -> TaskJobSpec {
        var spec = TaskJobSpec(
            id: id, kind: CubeTask.name, schema: nil, title: "\(numbers.count) x cube", inputs: numbers.map { "{\"number\":\($0)}" },
            deadline: TaskDeadlines.unreached, retries: 2)
        spec.workload = .init(name: TokenWorkload.name, parameters: "[\(numbers.count),0]")
        return spec
    }

    static func state(_ text: String?) throws -> TokenWorkload.State {
        try MachineText.decode(TokenWorkload.State.self, from: try #require(text))
    }

    /// Every task's accepted output moves one token, once; the run's events are committed
    /// with the ends, so every replica's state is the coordinator's, and the report shows it.
    @Test func aWorkloadJobsStateIsCommittedOnEveryReplicaWithItsEnds() async throws {
        let nodes = try await nodes()
        let spec = Self.spec("job-tokens1", numbers: [1, 2, 3, 4, 5, 6])
        let coordinator = nodes.desks[0]
        let report = try await nodes.cluster.complete("the job runs", within: 60) { try await coordinator.submit(spec, listener: nil) }
        #expect(report.succeeded == 6 && report.stored == true)
        let state = try Self.state(report.workloadReport)
        #expect(state.bins == [0, 6] && state.counted == Set(0..<6), "every task counted once: \(state)")
        for index in 0..<3 {
            let machine = await nodes.machine(of: spec.id, on: index)
            // A replica may have removed the finished group already.
            guard let machine else { continue }
            #expect((machine.workloadState as? TokenWorkload.State)?.bins == [0, 6], "replica \(index) holds the coordinator's state")
            #expect(machine.ends.count == 6 && machine.epoch == 0)
        }
        await nodes.stop()
    }

    /// A workload the desk does not run is refused before anything runs or is kept.
    @Test func aJobOfAnUnknownWorkloadIsRefused() async throws {
        let nodes = try await nodes()
        var unknown = Self.spec("job-unknown", numbers: [1])
        unknown.workload?.name = "weather"
        let spec = unknown
        let coordinator = nodes.desks[0]
        await #expect(throws: TaskJobError.unknownWorkload("weather")) {
            _ = try await nodes.cluster.complete("the refusal", within: 30) { try await coordinator.submit(spec, listener: nil) }
        }
        #expect(await nodes.hosts[0].status(of: ReplicatedTaskJobs.group(of: spec.id)) == nil, "no group was opened")
        await nodes.stop()
    }

    /// The coordinator is paused mid-job: a replica that leads the job's group commits the
    /// next epoch and runs the job on from the committed state, counting each task once
    /// (tokens conserved); the old coordinator, resumed, commits nothing more and stores
    /// nothing.
    @Test func aJobTakenOverRunsOnFromTheCommittedStateInTheNextEpoch() async throws {
        let nodes = try await nodes()
        // Three quick tasks, three that take 3 s.
        let spec = Self.spec("job-tokens2", numbers: [1, 2, 3, 4000, 4000, 4000])
        let coordinator = nodes.desks[0]
        let submitted = Task { try await coordinator.submit(spec, listener: nil) }
        try await nodes.cluster.run(until: "the quick tasks' moves are committed", within: 30) {
            guard let machine = await nodes.machine(of: spec.id, on: 1) else { return false }
            return ((machine.workloadState as? TokenWorkload.State)?.counted.count ?? 0) >= 3
        }
        let (taker, report) = try await nodes.pauseForTakeOver(0, of: spec.id)
        let state = try Self.state(report.workloadReport)
        #expect(state.bins == [0, 6] && state.counted == Set(0..<6), "every task counted once over two coordinators: \(state)")
        #expect(report.succeeded == 6 && report.coordinator == nodes.cluster[taker].system.node.name)
        if let machine = await nodes.machine(of: spec.id, on: taker) {
            #expect(machine.epoch == 1, "the take-over committed the next epoch")
        }

        let deposed = try await nodes.resumeDeposed(0, run: submitted, of: spec.id)
        #expect(deposed.told == nil, "the old coordinator reported nothing for a job it lost")
        #expect(!deposed.stored, "the old coordinator stored nothing")
        await nodes.stop()
    }
}

import FoundationEssentials
import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesReplication
import SpokesTestKit
import Testing
@testable import SpokesJobs

/// A job of tasks alone kept by the one job machine (Docs/one-job-layer.md, step 5): a
/// `job-ID` group (``JobMachine``) once every member speaks protocol 7, with the epochs
/// a workload's job has; a `taskjob-ID` group (``TaskJobMachine``) while one does not.
/// On three nodes wired as `spokes node` wires them, in virtual time.
@Suite(.simulated, .hangGuard)
struct TaskJobGroupTests {
    static func spec(_ id: String, numbers: [Int]) -> TaskJobSpec {
        TaskJobSpec(
            id: id, kind: CubeTask.name, schema: nil, title: "\(numbers.count) x cube", inputs: numbers.map { "{\"number\":\($0)}" },
            deadline: TaskDeadlines.unreached, retries: 2)
    }

    /// The spec and every task's end are committed in the job's `job-` group; no
    /// `taskjob-` group is opened.
    @Test func aJobOfTasksIsKeptInAJobGroup() async throws {
        let nodes = try await JobDeskCluster(3, kinds: [CubeTask()])
        let spec = Self.spec("map-grouped", numbers: [1, 2, 3, 4000])
        let coordinator = nodes.desks[0]
        let submitted = Task { try await coordinator.submit(spec, listener: nil) }
        try await nodes.cluster.run(until: "the quick tasks' ends are committed on a replica", within: 30) {
            (await nodes.machine(of: spec.id, on: 1)?.ends.count ?? 0) >= 3
        }
        #expect(await nodes.machine(of: spec.id, on: 1)?.spec?.inputs == spec.inputs)
        #expect(await nodes.hosts[0].status(of: ReplicatedTaskJobs.tasksGroup(of: spec.id)) == nil, "no taskjob group")
        let report = try await nodes.cluster.complete("the job ends", within: 60) { try await submitted.value }
        #expect(report.succeeded == 4 && report.stored == true)
        await nodes.stop()
    }

    /// The coordinator is paused mid-job: a replica that leads the group commits the next
    /// epoch and runs the tasks with no committed end; each task's result counts once, and
    /// the old coordinator, resumed, stores nothing.
    @Test func aJobOfTasksTakenOverRunsOnInTheNextEpoch() async throws {
        let nodes = try await JobDeskCluster(3, kinds: [CubeTask()])
        let spec = Self.spec("map-taken", numbers: [1, 2, 3, 4000, 4000, 4000])
        let coordinator = nodes.desks[0]
        let submitted = Task { try await coordinator.submit(spec, listener: nil) }
        try await nodes.cluster.run(until: "the quick tasks' ends are committed on a replica", within: 30) {
            (await nodes.machine(of: spec.id, on: 1)?.ends.count ?? 0) >= 3
        }
        let committed = try #require(await nodes.machine(of: spec.id, on: 1)).ends
        let (taker, report) = try await nodes.pauseForTakeOver(0, of: spec.id)
        #expect(report.succeeded == 6 && report.coordinator == nodes.cluster[taker].system.node.name)
        for (task, end) in committed {
            #expect(report.tasks[task] == end, "task \(task) as committed before the take-over, not run again")
        }
        if let machine = await nodes.machine(of: spec.id, on: taker) {
            #expect(machine.epoch == 1, "the take-over committed the next epoch")
        }

        let deposed = try await nodes.resumeDeposed(0, run: submitted, of: spec.id)
        #expect(deposed.told == nil, "the old coordinator reported nothing for a job it lost")
        #expect(!deposed.stored, "the old coordinator stored nothing")
        #expect(nodes.cluster[0].jobBoard.record(of: spec.id) == nil, "the old coordinator's board does not show the job as ended")
        await nodes.stop()
    }

    /// While a member does not speak protocol 7 (a rolling upgrade), a job of tasks goes in
    /// a `taskjob-` group, which the release before can hold, and runs as before.
    @Test func untilEveryMemberSpeaksProtocol7AJobOfTasksGoesInATaskjobGroup() async throws {
        let nodes = try await JobDeskCluster(3, kinds: [CubeTask()]) { index, settings in
            if index == 2 { settings.protocolVersions = ProtocolVersions(lowest: 3, highest: ProtocolVersions.oneJobLayer - 1) }
        }
        try await nodes.cluster.run(until: "n0 knows what every member speaks", within: 10) {
            !nodes.cluster[0].mayUse(protocolVersion: ProtocolVersions.oneJobLayer)
        }
        let spec = Self.spec("map-older", numbers: [1, 2, 4000])
        let coordinator = nodes.desks[0]
        let submitted = Task { try await coordinator.submit(spec, listener: nil) }
        try await nodes.cluster.run(until: "the job's taskjob group holds its quick ends on a replica", within: 30) {
            ((await nodes.hosts[1].stateMachine(of: ReplicatedTaskJobs.tasksGroup(of: spec.id)) as? TaskJobMachine)?.ends.count ?? 0) >= 2
        }
        #expect(await nodes.machine(of: spec.id, on: 0) == nil, "no job group")
        let report = try await nodes.cluster.complete("the job ends", within: 60) { try await submitted.value }
        #expect(report.succeeded == 3 && report.stored == true)
        await nodes.stop()
    }

    /// A node held to the protocols of the release before keeps even a job of its own
    /// alone in a `taskjob-` group, which that release reads: a replica added later may be
    /// of it (`simulate-cluster --model nodes --scenario upgrade --nodes 3`, seed 1: such a
    /// node, its peers out of reach, opened a `job-` group).
    @Test func aNodeHeldBelowProtocol7KeepsAJobAloneInATaskjobGroup() async throws {
        let nodes = try await JobDeskCluster(1, kinds: [CubeTask()]) { _, settings in
            settings.protocolVersions = ProtocolVersions(lowest: 3, highest: ProtocolVersions.oneJobLayer - 1)
        }
        let spec = Self.spec("map-alone", numbers: [1, 2, 4000])
        let submitted = Task { try await nodes.desks[0].submit(spec, listener: nil) }
        try await nodes.cluster.run(until: "the job's taskjob group holds its quick ends", within: 30) {
            ((await nodes.hosts[0].stateMachine(of: ReplicatedTaskJobs.tasksGroup(of: spec.id)) as? TaskJobMachine)?.ends.count ?? 0) >= 2
        }
        #expect(await nodes.machine(of: spec.id, on: 0) == nil, "no job group")
        let report = try await nodes.cluster.complete("the job ends", within: 60) { try await submitted.value }
        #expect(report.succeeded == 3)
        await nodes.stop()
    }
}

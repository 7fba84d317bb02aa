@testable import SpokesJobs
import Foundation
import SpokesConcurrency
import SpokesClusterTestKit
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCluster

/// The job layer's client for submitted jobs (`spokes jobs`, `spokes result [--wait]`,
/// `spokes cancel`), asking a node that does not coordinate the job, on a simulated
/// network under a virtual clock.
@Suite(.simulated, .hangGuard)
struct JobDeskClientTests {
    /// Two nodes `c0`, `c1` running `test.cube`, each with its `jobs` desk (kept until the
    /// test ends: `withExtendedLifetime`); a client of each: the submitter's of c0, and a
    /// job desk client of c1.
    func twoNodes() async throws -> (SimulatedCluster, submitter: ClusterClient, desk: JobDeskClient, desks: [JobService]) {
        let cluster = try SimulatedCluster(2, prefix: "c", configure: { index, settings in
            settings.slots = 2
            settings.dataDirectory = "/data/c\(index)"
        }, registry: { _ in TaskRegistry(kinds: [CubeTask()]) }, disk: { _ in SimulatedDisk() })
        try await cluster.awaitMesh()
        let desks = (0..<2).map { index in
            ClusterSystem.withWellKnownName(JobService.wellKnownName) { JobService(actorSystem: cluster[index].system, node: cluster[index]) }
        }
        let submitter = try await cluster.clusterClient(to: cluster[0], registry: TaskRegistry(kinds: [CubeTask()])) { $0.taskDeadline = TaskDeadlines.unreached }
        let asker = try await cluster.clusterClient(to: cluster[1])
        return (cluster, submitter, JobDeskClient(system: asker.system), desks)
    }

    /// Starts a map of `inputs` on c0; its id once it runs, and its call.
    func startMap(_ inputs: [Int], from client: ClusterClient, in cluster: SimulatedCluster) async throws -> (String, Task<TaskJobReport, any Error>) {
        let started = Promise<ClusterClient.Plan, Never>()
        let running = Task {
            try await client.run(kind: CubeTask.name, schema: nil, inputs: inputs.map { "{\"number\": \($0)}" }, onStart: { started.resolve($0) })
        }
        try await cluster.run(until: "the map starts", within: 5) { started.future.isComplete }
        return (try #require(started.future.currentResult).get().job, running)
    }

    @Test func aRunningJobIsNamedListedOnceWaitedForAndItsStoredReportPrinted() async throws {
        let (cluster, submitter, desk, desks) = try await twoNodes()
        defer { cluster.stop() }
        defer { withExtendedLifetime(desks) {} }
        let (job, running) = try await startMap([1400, 1400, 2, 3], from: submitter, in: cluster)
        let target = cluster[1].system.address
        let now = try await cluster.complete("result without --wait", within: 10) {
            try await desk.result(of: job, at: target, waiting: .no, storedReport: JobDeskClient.taskJobReport)
        }
        guard case .running(let location) = now else { Issue.record("want running, got \(now)"); return }
        #expect(location.node == "c0" && location.summary.tasks == 4)
        let listed = try await cluster.complete("jobs", within: 10) { try await desk.list(at: cluster[1].system.node) }
        #expect(listed.jobs.filter { $0.job == job }.count == 1 && listed.unanswered.isEmpty)
        let heardWhere = Mutex<[String]>([])
        let waited = try await cluster.complete("result --wait", within: 30) {
            try await desk.result(of: job, at: target, waiting: .untilEnd(atMost: nil), storedReport: JobDeskClient.taskJobReport) { location in
                heardWhere.withLock { $0.append(location.node) }
            }
        }
        let told = try await cluster.complete("the submitter's report", within: 10) { try await running.value }
        guard case .report(let printed) = waited else { Issue.record("want the report, got \(waited)"); return }
        #expect(printed.tasks.map(\.output) == told.tasks.map(\.output) && printed.succeeded == 4 && printed.stored == true)
        #expect(heardWhere.withLock { $0 } == ["c0"], "told once where it waits")
        let unknown = try await cluster.complete("result of a job nobody knows", within: 10) {
            try await desk.result(of: "map-00000000", at: target, waiting: .no, storedReport: JobDeskClient.taskJobReport)
        }
        guard case .unknown = unknown else { Issue.record("want unknown, got \(unknown)"); return }
    }

    @Test func aWaitWithABoundSaysTheJobStillRunsAndCancelStopsIt() async throws {
        let (cluster, submitter, desk, desks) = try await twoNodes()
        defer { cluster.stop() }
        defer { withExtendedLifetime(desks) {} }
        let (job, running) = try await startMap([9000, 9000], from: submitter, in: cluster)
        let target = cluster[1].system.address
        let started = cluster.clock.now
        let bounded = try await cluster.complete("result --wait, bounded", within: 10) {
            try await desk.result(of: job, at: target, waiting: .untilEnd(atMost: 1), storedReport: JobDeskClient.taskJobReport)
        }
        guard case .stillRunning(let location, let waited) = bounded else { Issue.record("want still running, got \(bounded)"); return }
        #expect(location.node == "c0" && waited >= 1 && cluster.clock.now - started < 3)
        let cancellation = try await cluster.complete("cancel", within: 20) { try await desk.cancel(job, at: cluster[1].system.node) }
        #expect(cancellation?.coordinator == "c0" && cancellation?.summary != nil && cancellation?.storeError == nil)
        let report = try await cluster.complete("the cancelled map's report", within: 10) { try await running.value }
        #expect(report.cancelled)
        // Asked of c0, which stored it (this test's nodes keep their reports of tasks in
        // memory, where no other node's desk lists them).
        let storedOn = cluster[0].system.address
        let printed = try await cluster.complete("result", within: 10) {
            try await desk.result(of: job, at: storedOn, waiting: .no, storedReport: JobDeskClient.taskJobReport)
        }
        guard case .report(let stored) = printed else { Issue.record("want the report, got \(printed)"); return }
        #expect(stored.cancelled && stored.cancelReason == JobService.CancelOrigin.command.reason)
        let again = try await cluster.complete("cancel again", within: 20) { try await desk.cancel(job, at: cluster[1].system.node) }
        #expect(again == nil, "no node runs it now")
    }

    /// Three nodes with made-up workloads, the job `w-1` running on n1, and a client of
    /// n0 (or `askingFirst`) waiting for its result (`spokes result w-1 --wait --to n0`) on n1: what the
    /// tests below do to n1 and n2 while it waits, and where it ends. n2 has a report of
    /// the job once ``storeOnN2()`` was called.
    final class WaitingOnN1: Sendable {
        typealias Workload = JobServiceWorkloadTests.MadeUpWorkload
        let cluster: SimulatedCluster
        let workloads = [Workload(node: "n0"), Workload(node: "n1", running: ["w-1"]), Workload(node: "n2")]
        private let desks: [JobService]
        private let storedOnN2 = Atomic<Bool>(false)
        /// The nodes the client waited on, in order.
        let waitingOn = Mutex<[String]>([])
        private let waiting = Mutex<Task<JobDeskClient.JobResult<String>, any Error>?>(nil)

        /// Starts the client once the cluster is up, and returns when it waits on n1;
        /// `asking` hears each node the client asks for a report, before it is asked.
        init(askingFirst first: Int = 0, asking: @escaping @Sendable (String) -> Void = { _ in }) async throws {
            cluster = try SimulatedCluster(3, configure: { index, settings in settings.dataDirectory = "/data/n\(index)" },
                                           disk: { _ in SimulatedDisk() })
            try await cluster.awaitMesh()
            let cluster = cluster, workloads = workloads
            desks = (0..<3).map { index in
                ClusterSystem.withWellKnownName(JobService.wellKnownName) {
                    JobService(actorSystem: cluster[index].system, node: cluster[index], workloads: [workloads[index]])
                }
            }
            let desk = JobDeskClient(system: try await cluster.clusterClient(to: cluster[0]).system)
            let target = cluster[first].system.address
            let task = Task { [self] in
                try await desk.result(of: "w-1", at: target, waiting: .untilEnd(atMost: nil), storedReport: { job, node, _ in
                    asking(node.name)
                    return node.name == "n2" && self.storedOnN2.load(ordering: .acquiring) ? "the report of \(job) on n2" : nil
                }, onWaiting: { location in self.waitingOn.withLock { $0.append(location.node) } })
            }
            waiting.withLock { $0 = task }
            try await cluster.run(until: "the client waits on n1", within: 10) { !self.waitingOn.withLock(\.isEmpty) }
        }

        /// n1 gives the job up and n2 runs it on.
        func moveTheJobToN2(endedOnN1: Bool) {
            workloads[1].state.withLock { $0.running = []; $0.ended = endedOnN1 ? ["w-1"] : [] }
            workloads[2].state.withLock { $0.running = ["w-1"] }
        }

        /// After 8 s more, n2 stores the job's report: what the client ends with.
        func end() async throws -> JobDeskClient.JobResult<String> {
            try await cluster.run(for: 8)
            storedOnN2.store(true, ordering: .releasing)
            let waiting = try #require(waiting.withLock { $0 })
            return try await cluster.complete("the wait ends", within: 30) { try await waiting.value }
        }

        func stop() {
            withExtendedLifetime(desks) {}
            cluster.stop()
        }
    }

    /// Found by the simulator's `result --wait` clients (`simulate-cluster --model nodes
    /// --nodes 5`, seed 15): a `result --wait` client waited for a map on its coordinator,
    /// which a partition cut off; the client failed with "peer disconnected" while the
    /// member that took the map over had run it for 2.2 s, and went on to store its report.
    /// Now it asks the node it was sent to again, which finds the job on the member that
    /// runs it now, and prints that member's report.
    @Test func aWaitingClientWhoseJobsNodeIsLostFindsTheMemberThatTookTheJobOver() async throws {
        let nodes = try await WaitingOnN1()
        defer { nodes.stop() }
        // n1 is lost; n2 takes the job over, and later stores its report.
        nodes.cluster.isolate(SimulatedCluster.host(1))
        nodes.moveTheJobToN2(endedOnN1: false)
        let found = try await nodes.end()
        guard case .report(let report) = found else { Issue.record("want n2's report, got \(found)"); return }
        #expect(report == "the report of w-1 on n2")
        #expect(nodes.waitingOn.withLock { $0 } == ["n1"])
    }

    /// (`simulate-cluster --model nodes --nodes 3 --scenario twin-name`, seed 243): a
    /// `result --wait` client followed a map to its coordinator, which a cut from its
    /// replicas deposed: it listed the map as ended, with no report, while a replica took
    /// it over. The client said "ended on n2, not stored there" and stopped while the job
    /// ran on. Now it asks the node it was sent to again, which finds the job where it
    /// runs (a member that runs a job is found before one that lists it ended).
    @Test func aWaitingClientWhoseJobsNodeListsItEndedWithoutAReportFindsTheMemberThatTookItOver() async throws {
        let nodes = try await WaitingOnN1()
        defer { nodes.stop() }
        // n1, cut off from n2, lists the job ended, with no report; n2 runs it on.
        nodes.cluster.network.cut(between: SimulatedCluster.host(1), and: SimulatedCluster.host(2))
        nodes.moveTheJobToN2(endedOnN1: true)
        let found = try await nodes.end()
        guard case .report(let report) = found else { Issue.record("want n2's report, got \(found)"); return }
        #expect(report == "the report of w-1 on n2")
    }

    /// (`simulate-cluster --model nodes --nodes 5`, seed 787): the coordinator a `result
    /// --wait` client followed was deposed, listed the map as ended, then stopped answering
    /// (a one-way cut); the client failed with "peer disconnected" while the member that
    /// took the map over ran it. Now a node that stops answering after it listed the job
    /// ended is passed over as one that ran it is: the node asked first locates it again.
    @Test func aWaitingClientWhoseJobsNodeListsItEndedAndGoesQuietFindsTheMemberThatTookItOver() async throws {
        let endedOnN1 = Atomic<Bool>(false)
        let askedN1SinceItEnded = Atomic<Int>(0)
        let isolateN1 = Mutex<(@Sendable () -> Void)?>(nil)
        let nodes = try await WaitingOnN1(asking: { node in
            // n1 goes quiet once it has answered once that the job ended there.
            if node == "n1", endedOnN1.load(ordering: .acquiring), askedN1SinceItEnded.add(1, ordering: .relaxed).newValue == 2 {
                isolateN1.withLock { $0 }?()
            }
        })
        defer { nodes.stop() }
        let cluster = nodes.cluster
        isolateN1.withLock { $0 = { cluster.isolate(SimulatedCluster.host(1)) } }
        // n1, cut off from n2, lists the job ended; n2 runs it on.
        cluster.network.cut(between: SimulatedCluster.host(1), and: SimulatedCluster.host(2))
        nodes.moveTheJobToN2(endedOnN1: true)
        endedOnN1.store(true, ordering: .releasing)
        let found = try await nodes.end()
        guard case .report(let report) = found else { Issue.record("want n2's report, got \(found)"); return }
        #expect(report == "the report of w-1 on n2")
        #expect(askedN1SinceItEnded.load(ordering: .relaxed) >= 2, "n1 answered that the job ended there, then went quiet")
    }

    /// A client sent to the coordinator itself, which lists the job ended with no report
    /// as it is deposed, waits a while for the member that takes the job over (a review:
    /// it said "not stored" after three questions, half a second, shorter than a take-over).
    @Test func aClientSentToADeposedCoordinatorWaitsForTheMemberThatTakesTheJobOver() async throws {
        let nodes = try await WaitingOnN1(askingFirst: 1)
        defer { nodes.stop() }
        nodes.workloads[1].state.withLock { $0.running = []; $0.ended = ["w-1"] }
        try await nodes.cluster.run(for: 2)
        nodes.workloads[2].state.withLock { $0.running = ["w-1"] }
        let found = try await nodes.end()
        guard case .report(let report) = found else { Issue.record("want n2's report, got \(found)"); return }
        #expect(report == "the report of w-1 on n2")
    }
}

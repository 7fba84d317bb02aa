import Foundation
import SpokesCluster
import SpokesClusterTestKit
import SpokesConcurrency
import SpokesJobs
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesBikes

/// Protocol 5 renamed the job layer's calls (``CallTargetRenames/current``): the desks
/// moved to the job layer's module, the bike calls to the `bikejobs` desk. A client that
/// speaks at most 4 (release 0.3.0) calls every one of them under its old name and its
/// old actor, and the node of this build answers each (and calls the client's listener
/// under its old names); a client of this build uses the new names. On the simulated
/// network, in virtual time.
@Suite(.simulated, .hangGuard)
struct JobDesksUnderOldNamesTests {
    /// Calls every renamed function once through `client`, and checks the answers.
    func callEveryRenamedFunction(on node: ClusterNode, with client: ClusterSystem, cluster: SimulatedCluster, job id: String) async throws {
        let bikes = try BikeJobService.resolve(id: ActorID(node: node.system.node, name: BikeJobService.wellKnownName), using: client)
        let jobs = try JobService.resolve(id: ActorID(node: node.system.node, name: JobService.wellKnownName), using: client)
        var network = try BundledNetworks.milano
        network.stations = Array(network.stations.prefix(4))
        let job = BikeJob(id: id, network: network, options: SimulationOptions(users: 3, paths: 1, seed: 1, timing: MoveTiming(timeScale: 0)))
        try await cluster.complete("every renamed call", within: 30) {
            let report = try await bikes.submit(job, listener: nil)
            #expect(report.completedUsers == 3 && report.stored == true)
            #expect(try await bikes.report(of: id)?.job == id)
            #expect(try await bikes.networkAtStart(of: id)?.stations.count == 4)
            #expect(try await bikes.stationBikes(of: id)?.count == 4)
            #expect(try await jobs.jobs().map(\.job).contains(id))
            #expect(try await jobs.finishedJobs().map(\.job).contains(id))
            #expect(try await jobs.clusterJobs().jobs.map(\.job).contains(id))
            #expect(try await jobs.locate(job: id)?.node == node.system.node.name)
            #expect(try await jobs.holdsReplica(of: id) == false)
            #expect(try await jobs.runningJobs() == [])
            #expect(try await jobs.cancel(job: id, origin: .command) == nil, "an ended job runs nowhere")
            #expect(try await jobs.cancelHere(job: id, origin: .command) == nil)

            // The desk for jobs of tasks, and its listener on the client (called by the node).
            let tasks = try TaskJobs.resolve(id: ActorID(node: node.system.node, name: TaskJobs.wellKnownName), using: client)
            let heard = Mutex((accepted: false, ended: 0))
            let listener = TaskJobListener(actorSystem: client, tasks: 2, onAccepted: { _, _, _ in heard.withLock { $0.accepted = true } },
                                           onOutcome: { _ in heard.withLock { $0.ended += 1 } })
            let spec = TaskJobSpec(id: "map-\(id)", kind: NoopTask.name, schema: nil, title: "two", inputs: ["1", "2"], deadline: TaskDeadlines.unreached, retries: 0)
            let taskReport = try await tasks.submit(spec, listener: listener)
            #expect(taskReport.succeeded == 2)
            #expect(heard.withLock { $0.accepted && $0.ended == 2 }, "the listener heard the start and both ends")
            #expect(try await tasks.report(of: spec.id)?.succeeded == 2)
            #expect(try await tasks.lookup(spec.id) == .finished(taskReport))
            #expect(try await tasks.runningJobs().isEmpty)
            #expect(try await tasks.cancelHere(job: spec.id, reason: "test") == nil)
            #expect(try await tasks.runBatch(kind: NoopTask.name, input: "0", count: 2, deadline: TaskDeadlines.unreached, retries: 0).succeeded == 2)
            withExtendedLifetime(listener) {}
        }
    }

    @Test func aClientOfTheReleaseBeforeCallsEveryJobDeskFunctionByItsOldName() async throws {
        let cluster = try SimulatedCluster(1, configure: { _, settings in settings.dataDirectory = "/data/n0" },
                                           registry: { _ in TaskRegistry(kinds: BikeKinds.all) }, disk: { _ in SimulatedDisk() })
        defer { cluster.stop() }
        let node = cluster[0]
        let desks = await BikeJobService.hostDesks(on: node)
        defer { withExtendedLifetime(desks) {} }
        let renamed = CallTargetRenames.current.renames.count

        let old = try cluster.client(named: "old") { $0.protocolVersions = ProtocolVersions(lowest: 3, highest: 4) }
        try await cluster.complete("the old client joins", within: 10) { try await old.join(node.system.address) }
        #expect(node.system.protocolVersion(with: old.node) == 4)
        try await callEveryRenamedFunction(on: node, with: old, cluster: cluster, job: "bike-old")
        // Each renamed function called once under its old name: the listener's by the node.
        let listenerCalls = CallTargetRenames.current.renames.count { $0.newTarget.contains("TaskJobListener") }
        #expect(listenerCalls == 2)
        #expect(node.system.callsReceivedUnderOldNames == renamed - listenerCalls)
        // The node calls the listener's `ended` once per batch of task ends: once or twice.
        let oldNames = Set(CallTargetRenames.current.renames.map(\.oldTarget))
        #expect(node.system.oldNamesReceived.count == renamed - listenerCalls && node.system.oldNamesReceived.isSubset(of: oldNames))
        #expect(old.oldNamesReceived.count == listenerCalls && old.oldNamesReceived.isSubset(of: oldNames))

        let new = try cluster.client(named: "new")
        try await cluster.complete("the new client joins", within: 10) { try await new.join(node.system.address) }
        #expect(node.system.protocolVersion(with: new.node) == ProtocolVersions.current.highest)
        try await callEveryRenamedFunction(on: node, with: new, cluster: cluster, job: "bike-new")
        #expect(node.system.callsReceivedUnderOldNames == renamed - listenerCalls, "a client of this build uses the new names")
        #expect(new.callsReceivedUnderOldNames == 0 && new.oldNamesReceived.isEmpty)
    }
}

import FoundationEssentials
import SpokesCluster
import SpokesClusterTestKit
import SpokesJobs
import SpokesReplication
import SpokesTestKit
import Testing
@testable import SpokesBikes

/// A bike job run by the job layer's one desk as the bike workload (Docs/one-job-layer.md,
/// step 4): the job's group carries its book, the run's ledger events and the users' ends
/// are one stream, and a take-over resumes from the committed book. Three simulated nodes
/// in virtual time.
@Suite(.simulated, .hangGuard)
struct BikeJobOnTheJobDeskTests {
    static let network = Network.synthetic(stations: 4, bikes: 3, emptySlots: 3)

    /// Three nodes whose job desks run the bike workload; `speaks` gives node `index`'s
    /// protocol versions (all of this build's by default).
    func nodes(speaks: (Int) -> ProtocolVersions = { _ in .current }) async throws -> JobDeskCluster {
        var workloads = JobWorkloads()
        workloads.register(BikeWorkload.name, BikeWorkload.workload())
        return try await JobDeskCluster(3, kinds: BikeKinds.all, workloads: workloads) { index, settings in
            settings.protocolVersions = speaks(index)
            settings.dataDirectory = "/data/n\(index)"
        }
    }

    /// A bike job's group is one every member reads: once every member speaks protocol 7,
    /// a `job-` group; with a member of protocol 6, a `bikejob-` group in the commands of
    /// the release before (Docs/upgrades.md), which that member can hold and take over. The
    /// job desk runs and stores the job the same either way.
    @Test(arguments: [true, false])
    func aBikeJobsGroupIsOneEveryMemberReads(everyMemberSpeaksSeven: Bool) async throws {
        let nodes = try await nodes { index in
            index == 2 && !everyMemberSpeaksSeven ? ProtocolVersions(lowest: 3, highest: ProtocolVersions.oneJobLayer - 1) : .current
        }
        let node = nodes.cluster[0]
        try await nodes.cluster.run(until: "n0 knows what every member speaks", within: 10) {
            node.members.count { $0.state == .alive } == 2 && node.mayUse(protocolVersion: ProtocolVersions.oneJobLayer) == everyMemberSpeaksSeven
        }
        let (_, bikes) = await BikeJobService.hostDesks(on: node)
        let job = BikeJob(id: "job-gate\(everyMemberSpeaksSeven ? 7 : 6)", network: Self.network, options: SimulationOptions(users: 4, paths: 2, seed: 3))
        let report = try await nodes.cluster.complete("the job runs", within: 120) { try await bikes.submit(job, listener: nil) }
        checkExactlyOnce(report, users: 4)
        #expect(report.stored == true)
        #expect(nodes.storedReport(of: job.id)?.node == 0, "the job desk stored it")
        let groups = nodes.hosts[1].groupIDs
        let (kept, other) = everyMemberSpeaksSeven
            ? (ReplicatedTaskJobs.group(of: job.id), BikeJobMachine.format().group(of: job.id))
            : (BikeJobMachine.format().group(of: job.id), ReplicatedTaskJobs.group(of: job.id))
        #expect(groups.contains(kept) && !groups.contains(other), "\(groups)")
        if !everyMemberSpeaksSeven, let machine = await nodes.hosts[1].stateMachine(of: kept) as? BikeJobMachine {
            #expect(machine.book?.doneUsers.count == 4, "the old format's book holds every user's end")
        }
        await nodes.stop()
    }

    /// Every user once, in user order, and the bikes conserved.
    func checkExactlyOnce(_ report: SimulationReport, users: Int) {
        #expect(report.results.map(\.user) == Array(0..<users), "one result per user")
        #expect(report.conservation.holds, "\(report.conservation)")
        #expect(report.stations.allSatisfy { $0.freeBikes >= 0 && $0.emptySlots >= 0 })
    }

    /// Submits a real-time job of 12 users to n0's job desk and returns once a replica
    /// other than n0 holds some of their moves: its spec, and the call.
    func startMoving(_ id: String, paths: Int, seed: UInt64, on nodes: JobDeskCluster) async throws -> (TaskJobSpec, Task<TaskJobReport, any Error>) {
        let timing = MoveTiming(moveTime: 0.5, timeScale: 1)
        let job = BikeJob(id: id, network: Self.network, options: SimulationOptions(users: 12, paths: paths, seed: seed, timing: timing))
        let spec = try job.taskJobSpec(settings: nodes.cluster[0].settings)
        let coordinator = nodes.desks[0]
        let submitted = Task { try await coordinator.submit(spec, listener: nil) }
        try await nodes.cluster.run(until: "some moves are committed", within: 60) {
            (await nodes.machine(of: spec.id, on: 1)?.workloadState as? BikeJobBook)?.entries.contains { $0.progress.moves > 0 } ?? false
        }
        return (spec, submitted)
    }

    static func simulation(_ report: TaskJobReport) throws -> SimulationReport {
        try MachineText.decode(SimulationReport.self, from: try #require(report.workloadReport))
    }

    @Test func aBikeJobRunsOnTheJobDeskWithItsBookOnEveryReplica() async throws {
        let nodes = try await nodes()
        let job = BikeJob(id: "job-desk1", network: Self.network, options: SimulationOptions(users: 8, paths: 3, seed: 7))
        let spec = try job.taskJobSpec(settings: nodes.cluster[0].settings)
        let coordinator = nodes.desks[0]
        let report = try await nodes.cluster.complete("the job runs", within: 120) { try await coordinator.submit(spec, listener: nil) }
        #expect(report.succeeded == 8 && report.stored == true)
        let simulation = try Self.simulation(report)
        checkExactlyOnce(simulation, users: 8)
        #expect(simulation.completedUsers == 8)
        for index in 0..<3 {
            guard let machine = await nodes.machine(of: spec.id, on: index) else { continue }
            let book = try #require(machine.workloadState as? BikeJobBook)
            #expect(book.doneUsers.count == 8 && book.bikesInPlay == job.startingBook.bikesInPlay, "replica \(index) holds the coordinator's book")
            #expect(book.stations.map(\.freeBikes) == simulation.stations.map(\.freeBikes), "replica \(index): the stations the report shows")
        }
        await nodes.stop()
    }

    /// The coordinator is paused mid-job (its users moving): a replica commits the next
    /// epoch and runs the users that had not ended from the committed book; the report
    /// counts every user once and conserves the bikes; the old coordinator stores nothing.
    @Test func aBikeJobTakenOverRunsOnFromTheCommittedBook() async throws {
        let nodes = try await nodes()
        let (spec, submitted) = try await startMoving("job-desk2", paths: 4, seed: 11, on: nodes)
        let (taker, report) = try await nodes.pauseForTakeOver(0, of: spec.id, within: 120)
        let simulation = try Self.simulation(report)
        checkExactlyOnce(simulation, users: 12)
        #expect(report.succeeded == 12)
        #expect(simulation.completedUsers == 12, "the users that ended before the take-over kept their ends: \(simulation.completedUsers)")
        if let machine = await nodes.machine(of: spec.id, on: taker) {
            #expect(machine.epoch == 1, "the take-over committed the next epoch")
        }
        nodes.cluster.resume(0)
        _ = try await nodes.cluster.complete("the old coordinator's run", within: 60) { () async -> Bool in
            (try? await submitted.value) != nil
        }
        #expect(try nodes.histories[0].taskJobReport(of: spec.id) == nil, "the old coordinator stored nothing")
        await nodes.stop()
    }

    /// A bike job cancelled on the job desk: its users' attempts say who cancelled them,
    /// and the report says the job was cancelled, with every user once and the bikes
    /// conserved.
    @Test func aCancelledBikeJobSaysWhoCancelledEachUser() async throws {
        let nodes = try await nodes()
        let (spec, submitted) = try await startMoving("job-desk3", paths: 6, seed: 5, on: nodes)
        let coordinator = nodes.desks[0]
        let cancelled = try await nodes.cluster.complete("the cancellation", within: 60) {
            try await coordinator.cancelHere(job: spec.id, reason: "cancelled with 'spokes cancel'")
        }
        let report = try Self.simulation(try #require(cancelled))
        _ = try await nodes.cluster.complete("the submit call ends", within: 30) { try? await submitted.value }
        #expect(report.cancelled && report.cancelReason == "cancelled with 'spokes cancel'")
        checkExactlyOnce(report, users: 12)
        let reasons = (report.cancelledUsers ?? []).flatMap(\.reasons)
        #expect(!reasons.isEmpty && reasons.allSatisfy { $0.hasSuffix(": cancelled with 'spokes cancel' while it ran") || $0.hasSuffix(": cancelled with 'spokes cancel' before it started") },
                "each cancelled attempt says who cancelled it: \(reasons)")
        await nodes.stop()
    }
}

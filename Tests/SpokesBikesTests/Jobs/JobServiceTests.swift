import Foundation
import Glibc
import SpokesCluster
import SpokesConcurrency
import SpokesJobs
import SpokesTestKit
import Testing
@testable import SpokesBikes

/// The job desks of in-process nodes (`jobs` and `bikejobs`): storing reports,
/// cancelling, and the counts a report gives.
@Suite(.processLane, .timeLimit(.minutes(2)))
struct JobServiceTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spokes-service-\(UUID().uuidString)").path

    /// A node's two desks: every job's, and bike jobs'.
    struct Desks {
        let jobs: JobService
        let bikes: BikeJobService
    }

    /// The desks on each node, each storing under a folder of this test's own.
    func services(on nodes: [ClusterNode], disk: any Disk = RealDisk()) async -> [Desks] {
        var desks: [Desks] = []
        for node in nodes {
            let (jobs, bikes) = await BikeJobService.hostDesks(on: node, store: JobStore(directory: directory + "/" + node.settings.nodeName, disk: disk))
            desks.append(Desks(jobs: jobs, bikes: bikes))
        }
        return desks
    }

    @Test func aReportThatCannotBeStoredSaysSoAndWhy() async throws {
        let nodes = try await BikeJobTests().startCluster(1)
        defer { nodes.forEach { $0.stop() } }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fullDisk = SimulatedDisk()
        fullDisk.capacity = 0
        let service = await services(on: nodes, disk: fullDisk)[0]
        let options = SimulationOptions(users: 5, paths: 2, seed: 1, timing: MoveTiming(timeScale: 0))
        let report = try await service.bikes.submit(BikeJob(id: "job-full", network: BikeJobTests.contendedNetwork(), options: options), listener: nil)
        #expect(report.completedUsers == 5)
        #expect(report.stored == false)
        #expect(report.storeError == "cannot write \(directory)/b0/jobs.jsonl: no space left on device")
        #expect(try await service.jobs.finishedJobs().isEmpty)
    }

    @Test func aStoredReportSaysItWasStored() async throws {
        let nodes = try await BikeJobTests().startCluster(1)
        defer { nodes.forEach { $0.stop() } }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = await services(on: nodes)[0]
        let options = SimulationOptions(users: 5, paths: 2, seed: 1, timing: MoveTiming(timeScale: 0))
        let report = try await service.bikes.submit(BikeJob(id: "job-ok", network: BikeJobTests.contendedNetwork(), options: options), listener: nil)
        #expect(report.stored == true && report.storeError == nil)
        #expect(try await service.jobs.finishedJobs().map(\.job) == ["job-ok"])
        #expect(try await service.jobs.jobs().map(\.state) == [.completed])
    }

    @Test func withoutRetriesAFailingNodeCostsFailedUsersAndNoRetries() async throws {
        let nodes = try await BikeJobTests().startCluster(1, faults: [.init(failEvery: 5)])
        defer { nodes.forEach { $0.stop() } }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = await services(on: nodes)[0]
        let options = SimulationOptions(users: 20, paths: 2, seed: 1, timing: MoveTiming(timeScale: 0))
        let report = try await service.bikes.submit(BikeJob(network: BikeJobTests.contendedNetwork(), options: options, retries: 0), listener: nil)
        #expect(report.retries == 0, "no attempt was started again")
        #expect(report.failedUsers?.count == 4)
        #expect(report.cancelledUsers == [])
        #expect(report.failedUsers?.allSatisfy { $0.reasons.count == 1 && $0.reasons[0].hasPrefix("attempt 1 on b0: injected failure on b0") } == true,
                "\(report.failedUsers ?? [])")
    }

    @Test func aJobCancelledFromAnotherNodeStopsEverywhereAndItsStoredReportSaysWhoCancelledIt() async throws {
        let nodes = try await BikeJobTests().startCluster(2, slots: 2)
        defer { nodes.forEach { $0.stop() } }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let services = await services(on: nodes)
        let options = SimulationOptions(users: 30, paths: 1_000, seed: 5, timing: MoveTiming(moveTime: 0.1, timeScale: 0.5))
        let job = BikeJob(id: "job-stop", network: try BikeJobTests.contendedNetwork(), options: options)
        let submitted = Task { try await services[0].bikes.submit(job, listener: nil) }
        try await eventually("users run on both nodes") { nodes.allSatisfy { $0.counters.running > 0 } }
        let listed = try await services[0].jobs.jobs()
        #expect(listed.map(\.job) == ["job-stop"] && listed.first?.state == .running, "\(listed)")

        // Asked on the node that does not coordinate it: the request goes to the one that does.
        let cancellation = try #require(await services[1].jobs.cancel(job: "job-stop", origin: .command))
        #expect(cancellation.coordinator == "b0")
        #expect(cancellation.summary?.state == .cancelled)
        #expect(cancellation.storeError == nil)
        let report = try await submitted.value
        #expect(report.cancelled)
        #expect(report.cancelReason == "cancelled with 'spokes cancel'")
        #expect(report.conservation.holds, "\(report.conservation)")
        #expect(report.stored == true)
        #expect(report.retries == 0, "a cancelled attempt is not a retry")
        #expect(report.failedUsers == [], "cancelled users are not failed users")
        let cancelled = report.cancelledUsers ?? []
        #expect(cancelled.count == 30 - report.completedUsers && !cancelled.isEmpty)
        #expect(cancelled.allSatisfy { user in
            user.reasons.count == 1
                && (user.reasons[0].hasSuffix(": cancelled with 'spokes cancel' while it ran")
                    || user.reasons[0].hasSuffix(": cancelled with 'spokes cancel' before it started"))
        }, "\(cancelled.prefix(3))")
        let stored = try #require(try await services[0].bikes.report(of: "job-stop"))
        #expect(stored.cancelled && stored.cancelReason == report.cancelReason)
        #expect(try await services[0].jobs.jobs().map(\.state) == [.cancelled])
        try await eventually("no node runs the job's users") { nodes.allSatisfy { $0.counters.running == 0 } }
        #expect(try await services[0].jobs.cancel(job: "job-stop", origin: .command) == nil, "an ended job is not running anywhere")
    }
}

import Foundation
import SpokesCluster
import Testing
@testable import SpokesBikes

/// A bike job's owner and priority (issue 32): carried with the job, checked before it runs.
@Suite struct BikeJobShareTests {
    private func job(share: JobShare?) throws -> BikeJob {
        var job = BikeJob(network: try BundledNetworks.milano, options: SimulationOptions(users: 10, paths: 1))
        job.share = share
        return job
    }

    @Test func aJobOfAnOlderSubmitterHasNoShareAndStillDecodes() throws {
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(try job(share: nil))) as? [String: Any])
        object["share"] = nil
        let decoded = try JSONDecoder().decode(BikeJob.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(decoded.share == nil)
        #expect(try job(share: JobShare(owner: "ada", priority: 7)).share?.priority == 7)
    }

    @Test func aPriorityOutOfRangeIsRefusedBeforeTheJobRuns() throws {
        #expect(throws: OutOfRange.self) { try job(share: JobShare(owner: "ada", priority: 11)).validated(settings: ClusterSettings()) }
        _ = try job(share: JobShare(owner: "ada", priority: 10, maxSlots: 4)).validated(settings: ClusterSettings())
    }
}

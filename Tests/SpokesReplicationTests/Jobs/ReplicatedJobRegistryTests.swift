import SpokesTestKit
import Foundation
import SpokesConsensus
import SpokesReplication
import SpokesJobs
import Testing

/// The job registry as a state machine on its own, and driven by a Raft group on real
/// nodes through a failover.
@Suite(.processLane, .timeLimit(.minutes(1)))
struct ReplicatedJobRegistryTests {
    typealias Registry = ReplicatedJobRegistry

    func apply(_ command: Registry.Command, to registry: inout Registry) throws -> Registry.Outcome {
        try Registry.Outcome(result: registry.apply(command.text))
    }

    @Test func aJobIsSubmittedRunsAndFinishesOnceWithItsFirstResult() throws {
        var registry = Registry()
        let submitted = try apply(.submit(id: "job-1", specification: #"{"users":5}"#), to: &registry)
        #expect(submitted == .submitted(Registry.Job(id: "job-1", specification: #"{"users":5}"#)))
        #expect(registry.running.map(\.id) == ["job-1"])
        #expect(try apply(.submit(id: "job-1", specification: #"{"users":5}"#), to: &registry) == .alreadySubmitted(Registry.Job(id: "job-1", specification: #"{"users":5}"#)),
                "submitting again is a retry, not a second job")
        let finished = Registry.Job(id: "job-1", specification: #"{"users":5}"#, state: .finished, result: #"{"completed":5}"#)
        #expect(try apply(.finish(id: "job-1", result: #"{"completed":5}"#), to: &registry) == .finished(finished))
        #expect(try apply(.finish(id: "job-1", result: #"{"completed":4}"#), to: &registry) == .alreadyFinished(finished),
                "a second result never replaces the first")
        #expect(registry.jobs["job-1"] == finished && registry.running.isEmpty)
        #expect(try apply(.remove(id: "job-1"), to: &registry) == .removed(id: "job-1"))
        #expect(registry.jobs.isEmpty)
    }

    @Test func conflictingAndMalformedCommandsAreRefusedWithAReason() throws {
        var registry = Registry()
        _ = try apply(.submit(id: "job-1", specification: "{}"), to: &registry)
        #expect(try apply(.submit(id: "job-1", specification: "[]"), to: &registry) == .refused(reason: "job job-1 exists with another specification"))
        #expect(try apply(.finish(id: "job-2", result: "{}"), to: &registry) == .refused(reason: "no job job-2"))
        #expect(try apply(.remove(id: "job-1"), to: &registry) == .refused(reason: "job job-1 is still running"))
        #expect(try apply(.submit(id: "", specification: "{}"), to: &registry) == .refused(reason: "a job id is empty"))
        #expect(try apply(.submit(id: "job-3", specification: "{not json"), to: &registry) == .refused(reason: "the specification is not JSON"))
        #expect(try apply(.finish(id: "job-1", result: ""), to: &registry) == .refused(reason: "the result is not JSON"))
        for garbage in ["", "{", "null", #"{"launch":{"id":"x"}}"#, String(repeating: "[", count: 10_000)] {
            #expect(try Registry.Outcome(result: registry.apply(garbage)) == .refused(reason: "not a job registry command"))
        }
        #expect(registry.jobs.keys.sorted() == ["job-1"], "refusals change nothing")
    }

    @Test func aSnapshotRestoresEveryJobAndBadSnapshotsAreRefused() throws {
        var registry = Registry()
        _ = try apply(.submit(id: "job-1", specification: "{}"), to: &registry)
        _ = try apply(.submit(id: "job-2", specification: "[1]"), to: &registry)
        _ = try apply(.finish(id: "job-2", result: "2"), to: &registry)
        var restored = Registry()
        try restored.restore(registry.snapshot())
        #expect(restored == registry)
        #expect(restored.snapshot() == registry.snapshot())
        for bad in ["", "{}", #"{"version":2,"jobs":[]}"#, #"{"version":1,"jobs":[{"id":"a","specification":"{}","state":"running"},{"id":"a","specification":"{}","state":"running"}]}"#] {
            #expect(throws: Registry.SnapshotError.self, "\(bad)") { try restored.restore(bad) }
        }
        #expect(restored == registry, "a refused snapshot leaves the state alone")
    }

    @Test func jobsAcceptedByAMajoritySurviveTheLeadersNode() async throws {
        let cluster = try RaftTestCluster(nodes: 3)
        try await cluster.converge()
        let group = try RaftGroup(replicas: cluster.names)
        for index in 0..<3 { try await cluster.host(index).open(group: "jobs", group, machine: Registry()) }
        let leader = try await cluster.leader(of: "jobs")
        let submitted = try await retryingWhileLeaderless("job-1 submitted", unknownOutcomes: true) {
            try await cluster.host(leader).propose(group: "jobs", .submit(id: "job-1", specification: #"{"users":3}"#))
        }
        let job = Registry.Job(id: "job-1", specification: #"{"users":3}"#)
        #expect(submitted == .submitted(job) || submitted == .alreadySubmitted(job), "proposed again only after an unknown outcome")
        await cluster.kill(leader)
        let survivor = (leader + 1) % 3
        let finished = Registry.Job(id: "job-1", specification: #"{"users":3}"#, state: .finished, result: #"{"completed":3}"#)
        let outcome = try await retryingWhileLeaderless("a survivor finishes job-1", unknownOutcomes: true) {
            try await cluster.host(survivor).propose(group: "jobs", .finish(id: "job-1", result: #"{"completed":3}"#))
        }
        #expect(outcome == .finished(finished) || outcome == .alreadyFinished(finished), "the new leader knew the job the old one accepted")
        for index in 0..<3 where index != leader {
            try await eventually("\(cluster.name(index)) holds job-1 finished") {
                (await cluster.host(index).stateMachine(of: "jobs") as? Registry)?.jobs["job-1"] == finished
            }
        }
        await cluster.stopAll()
    }
}

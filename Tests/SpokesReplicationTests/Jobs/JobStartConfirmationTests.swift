import Testing
@testable import SpokesReplication
@testable import SpokesJobs

/// What a submitter is told when a new job's first entry could not be committed in
/// time (review, issue 29 §1.4: such a job was reported refused, and its other replicas
/// could still commit it and run it).
@Suite struct JobStartConfirmationTests {
    struct NoMajority: Error, CustomStringConvertible { var description: String { "no majority" } }

    @Test func aCommittedStartIsAccepted() async throws {
        try await JobGroups.confirmFirst(job: "map-1", propose: {}, cancel: { Issue.record("no cancellation for an accepted job") })
    }

    @Test func anUncommittedStartWhoseCancellationCommitsIsRefusedAndRunsNowhere() async {
        do {
            try await JobGroups.confirmFirst(job: "map-1", propose: { throw NoMajority() }, cancel: {})
            Issue.record("not accepted")
        } catch {
            #expect(!error.outcomeUnknown)
            #expect(error.description.contains("its cancellation is, so it runs nowhere"), "\(error)")
        }
    }

    @Test func anUncommittedStartThatCannotBeCancelledIsNotCalledRefused() async {
        do {
            try await JobGroups.confirmFirst(job: "map-1", propose: { throw NoMajority() }, cancel: { throw NoMajority() })
            Issue.record("not accepted")
        } catch {
            #expect(error.outcomeUnknown)
            #expect(error.description.contains("cannot tell whether job map-1 was accepted"), "\(error)")
            #expect(error.description.contains("spokes result map-1 --wait"), "the submitter is told how to follow it")
        }
    }

    @Test func withoutACancellationTheOutcomeIsUnknown() async {
        do {
            try await JobGroups.confirmFirst(job: "shard-1", propose: { throw NoMajority() }, cancel: nil)
            Issue.record("not accepted")
        } catch {
            #expect(error.outcomeUnknown)
        }
    }
}

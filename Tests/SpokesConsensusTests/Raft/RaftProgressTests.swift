import Testing
@testable import SpokesConsensus

/// What a leader knows of one follower, and how it moves between probing and pipelining.
@Suite struct RaftProgressTests {
    /// Review (issue 29 §1.6): leaving probe mode kept a `next` that probes had moved but
    /// the follower never confirmed; etcd resumes at `match + 1`.
    @Test func aConfirmedProbeResumesRightAfterWhatTheFollowerMatched() {
        var progress = RaftProgress(next: 10, heardAt: 0)
        #expect(progress.mode == .probe)
        progress.matched(4)
        #expect(progress.mode == .replicate)
        #expect(progress.next == 5, "pipelining starts after the confirmed match, not at an unconfirmed next")
    }

    @Test func anAnswerOlderThanTheMatchChangesNoMode() {
        var progress = RaftProgress(next: 1, heardAt: 0)
        progress.matched(6)
        progress.probe(from: 7)
        progress.matched(3)
        #expect(progress.mode == .probe, "a late answer below the match is no confirmation")
        #expect(progress.match == 6 && progress.next == 7)
    }

    @Test func aSnapshotConfirmedResumesAfterIt() {
        var progress = RaftProgress(next: 50, heardAt: 0)
        progress.mode = .snapshot(index: 20, sentAt: 0)
        progress.matched(20)
        #expect(progress.mode == .replicate && progress.next == 21)
    }

    @Test func inReplicateModeNextOnlyMovesForward() {
        var progress = RaftProgress(next: 1, heardAt: 0)
        progress.matched(3)
        progress.next = 9
        progress.matched(5)
        #expect(progress.next == 9 && progress.match == 5)
    }
}

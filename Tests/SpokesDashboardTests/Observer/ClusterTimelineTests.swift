import Testing
@testable import SpokesCluster
@testable import SpokesDashboard

@Suite struct ClusterTimelineTests {
    func observation(_ node: String, now: Double, uptime: Double = 100, last: UInt64, _ spans: [TaskTimeline.Span]) -> NodeObservation {
        NodeObservation(node: node, now: now, uptime: uptime, slots: 4, waitingSlots: 100, inUse: .zero, succeeded: 0, failed: 0, tasks: spans,
                        lastTaskSequence: last, jobs: [], roundTrips: [:])
    }

    func span(_ task: Int, start: Double, end: Double?, sequence: UInt64, outcome: TaskTimeline.Outcome = .succeeded) -> TaskTimeline.Span {
        TaskTimeline.Span(job: "j", task: task, attempt: 1, slot: 0, start: start, end: end, outcome: end == nil ? .running : outcome, sequence: sequence)
    }

    @Test func spansMoveOntoTheServingClockByTheMidpointOfThePoll() throws {
        var timeline = ClusterTimeline()
        // The remote clock reads 1000 when ours reads 10.5 (poll sent at 10, answered at 11).
        timeline.absorb(observation("b", now: 1000, last: 1, [span(0, start: 990, end: 995, sequence: 1)]), askedAfter: 0, sentAt: 10, receivedAt: 11)
        let spans = timeline.spans(now: 11)
        #expect(spans.count == 1)
        #expect(spans[0].start == 0.5 && spans[0].end == 5.5)
        #expect(timeline.offset(of: "b") == -989.5)
    }

    @Test func theOffsetOfTheShortestPollIsKept() {
        var timeline = ClusterTimeline()
        timeline.absorb(observation("b", now: 100, last: 0, []), askedAfter: 0, sentAt: 10, receivedAt: 10.002)
        timeline.absorb(observation("b", now: 110, last: 0, []), askedAfter: 0, sentAt: 20, receivedAt: 20.8)
        #expect(timeline.offset(of: "b") == -89.999, "the 0.8 s poll says less than the 2 ms one")
        timeline.absorb(observation("b", now: 120, last: 0, []), askedAfter: 0, sentAt: 30, receivedAt: 30.001)
        #expect(timeline.offset(of: "b") == -89.9995)
    }

    @Test func aKeptOffsetIsReplacedOnceItIsOld() {
        var timeline = ClusterTimeline()
        timeline.absorb(observation("b", now: 100, last: 0, []), askedAfter: 0, sentAt: 10, receivedAt: 10.002)
        timeline.absorb(observation("b", now: 150, last: 0, []), askedAfter: 0, sentAt: 60, receivedAt: 60.1)
        #expect(timeline.offset(of: "b") == -89.95, "after 30 s a longer poll still updates a clock that may drift")
    }

    @Test func endedSpansAreKeptOnceAndRunningOnesAreReplacedEachPoll() {
        var timeline = ClusterTimeline()
        timeline.absorb(observation("b", now: 10, last: 1, [span(0, start: 1, end: 2, sequence: 1), span(1, start: 3, end: nil, sequence: 0)]),
                        askedAfter: 0, sentAt: 10, receivedAt: 10)
        timeline.absorb(observation("b", now: 11, last: 2, [span(1, start: 3, end: 10.5, sequence: 2), span(2, start: 10.6, end: nil, sequence: 0)]),
                        askedAfter: 1, sentAt: 11, receivedAt: 11)
        let spans = timeline.spans(now: 11)
        #expect(spans.map(\.task) == [0, 1, 2])
        #expect(spans.map(\.outcome) == ["succeeded", "succeeded", "running"])
        #expect(timeline.lastSequence(of: "b") == 2)
    }

    @Test func spansOlderThanTheWindowAreDropped() {
        var timeline = ClusterTimeline()
        timeline.absorb(observation("b", now: 100, last: 2, [span(0, start: 1, end: 2, sequence: 1), span(1, start: 80, end: 90, sequence: 2)]),
                        askedAfter: 0, sentAt: 100, receivedAt: 100)
        #expect(timeline.spans(now: 100).map(\.task) == [1], "task 0 ended 98 s ago, beyond the 60 s window")
    }

    @Test func aRestartedNodesOldSpansGoAndItsNewOnesCount() {
        var timeline = ClusterTimeline()
        timeline.absorb(observation("b", now: 10, uptime: 50, last: 5, (1...5).map { span($0, start: 1, end: 2, sequence: UInt64($0)) }),
                        askedAfter: 0, sentAt: 10, receivedAt: 10)
        // Restarted: its sequence is back at 2, below the 5 we ask after.
        timeline.absorb(observation("b", now: 20, uptime: 1, last: 2, [span(7, start: 19, end: 19.5, sequence: 1), span(8, start: 19.5, end: 19.8, sequence: 2)]),
                        askedAfter: 5, sentAt: 20, receivedAt: 20)
        #expect(timeline.spans(now: 20).map(\.task) == [7, 8])
        // Restarted and already past the old sequence: the uptime tells.
        timeline.absorb(observation("b", now: 30, uptime: 0.5, last: 9, [span(9, start: 29.7, end: 29.8, sequence: 9)]),
                        askedAfter: 2, sentAt: 30, receivedAt: 30)
        #expect(timeline.spans(now: 30).map(\.task) == [9])
    }

    @Test func memoryIsBoundedPerNode() {
        var timeline = ClusterTimeline(maximumSpans: 10)
        let spans = (1...50).map { span($0, start: 1, end: 2, sequence: UInt64($0)) }
        timeline.absorb(observation("b", now: 10, last: 50, spans), askedAfter: 0, sentAt: 10, receivedAt: 10)
        #expect(timeline.spans(now: 10).map(\.task) == Array(41...50))
    }

    @Test func aSnapshotCarriesOnlyTheNewestSpansUpToTheLimit() {
        var timeline = ClusterTimeline()
        let spans = (1...50).map { span($0, start: Double($0) / 10, end: Double($0) / 10 + 0.05, sequence: UInt64($0)) }
        timeline.absorb(observation("b", now: 10, last: 50, spans), askedAfter: 0, sentAt: 10, receivedAt: 10)
        #expect(timeline.spans(now: 10, limit: 5).map(\.task) == [46, 47, 48, 49, 50])
    }

    @Test func aForgottenNodeLeavesTheStream() {
        var timeline = ClusterTimeline()
        timeline.absorb(observation("b", now: 10, last: 1, [span(0, start: 1, end: 2, sequence: 1)]), askedAfter: 0, sentAt: 10, receivedAt: 10)
        timeline.forget("b")
        #expect(timeline.spans(now: 10).isEmpty)
        #expect(timeline.nodes.isEmpty)
    }

    // MARK: - Failovers

    func group(_ id: String = "taskjob-map-1", leader: String?, term: Int) -> ReplicaGroupView {
        ReplicaGroupView(id: id, node: "b", replicas: ["n1", "n2", "n3"], leader: leader, term: term, role: leader == "b" ? "leader" : "follower", commitIndex: 0)
    }

    @Test func aLeaderReplacedThroughAnElectionIsOneFailover() {
        var timeline = ClusterTimeline()
        timeline.observeGroups([group(leader: "n1", term: 2)], at: 10)
        #expect(timeline.failovers(now: 10).isEmpty, "the first leader seen is no failover")
        timeline.observeGroups([group(leader: nil, term: 3)], at: 11)
        timeline.observeGroups([group(leader: "n3", term: 3)], at: 12)
        timeline.observeGroups([group(leader: "n3", term: 3)], at: 13)
        let failovers = timeline.failovers(now: 13)
        #expect(failovers == [FailoverView(time: 12, group: "taskjob-map-1", job: "map-1", from: "n1", to: "n3", term: 3)])
        #expect(failovers.first?.description == "job map-1: leader n1 -> n3 (term 3)")
    }

    @Test func oldTermsAndALeaderElectedAgainAreNoFailover() {
        var timeline = ClusterTimeline()
        timeline.observeGroups([group(leader: nil, term: 1)], at: 1)
        timeline.observeGroups([group(leader: "n1", term: 1)], at: 2)
        timeline.observeGroups([group(leader: "n1", term: 4)], at: 3)
        // A replica that has not heard of term 4 yet names an older leader.
        timeline.observeGroups([group(leader: "n2", term: 3)], at: 4)
        timeline.observeGroups([group(leader: "n1", term: 4)], at: 5)
        #expect(timeline.failovers(now: 5).isEmpty)
        timeline.observeGroups([group(leader: "n2", term: 6), group("g", leader: "n1", term: 1)], at: 6)
        timeline.observeGroups([group("g", leader: "n2", term: 2)], at: 7)
        #expect(timeline.failovers(now: 7).map(\.description) == ["job map-1: leader n1 -> n2 (term 6)", "group g: leader n1 -> n2 (term 2)"])
    }

    @Test func failoversAndUnseenGroupsAreForgottenInTime() {
        var timeline = ClusterTimeline()
        timeline.observeGroups([group(leader: "n1", term: 1)], at: 0)
        timeline.observeGroups([group(leader: "n2", term: 2)], at: 1)
        #expect(timeline.failovers(now: 1).count == 1)
        #expect(timeline.failovers(now: 1 + DashboardSnapshot.failoverSeconds + 1).isEmpty)
        // Unseen for longer than the stream's window, a group starts over: its next leader is its first.
        timeline.observeGroups([], at: 100)
        timeline.observeGroups([group(leader: "n3", term: 5)], at: 101)
        #expect(timeline.failovers(now: 101).isEmpty)
        for term in 6...(6 + ClusterTimeline.maximumFailovers) {
            timeline.observeGroups([group(leader: "n\(term % 3 + 1)", term: term)], at: 102)
        }
        #expect(timeline.failovers(now: 102).count == ClusterTimeline.maximumFailovers)
        #expect(timeline.failovers(now: 102).last?.term == 6 + ClusterTimeline.maximumFailovers)
    }
}

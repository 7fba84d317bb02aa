@testable import SpokesCluster
import Testing
@testable import SpokesCLI

@Suite struct SchedulingProfileTests {
    func span(_ task: Int, slot: Int, start: Double, end: Double) -> TaskTimeline.Span {
        TaskTimeline.Span(job: "b", task: task, attempt: 1, slot: slot, start: start, end: end, outcome: .succeeded, sequence: UInt64(task + 1))
    }

    @Test func itSaysWhereABatchsTimeWent() throws {
        // Two slots on node a, one on node b; tasks of nominally 1 s; the batch began at 10.
        let spans: [(node: String, span: TaskTimeline.Span)] = [
            ("a", span(0, slot: 0, start: 10.002, end: 11.004)),
            ("a", span(1, slot: 0, start: 11.005, end: 12.006)),
            ("a", span(2, slot: 1, start: 10.003, end: 11.003)),
            ("b", span(3, slot: 0, start: 10.004, end: 11.005)),
            ("b", span(4, slot: 0, start: 11.008, end: 12.008)),
        ]
        let profile = try #require(SchedulingProfile(spans: spans, start: 10, wall: 2.01, nominal: 1))
        #expect(abs(profile.lead - 0.002) < 1e-9, "the first task started 2 ms in")
        #expect(abs(profile.tail - 0.002) < 1e-9, "the last task ended 2 ms before the result")
        #expect(abs(profile.overrun.max - 0.002) < 1e-9, "task 0 took 1.002 s")
        #expect(abs(profile.overrun.p50 - 0.001) < 1e-9)
        // Gaps: a/0 1 ms, b/0 3 ms; a/1 ran one task. Per slot: 4 ms over 3 slots.
        #expect(abs(profile.gap.max - 0.003) < 1e-9)
        #expect(abs(profile.gap.perSlot - 0.004 / 3) < 1e-9)
        #expect(profile.rounds == 2)
        #expect(profile.text.contains("2 tasks at most per slot"))
    }

    @Test func runningAttemptsAreLeftOutAndNoSpansGiveNoProfile() {
        let running = TaskTimeline.Span(job: "b", task: 0, attempt: 1, slot: 0, start: 1, end: nil, outcome: .running, sequence: 0)
        #expect(SchedulingProfile(spans: [("a", running)], start: 0, wall: 1, nominal: 1) == nil)
        #expect(SchedulingProfile(spans: [], start: 0, wall: 1, nominal: 1) == nil)
    }
}

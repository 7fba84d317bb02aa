import Testing
@testable import SpokesCluster

@Suite struct TaskTimelineTests {
    @Test func eachRunningAttemptTakesTheLowestFreeSlot() {
        let timeline = TaskTimeline()
        let a = timeline.begin(job: "j", task: 0, attempt: 1, at: 1)
        let b = timeline.begin(job: "j", task: 1, attempt: 1, at: 1)
        let c = timeline.begin(job: "j", task: 2, attempt: 1, at: 1)
        timeline.end(b, outcome: .succeeded, at: 2)
        let d = timeline.begin(job: "j", task: 3, attempt: 1, at: 2)
        let running = timeline.spans(after: 0).spans.filter { $0.outcome == .running }
        #expect(running.map(\.task).sorted() == [0, 2, 3])
        #expect(running.first { $0.task == 3 }?.slot == 1, "task 3 takes the slot task 1 freed")
        #expect(Set(running.map(\.slot)) == [0, 1, 2])
        for ticket in [a, c, d] { timeline.end(ticket, outcome: .succeeded, at: 3) }
    }

    @Test func endedAttemptsComeBackInOrderAfterTheSequenceGiven() {
        let timeline = TaskTimeline()
        for task in 0..<5 {
            let ticket = timeline.begin(job: "j", task: task, attempt: 1, at: Double(task))
            timeline.end(ticket, outcome: task == 3 ? .failed : .succeeded, at: Double(task) + 0.5)
        }
        let all = timeline.spans(after: 0)
        #expect(all.lastSequence == 5)
        #expect(all.spans.map(\.task) == [0, 1, 2, 3, 4])
        #expect(all.spans[3].outcome == .failed)
        #expect(all.spans[3].end == 3.5)
        #expect(timeline.spans(after: 3).spans.map(\.task) == [3, 4])
        #expect(timeline.spans(after: 5).spans.isEmpty)
    }

    @Test func memoryIsBoundedToTheCapacity() {
        let timeline = TaskTimeline(capacity: 8)
        for task in 0..<100 {
            timeline.end(timeline.begin(job: "j", task: task, attempt: 1, at: 0), outcome: .succeeded, at: 1)
        }
        let kept = timeline.spans(after: 0)
        #expect(kept.spans.map(\.task) == Array(92..<100), "only the newest 8, oldest first")
        #expect(kept.lastSequence == 100)
        #expect(timeline.spans(after: 0, limit: 3).spans.map(\.task) == [97, 98, 99])
    }

    @Test func endingTwiceOrEndingAsRunningCannotCorruptTheRecord() {
        let timeline = TaskTimeline()
        let ticket = timeline.begin(job: "j", task: 0, attempt: 2, at: 5)
        timeline.end(ticket, outcome: .running, at: 4)
        timeline.end(ticket, outcome: .failed, at: 9)
        let spans = timeline.spans(after: 0).spans
        #expect(spans.count == 1)
        #expect(spans[0].outcome == .succeeded)
        #expect(spans[0].end == 5, "an end before the start is clamped to the start")
        #expect(spans[0].attempt == 2)
    }
}

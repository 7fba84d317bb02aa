@testable import SpokesJobs
import Testing
@testable import SpokesCluster

/// A job's wall time in its report, wherever it ended.
@Suite struct TaskJobWallTimeTests {
    static let spec = TaskJobSpec(id: "map-00000001", kind: "test.kind", schema: nil, title: "3 x test.kind", inputs: ["1", "2", "3"], deadline: 5, retries: 1)

    /// Review (issue 29 §1.9): a map taken over after 58.9 s reported 8.0 s, the last
    /// coordinator's run alone. The spec carries its first start; the report counts from it.
    @Test func aTakenOverJobCountsFromItsFirstCoordinatorsStart() {
        var spec = Self.spec
        spec.startedAt = 1_800_000_000
        let wall = TaskJobs.wallTime(of: spec, runningSince: 500, now: 508, unixNow: 1_800_000_058.9)
        #expect(abs(wall - 58.9) < 1e-6)
    }

    @Test func aJobWithoutAFirstStartCountsItsRunHere() {
        #expect(TaskJobs.wallTime(of: Self.spec, runningSince: 500, now: 508, unixNow: 1_800_000_058.9) == 8)
        #expect(TaskJobs.wallTime(of: Self.spec, runningSince: 500, now: 499, unixNow: 1_800_000_058.9) == 0, "never negative")
    }

    @Test func aFirstStartThatIsNoTimeIsRefused() {
        var spec = Self.spec
        spec.startedAt = -1
        #expect(throws: OutOfRange.self) { try spec.checkRanges() }
        spec.startedAt = .infinity
        #expect(throws: OutOfRange.self) { try spec.checkRanges() }
        spec.startedAt = 1_800_000_000
        #expect(throws: Never.self) { try spec.checkRanges() }
    }
}

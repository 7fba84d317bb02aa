import Foundation
import SpokesCluster
import SpokesJobs
import Testing
@testable import SpokesReplication
@testable import SpokesJobs

/// A job of tasks as a Raft group's state: the spec once, each task's first committed
/// end, bad commands refused alike on every replica.
@Suite struct TaskJobMachineTests {
    static let spec = TaskJobSpec(id: "map-00000001", kind: "test.kind", schema: nil, title: "3 x test.kind", inputs: ["1", "2", "3"], deadline: 5, retries: 1)

    static func end(_ output: String, on node: String) -> TaskJobReport.TaskEnd {
        TaskJobReport.TaskEnd(JobRunner.Outcome(task: 0, output: output, node: node, attempts: 1, failures: []))
    }

    @Test func theFirstCommittedEndOfATaskWinsAndTheSpecIsKeptOnce() {
        var machine = TaskJobMachine()
        #expect(machine.apply(TaskJobMachine.start(Self.spec)) == "ok")
        var other = Self.spec
        other.title = "another"
        #expect(machine.apply(TaskJobMachine.start(other)) == "ok" && machine.spec == Self.spec, "a repeated start changes nothing")
        #expect(machine.apply(TaskJobMachine.ended([.init(task: 1, end: Self.end("4", on: "n1"))])) == "ok")
        // The old leader's late end for the same task, committed after: ignored.
        #expect(machine.apply(TaskJobMachine.ended([.init(task: 1, end: Self.end("4", on: "n2")), .init(task: 0, end: Self.end("1", on: "n2"))])) == "ok")
        #expect(machine.ends[1]?.node == "n1" && machine.ends[0]?.node == "n2" && machine.ends.count == 2)
        #expect(!machine.finished)
        #expect(machine.apply(TaskJobMachine.finish) == "ok" && machine.finished)
    }

    @Test func aCommittedCancellationStaysWithTheFirstReasonAndSurvivesASnapshot() throws {
        var machine = TaskJobMachine()
        _ = machine.apply(TaskJobMachine.start(Self.spec))
        #expect(machine.cancelReason == nil)
        #expect(machine.apply(TaskJobMachine.cancel("cancelled with 'spokes cancel'")) == "ok")
        _ = machine.apply(TaskJobMachine.cancel("cancelled by the submitter"))
        #expect(machine.cancelReason == "cancelled with 'spokes cancel'", "the first reason stays")
        var restored = TaskJobMachine()
        try restored.restore(machine.snapshot())
        #expect(restored.cancelReason == machine.cancelReason)
    }

    @Test func aCommandItCannotUseChangesNothingOnEveryReplica() {
        var machine = TaskJobMachine()
        #expect(machine.apply(TaskJobMachine.ended([.init(task: 0, end: Self.end("1", on: "n1"))])).hasPrefix("error:"), "ends before the spec")
        #expect(machine.apply("not json").hasPrefix("error:"))
        _ = machine.apply(TaskJobMachine.start(Self.spec))
        #expect(machine.apply(TaskJobMachine.ended([.init(task: 3, end: Self.end("1", on: "n1"))])).hasPrefix("error:"), "a task out of range")
        #expect(machine.ends.isEmpty)
    }

    @Test func aSnapshotRestoresTheWholeJob() throws {
        var machine = TaskJobMachine()
        _ = machine.apply(TaskJobMachine.start(Self.spec))
        _ = machine.apply(TaskJobMachine.ended([.init(task: 2, end: Self.end("9", on: "n3"))]))
        var restored = TaskJobMachine()
        try restored.restore(machine.snapshot())
        #expect(restored == machine)
        #expect(throws: (any Error).self) { try restored.restore("{\"not\": 1}") }
    }

    /// Review (issue 29 §1.5): ends of large outputs went in one command, one entry too
    /// large for a frame. They are spread over commands of bounded size, each applying.
    @Test func largeOutputsAreRecordedInSeveralBoundedCommands() {
        let big = TaskJobReport.TaskEnd(JobRunner.Outcome(task: 0, output: "\"" + String(repeating: "y", count: 600_000) + "\"", node: "n1", attempts: 1, failures: []))
        let ends = (0..<3).map { JobMachine.Ended(task: $0, end: big) }
        let commands = JobGroupFormat.tasks.batch(0, [], ends)
        #expect(commands.count == 3)
        #expect(commands.allSatisfy { $0.utf8.count < 2 * JobEndBatches.maximumBytesPerCommand })
        var machine = TaskJobMachine()
        #expect(machine.apply(TaskJobMachine.start(Self.spec)) == "ok")
        for command in commands { #expect(machine.apply(command) == "ok") }
        #expect(machine.ends.count == 3)
        let small = (0..<3).map { JobMachine.Ended(task: $0, end: TaskJobReport.TaskEnd(JobRunner.Outcome(task: 0, output: "1", node: "n1", attempts: 1, failures: []))) }
        #expect(JobGroupFormat.tasks.batch(0, [], small).count == 1, "small ends share one command")
    }
}

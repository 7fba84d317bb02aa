import FoundationEssentials
import SpokesCluster
import SpokesReplication
import SpokesClusterTestKit
import Testing
@testable import SpokesJobs

/// A job as its group's state, whatever it runs (``JobMachine``): the spec once, epochs
/// that fence replaced coordinators, one stream of a workload's events and task ends
/// applied all or nothing, bad commands refused alike on every replica. Each test is a
/// transcript of commands replayed on fresh replicas.
@Suite struct JobMachineTests {
    static let spec = TaskJobSpec(id: "map-00000001", kind: "test.kind", schema: nil, title: "3 x test.kind", inputs: ["1", "2", "3"], deadline: 5, retries: 1)

    static var tokenSpec: TaskJobSpec {
        var spec = spec
        spec.id = "job-00000002"
        spec.workload = .init(name: "tokens", parameters: "[2,0]")
        return spec
    }

    static func end(_ output: String, on node: String) -> TaskJobReport.TaskEnd {
        TaskJobReport.TaskEnd(JobRunner.Outcome(task: 0, output: output, node: node, attempts: 1, failures: []))
    }

    static func move(_ from: Int, _ to: Int) -> String { "{\"from\":\(from),\"to\":\(to)}" }

    /// Applies `commands` in order to two fresh replicas; expects them to agree on every
    /// result and on the whole state; returns the results and one replica.
    func replay(_ commands: [String], workloads: JobWorkloads = TokenWorkload.workloads) -> ([String], JobMachine) {
        var first = JobMachine(workloads: workloads)
        var second = JobMachine(workloads: workloads)
        var results: [String] = []
        for command in commands {
            let result = first.apply(command)
            #expect(second.apply(command) == result, "every replica answers a command alike: \(command)")
            results.append(result)
        }
        #expect(first.snapshot() == second.snapshot(), "every replica reaches the same state")
        return (results, first)
    }

    func bins(of machine: JobMachine) -> [Int]? { (machine.workloadState as? TokenWorkload.State)?.bins }

    @Test func theFirstCommittedEndOfATaskWinsAndTheSpecIsKeptOnce() {
        var other = Self.spec
        other.title = "another"
        let (results, machine) = replay([
            JobMachine.start(Self.spec, startedAt: 1_000),
            JobMachine.start(other),
            JobMachine.batch(epoch: 0, events: nil, ends: [.init(task: 1, end: Self.end("4", on: "n1"))]),
            // The old leader's late end for the same task, committed after: ignored.
            JobMachine.batch(epoch: 0, events: nil, ends: [.init(task: 1, end: Self.end("4", on: "n2")), .init(task: 0, end: Self.end("1", on: "n2"))]),
            JobMachine.finish,
        ])
        #expect(results == Array(repeating: JobMachine.applied, count: 5))
        #expect(machine.spec == Self.spec && machine.startedAt == 1_000, "a repeated start changes nothing")
        #expect(machine.ends[1]?.node == "n1" && machine.ends[0]?.node == "n2" && machine.ends.count == 2)
        #expect(machine.finished && machine.workloadState == nil)
    }

    /// A coordinator replaced by a take-over (cut off, paused) may still get a batch into
    /// the log: it changes nothing, and its run stops on the error.
    @Test func aBatchOfAnEarlierEpochChangesNothing() {
        let (results, machine) = replay([
            JobMachine.start(Self.tokenSpec),
            JobMachine.batch(epoch: 0, events: "[\(Self.move(0, 1))]", ends: []),
            JobMachine.takeOver(epoch: 1),
            JobMachine.batch(epoch: 0, events: "[\(Self.move(0, 1))]", ends: [.init(task: 0, end: Self.end("1", on: "old"))]),
            JobMachine.takeOver(epoch: 1),
            JobMachine.batch(epoch: 1, events: "[\(Self.move(1, 0))]", ends: [.init(task: 0, end: Self.end("1", on: "new"))]),
        ])
        #expect(results[0] == JobMachine.applied && results[1] == JobMachine.applied && results[2] == JobMachine.applied)
        #expect(results[3].hasPrefix("error: a batch of epoch 0"), "the replaced coordinator's batch: \(results[3])")
        #expect(results[4].hasPrefix("error: epoch 1 is not above"), "a second take-over into the same epoch: \(results[4])")
        #expect(results[5] == JobMachine.applied)
        #expect(machine.epoch == 1 && bins(of: machine) == [2, 0] && machine.ends[0]?.node == "new")
    }

    /// The stream is all or nothing: a batch whose events the workload refuses records
    /// none of its events and none of its ends, so no replica holds an end without the
    /// events before it.
    @Test func aRefusedBatchRecordsNeitherItsEventsNorItsEnds() {
        let (results, machine) = replay([
            JobMachine.start(Self.tokenSpec),
            JobMachine.batch(epoch: 0, events: "[\(Self.move(0, 1)),\(Self.move(0, 1)),\(Self.move(0, 1))]", ends: [.init(task: 2, end: Self.end("3", on: "n1"))]),
            JobMachine.batch(epoch: 0, events: "[\(Self.move(0, 1)),\(Self.move(1, 0))]", ends: [.init(task: 2, end: Self.end("3", on: "n1"))]),
        ])
        #expect(results[1].hasPrefix("error: the workload refused the batch (no token in bin 0)"), "\(results[1])")
        #expect(results[2] == JobMachine.applied)
        #expect(bins(of: machine) == [2, 0] && machine.refusedBatches == 1, "tokens conserved")
        #expect(machine.ends.count == 1 && machine.ends[2]?.output == "3")
    }

    @Test func badCommandsChangeNothingAndAreRefusedAlike() {
        var outOfRange = Self.spec
        outOfRange.id = "a/b"
        var unknown = Self.spec
        unknown.workload = .init(name: "weather", parameters: "{}")
        var badParameters = Self.tokenSpec
        badParameters.workload?.parameters = "not json"
        let (results, machine) = replay([
            JobMachine.batch(epoch: 0, events: nil, ends: [.init(task: 0, end: Self.end("1", on: "n1"))]),
            JobMachine.takeOver(epoch: 1),
            JobMachine.start(outOfRange),
            JobMachine.start(unknown),
            JobMachine.start(badParameters),
            "not json",
            "[1, 2]",
            "{\"takeOver\": \"one\"}",
            JobMachine.start(Self.spec),
            JobMachine.batch(epoch: 0, events: "[\(Self.move(0, 1))]", ends: []),
            JobMachine.batch(epoch: 0, events: nil, ends: [.init(task: 3, end: Self.end("1", on: "n1"))]),
        ])
        let want = [
            "error: a batch before the job", "error: a take-over before the job", "error: a spec out of range",
            "error: workload weather is not known here", "error: workload parameters out of range", "error: not a job command",
            "error: not a job command", "error: a member of the command is not of its type", JobMachine.applied,
            "error: events for a job that carries no workload", "error: a task out of range",
        ]
        #expect(results == want)
        #expect(machine.spec == Self.spec && machine.ends.isEmpty && machine.epoch == 0)
    }

    /// A batch's epoch and a take-over's are read by hand when written as the machine
    /// writes them; any other spelling answers as `JSONDecoder` reads it.
    @Test func anEpochSpelledOtherwiseIsReadAsJSONDecoderReadsIt() {
        /// What a fresh job answers to `command`, after its start.
        func answer(_ command: String) -> String? { replay([JobMachine.start(Self.spec), command]).0.last }
        for spelling in ["0", "1", "-0", "01", "1.0", "1e0", "1.5", "\"1\"", "9223372036854775808", "-9223372036854775809", "true"] {
            // The value `JSONDecoder` reads, as the machine writes it; nil when it reads none.
            let read = try? JSONDecoder().decode(Int.self, from: Data(spelling.utf8))
            let notOfItsType = "error: a member of the command is not of its type"
            #expect(answer("{\"takeOver\":\(spelling)}") == (read.map { answer(JobMachine.takeOver(epoch: $0)) } ?? notOfItsType), "\(spelling)")
            #expect(answer("{\"epoch\":\(spelling),\"ends\":[]}") == (read.map { answer("{\"epoch\":\($0),\"ends\":[]}") } ?? notOfItsType), "\(spelling)")
        }
        #expect(answer("{\"epoch\":0,\"ends\":[]}") == JobMachine.applied && answer("{\"epoch\":1,\"ends\":[]}") != JobMachine.applied)
    }

    @Test func aSnapshotKeepsTheEpochTheEndsAndTheWorkloadsState() throws {
        let (_, machine) = replay([
            JobMachine.start(Self.tokenSpec, startedAt: 5),
            JobMachine.takeOver(epoch: 2),
            JobMachine.batch(epoch: 2, events: "[\(Self.move(0, 1))]", ends: [.init(task: 1, end: Self.end("2", on: "n3"))]),
            JobMachine.cancel("cancelled with 'spokes cancel'"),
            JobMachine.cancel("cancelled by the submitter"),
        ])
        var restored = JobMachine(workloads: TokenWorkload.workloads)
        try restored.restore(machine.snapshot())
        #expect(restored.snapshot() == machine.snapshot())
        #expect(restored.epoch == 2 && bins(of: restored) == [1, 1] && restored.ends[1]?.node == "n3" && restored.startedAt == 5)
        #expect(restored.cancelReason == "cancelled with 'spokes cancel'", "the first reason stays")
        // A replica goes on from the restored state as from the original.
        #expect(restored.apply(JobMachine.batch(epoch: 2, events: "[\(Self.move(1, 0))]", ends: [])) == JobMachine.applied)
        #expect(bins(of: restored) == [2, 0])

        var stranger = JobMachine()
        #expect(throws: JobMachine.UnknownWorkload.self) { try stranger.restore(machine.snapshot()) }
        #expect(stranger.spec == nil, "a snapshot it cannot read leaves the state alone")
    }
}

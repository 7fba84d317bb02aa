import Foundation
import SpokesConcurrency
import Synchronization
import Testing
@testable import SpokesCluster

/// `test.flaky`: throws on the node it names, returns the running node's name elsewhere.
struct FlakyKind: TaskKind {
    static let name = "test.flaky"
    enum Failure: Error, CustomStringConvertible {
        case refused(node: String)
        var description: String {
            switch self {
            case .refused(let node): "refused on \(node)"
            }
        }
    }
    func run(_ failingNode: String, context: TaskContext) async throws -> String {
        let node = context.system.node.name
        if node == failingNode { throw Failure.refused(node: node) }
        return node
    }
}

/// A count any task may add to.
final class Tally: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// `test.hang`: on the node it names, waits until cancelled (counting the cancellations
/// that reached it); elsewhere returns the running node's name.
struct HangingKind: TaskKind {
    static let name = "test.hang"
    let cancellations: Tally
    func run(_ hangingNode: String, context: TaskContext) async throws -> String {
        let node = context.system.node.name
        if node == hangingNode {
            try await withTaskCancellationHandler {
                // Bounded, so a cancellation that never comes fails the test, not hangs it.
                try await Task.sleep(for: .seconds(30))
            } onCancel: {
                cancellations.add()
            }
        }
        return node
    }
}

/// What a kind that throws or hangs costs: a retry elsewhere, never the job.
extension SchedulingTests {
    @Test func aKindThatThrowsCostsARetryElsewhereAndItsErrorReadsWell() async throws {
        let nodes = try await startCluster(2, kinds: [FlakyKind()])
        defer { nodes.forEach { $0.stop() } }
        // Coordinated by w1: the failing node w0 is remote, so the error crosses the wire.
        let (systems, following) = try await coordinator(nodes[1], expecting: 2)
        defer { following.cancel() }
        let runner = JobRunner(systems: systems, job: "flaky", kind: FlakyKind.name, deadline: 10, retries: 1)
        let outcomes = await runner.run(count: 8, input: { _, _ in #""w0""# })
        #expect(outcomes.allSatisfy { $0.output == #""w1""# }, "every task succeeded on w1")
        let failures = outcomes.flatMap(\.failures)
        #expect(!failures.isEmpty, "w0 was given tasks (its slots are handed out too)")
        #expect(failures.allSatisfy { $0.node == "w0" })
        let reason = try #require(failures.first?.reason)
        #expect(reason.contains("Failure.refused: refused on w0"), "the submitter reads the type, case and message: \(reason)")
    }

    @Test func aKindThatHangsPastItsDeadlineIsCancelledThereAndRetriedElsewhere() async throws {
        let cancellations = Tally()
        let hanging = HangingKind(cancellations: cancellations)
        let nodes = try await startCluster(2, kinds: [hanging])
        defer { nodes.forEach { $0.stop() } }
        let (systems, following) = try await coordinator(nodes[0], expecting: 2)
        defer { following.cancel() }
        let runner = JobRunner(systems: systems, job: "hang", kind: HangingKind.name, deadline: 1.5, retries: 2)
        let outcomes = await runner.run(count: 6, input: { _, _ in #""w1""# })
        #expect(outcomes.allSatisfy { $0.output == #""w0""# }, "every task succeeded on w0")
        let failures = outcomes.flatMap(\.failures)
        #expect(!failures.isEmpty && failures.allSatisfy { $0.node == "w1" && $0.reason.contains("deadline") }, "\(failures)")
        // The coordinator tells w1's worker to stop each hung attempt: the cancellation
        // reaches the kind's function there.
        try await waitUntil("every hung attempt cancelled on w1") { cancellations.value == failures.count }
    }

    @Test func cancellingAJobReachesTheKindsFunctionOnAnotherNode() async throws {
        let cancellations = Tally()
        let nodes = try await startCluster(2, slots: 1, kinds: [HangingKind(cancellations: cancellations)])
        defer { nodes.forEach { $0.stop() } }
        let (systems, following) = try await coordinator(nodes[0], expecting: 2)
        defer { following.cancel() }
        let runner = JobRunner(systems: systems, job: "cancelled", kind: HangingKind.name, deadline: 60, retries: 0)
        let counters = nodes[1].counters
        // Both nodes hang: one task each.
        let job = Task { await runner.run(count: 2, input: { task, _ in task == 0 ? #""w0""# : #""w1""# }) }
        try await waitUntil("a task running on w1") { counters.running == 1 }
        job.cancel()
        let outcomes = await job.value
        #expect(outcomes.allSatisfy { $0.output == nil })
        try await waitUntil("both hung attempts cancelled") { cancellations.value == 2 }
    }
}

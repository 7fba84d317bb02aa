import Foundation
import SpokesConcurrency
import Synchronization
import SpokesClusterTestKit
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
                // Bounded, so a cancellation that never comes fails the test, not hangs it;
                // on the node's clock (virtual under a simulated runtime).
                try await context.system.runtime.sleep(for: 30)
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
        let cluster = try startCluster(2, kinds: [FlakyKind()])
        defer { cluster.stop() }
        // Coordinated by w1: the failing node w0 is remote, so the error crosses the wire.
        let (systems, following) = try await coordinator(cluster[1], expecting: 2, in: cluster)
        defer { following.cancel() }
        let runner = JobRunner(systems: systems, job: "flaky", kind: FlakyKind.name, deadline: Self.noDeadline, retries: 1)
        let outcomes = try await run(runner, count: 8, in: cluster, input: { _, _ in #""w0""# })
        #expect(outcomes.allSatisfy { $0.output == #""w1""# }, "every task succeeded on w1")
        let failures = outcomes.flatMap(\.failures)
        #expect(!failures.isEmpty, "w0 was given tasks (its slots are handed out too)")
        #expect(failures.allSatisfy { $0.node == "w0" })
        let reason = try #require(failures.first?.reason)
        #expect(reason.contains("Failure.refused: refused on w0"), "the submitter reads the type, case and message: \(reason)")
    }

    @Test func cancellingAJobReachesTheKindsFunctionOnAnotherNode() async throws {
        let cancellations = Tally()
        let cluster = try startCluster(2, slots: 1, kinds: [HangingKind(cancellations: cancellations)])
        defer { cluster.stop() }
        let (systems, following) = try await coordinator(cluster[0], expecting: 2, in: cluster)
        defer { following.cancel() }
        let runner = JobRunner(systems: systems, job: "cancelled", kind: HangingKind.name, deadline: Self.noDeadline, retries: 0)
        let counters = cluster[1].counters
        // Both nodes hang: one task each.
        let job = Task { await runner.run(count: 2, input: { task, _ in task == 0 ? #""w0""# : #""w1""# }) }
        try await cluster.run(until: "a task running on w1", within: 5) { counters.running == 1 }
        let cancelled = cluster.clock.now
        job.cancel()
        let outcomes = try await cluster.complete("the cancelled job ends", within: 5) { await job.value }
        #expect(outcomes.allSatisfy { $0.output == nil })
        try await cluster.run(until: "both hung attempts cancelled", within: 5) { cancellations.value == 2 }
        #expect(cluster.clock.now - cancelled < 30, "cancelled, not run to their end: \(cluster.clock.now - cancelled) virtual s")
    }
}

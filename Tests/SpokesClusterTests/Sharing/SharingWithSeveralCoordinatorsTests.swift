import SpokesJobs
import SpokesClusterTestKit
import SpokesTestKit
import Synchronization
import Testing
@testable import SpokesCluster

/// Several coordinators submitting at once (issue 32 §3), with real nodes on a simulated
/// network in virtual time: 3 nodes of 2 cpu slots, each coordinating jobs of its own
/// people, every task's start and end recorded on the cluster's clock by the task itself.
///
/// **The bound.** Each worker shares its own slots (``WorkerAdmission``, Docs/sharing.md):
/// a job whose attempts wait at worker `W` has a local share `s` of `W`'s slots
/// (``FairShare`` over the jobs running or waiting there). A share of `s` slots of tasks
/// of length `L` is one task started every `L / s` (for `s >= 1`, a task running at every
/// moment); one task's length past that, for a task running there to end, gives:
///
///     no job with tasks still to start is without a running task, anywhere in the
///     cluster, for longer than L * max(1, 1 / s) + δ
///
/// where `s` is its smallest share at a worker it waits at (here every job waits at every
/// worker, so every worker gives it the same share) and `δ` = 50 ms covers the messages
/// between a slot freeing and the next task starting (the simulated network delivers in
/// well under a millisecond; the coordinator keeps an attempt queued at each worker). The
/// check runs over the whole test: before a coordinator dies, while the others have not
/// yet noticed, and after.
@Suite(.simulated) struct SharingWithSeveralCoordinatorsTests {
    /// A task's length: 0.2 s of virtual time.
    private static let taskLength = 0.2
    /// Slack for the messages between a slot freeing and the next task starting.
    private static let delivery = 0.05

    @Test func noJobIsStarvedPastItsShareAndACoordinatorsDeathLeavesTheOthersTheirShares() async throws {
        let log = TaskLog()
        let kind = StampedTask(log: log)
        let cluster = try SimulatedCluster(3, prefix: "s", configure: { $1.slots = 2 }, registry: { _ in TaskRegistry(kinds: [kind]) })
        defer { cluster.stop() }
        try await cluster.awaitMesh()
        // Each job is submitted by a client of its own to the node that coordinates it:
        // s0 coordinates ada's first job and bob's, s1 ada's second, s2 cy's.
        let plan: [(job: String, owner: String, coordinator: Int)] = [("ada-1", "ada", 0), ("bob", "bob", 0), ("ada-2", "ada", 1), ("cy", "cy", 2)]
        var clients: [ClusterClient] = []
        for entry in plan {
            clients.append(try await cluster.clusterClient(to: cluster[entry.coordinator], registry: TaskRegistry(kinds: [kind])) {
                $0.taskDeadline = SchedulingTests.noDeadline
            })
        }
        // Far more tasks than the test runs (6 slots x 5 tasks a second): every job keeps
        // work waiting throughout.
        let jobs = zip(plan, clients).map { entry, client in
            let inputs = (0..<200).map { _ in StampedTask.Input(job: entry.job, milliseconds: Int(Self.taskLength * 1000)) }
            return Task { _ = try? await client.map(StampedTask.self, over: inputs, share: JobShare(owner: entry.owner)) }
        }
        defer { jobs.forEach { $0.cancel() } }
        // From the first task's start on, every job has work waiting.
        try await cluster.run(until: "a task has started", within: 10) { !log.jobs.isEmpty }
        let firstStart = cluster.clock.now

        // Four jobs of three owners, each waiting at every worker: 2/3 of a worker's 2
        // slots per owner, ada's two jobs 1/3 each.
        let localShares = FairShare.shares(of: 2, among: plan.map { FairShare.Claim(job: $0.job, owner: $0.owner, weight: JobShare.defaultPriority, demand: 3) })
        try await cluster.run(for: 3)
        let beforeDeath = (from: firstStart + 1, to: cluster.clock.now)

        // s2's machine goes silent, as in a power cut (no goodbye, no connection closed),
        // with cy's coordinator and the attempts other jobs had placed on its worker. The
        // others notice by their heartbeats, `dead_after` later.
        let death = cluster.clock.now
        cluster.isolate(SimulatedCluster.host(2))
        try await cluster.run(until: "s0 and s1 see s2 dead", within: 5) {
            cluster.nodes.prefix(2).allSatisfy { node in node.members.first { $0.node.name == "s2" }?.state == .dead }
        }
        let noticed = cluster.clock.now
        try await cluster.run(for: 2.5)
        let end = cluster.clock.now
        // Cut off, s2 runs on (cy's coordinator keeps its own worker busy), but what it
        // runs after the cut serves nobody: its spans end at the cut.
        let spans = log.spans(endingRunningAt: end).compactMap { span -> TaskLog.Span? in
            guard span.node == "s2" else { return span }
            var cut = span
            cut.end = min(span.end, death)
            return cut.end > cut.start ? cut : nil
        }

        // 1. No job with work waiting goes without a running task past its bound: cy's
        // until its coordinator died, the others' to the end.
        for entry in plan {
            let share = localShares[entry.job] ?? 0
            let bound = Self.taskLength * max(1, 1 / share) + Self.delivery
            let until = entry.job == "cy" ? death : end
            let gap = Self.longestGap(in: spans.filter { $0.job == entry.job }, from: firstStart, to: until)
            #expect(gap.seconds <= bound,
                    "\(entry.job) (share \(share) of each worker's 2 slots) ran nothing for \(gap.seconds) s from \(gap.from) (bound \(bound) s)")
        }
        // 2. Before the death, every job ran about its share of the 6 slots (the sum of
        // its shares at the 3 workers).
        let before = Self.taskSeconds(spans, in: beforeDeath)
        let beforeTotal = before.values.reduce(0, +)
        #expect(beforeTotal >= 0.9 * 6 * (beforeDeath.to - beforeDeath.from), "6 slots busy before the death: \(before)")
        for entry in plan {
            let expected = (localShares[entry.job] ?? 0) / 2
            #expect(abs((before[entry.job] ?? 0) / beforeTotal - expected) <= 0.08,
                    "\(entry.job)'s part of the task-seconds before the death: \((before[entry.job] ?? 0) / beforeTotal), its share \(expected) (\(before))")
        }
        // 3. Once s2 is known dead, the survivors share the 4 slots left as if cy had never
        // come, and no slot stays held for the dead coordinator's job.
        let afterDeath = (from: noticed + 0.5, to: end)
        let after = Self.taskSeconds(spans, in: afterDeath)
        let afterTotal = after.values.reduce(0, +)
        #expect(afterTotal >= 0.9 * 4 * (afterDeath.to - afterDeath.from), "4 slots busy after the death: \(after)")
        #expect(after["cy"] == nil, "cy's coordinator is dead; its job ran on: \(after)")
        let survivors = FairShare.shares(of: 4, among: plan.filter { $0.job != "cy" }.map {
            FairShare.Claim(job: $0.job, owner: $0.owner, weight: JobShare.defaultPriority, demand: 6)
        })
        for entry in plan where entry.job != "cy" {
            let expected = (survivors[entry.job] ?? 0) / 4
            #expect(abs((after[entry.job] ?? 0) / afterTotal - expected) <= 0.08,
                    "\(entry.job)'s part of the task-seconds after the death: \((after[entry.job] ?? 0) / afterTotal), its share \(expected) (\(after))")
        }
        for job in jobs { job.cancel() }
        for job in jobs { try await cluster.complete("a job ends cancelled", within: 30) { await job.value } }
    }

    /// The longest stretch of [from, to] that no span covers, and where it began.
    static func longestGap(in spans: [TaskLog.Span], from: Double, to: Double) -> (seconds: Double, from: Double) {
        var longest = (seconds: 0.0, from: from)
        var covered = from
        for span in spans.sorted(by: { $0.start < $1.start }) where span.end > covered {
            if span.start > covered, min(span.start, to) - covered > longest.seconds {
                longest = (min(span.start, to) - covered, covered)
            }
            covered = max(covered, span.end)
            if covered >= to { return longest }
        }
        return to - covered > longest.seconds ? (to - covered, covered) : longest
    }

    /// Each job's task-seconds within `window`.
    static func taskSeconds(_ spans: [TaskLog.Span], in window: (from: Double, to: Double)) -> [String: Double] {
        var seconds: [String: Double] = [:]
        for span in spans {
            let overlap = min(span.end, window.to) - max(span.start, window.from)
            if overlap > 0 { seconds[span.job, default: 0] += overlap }
        }
        return seconds
    }
}

/// A cpu task that sleeps `milliseconds` on its node's clock and records when it ran, by
/// the job named in its input (the test's name, not the cluster's job id).
struct StampedTask: TaskKind {
    static let name = "test.stamped"
    struct Input: Codable, Sendable { var job: String; var milliseconds: Int }
    struct Output: Codable, Sendable { var node: String }
    let log: TaskLog

    func run(_ input: Input, context: TaskContext) async throws -> Output {
        let runtime = context.system.runtime
        let span = log.started(job: input.job, node: context.system.node.name, at: runtime.now)
        // A cancelled task (its coordinator gave up on it) ended when it was cancelled.
        defer { log.ended(span, at: runtime.now) }
        try await runtime.sleep(for: Double(input.milliseconds) / 1000)
        return Output(node: context.system.node.name)
    }
}

/// Every task a ``StampedTask`` ran: job, node, start and end on the cluster's clock.
final class TaskLog: Sendable {
    struct Span: Sendable {
        var job: String
        var node: String
        var start: Double
        /// Infinity while it runs.
        var end: Double
    }

    private let state = Mutex<[Span]>([])

    /// The jobs that have started a task.
    var jobs: Set<String> { state.withLock { Set($0.map(\.job)) } }

    /// Records a start; returns the span's index for ``ended(_:at:)``.
    func started(job: String, node: String, at time: Double) -> Int {
        state.withLock { spans in
            spans.append(Span(job: job, node: node, start: time, end: .infinity))
            return spans.count - 1
        }
    }

    func ended(_ index: Int, at time: Double) { state.withLock { $0[index].end = time } }

    /// Every span, those still running ending at `now`.
    func spans(endingRunningAt now: Double) -> [Span] {
        state.withLock { $0.map { span in
            var span = span
            span.end = min(span.end, now)
            return span
        } }
    }
}

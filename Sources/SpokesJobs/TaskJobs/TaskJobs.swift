import Distributed
import FoundationEssentials
import SpokesCluster
import SpokesConcurrency
import Synchronization

/// Every node's desk for jobs of tasks of one kind (well-known name `task-jobs`): a
/// client submits a ``TaskJobSpec`` here, this node coordinates it (places each task on
/// a member that runs the kind, retries failures elsewhere) and stores its
/// ``TaskJobReport`` in its ``TaskJobHistory``.
///
/// The job belongs to the node, not to the call: when the submitter goes away the job
/// runs on and is stored (`spokes result` prints it, `spokes cancel` stops it), as a bike
/// job does. The submitter's ``TaskJobListener`` hears each task's end, in batches and in
/// the order they ended, and every batch before the report.
public distributed actor TaskJobs {
    public typealias ActorSystem = ClusterSystem

    public static let wellKnownName = "task-jobs"

    /// A job coordinated here now, as `spokes jobs` lists it.
    public struct Running: Sendable, Hashable, Codable {
        public var job: String
        public var kind: String
        public var title: String
        public var tasks: Int
        public var succeeded: Int
        public var failed: Int
        public var cancelled: Int
        public var retries: Int
        /// Real seconds since it started.
        public var wallTime: Double
        /// Why it cannot go on now, when too few of its replicas can take part.
        public var stalled: String?
        /// Its owner, priority, budget and places in use (nil while held for a dead coordinator).
        public var slots: JobSlots?
    }

    private struct Entry {
        var spec: TaskJobSpec
        /// Who cancelled it, for its workload's run to read.
        var told: CancelReasonCell
        var work: Task<TaskJobReport, any Error>
        var startedAt: Double
        /// The share its runner carries and the budget its tasks take.
        var share: JobShare
        var cost: TaskCost
    }

    /// Weak: the node holds its desk.
    private weak var node: ClusterNode?
    private var history: any TaskJobHistory
    /// Where running jobs are kept so they outlive this node (nil: in memory only, as in tests).
    private let durability: (any TaskJobDurability)?
    /// Jobs whose run stopped because another node took them over: they store nothing.
    private var lost: Set<String> = []
    /// Jobs being started (placed and made durable) but not yet running.
    private var starting: Set<String> = []
    private var running: [String: Entry] = [:]
    /// Finished jobs whose report the disk refused, tried again until stored.
    private var storeRetries: [String: Task<Void, Never>] = [:]
    /// Who cancelled a running job (the first request wins), read as it ends.
    private var cancelReasons: [String: String] = [:]
    /// The workloads whose jobs this desk runs beside plain jobs of tasks.
    private var workloads: JobWorkloads

    /// A desk storing reports in `history` and keeping running jobs in `durability` (on
    /// disk, or on other nodes too) so they outlive this node.
    /// `workloads` are those whose jobs it runs (a spec naming another is refused).
    public init(
        actorSystem: ClusterSystem, node: ClusterNode, history: any TaskJobHistory, durability: (any TaskJobDurability)? = nil,
        workloads: JobWorkloads = JobWorkloads()
    ) {
        self.actorSystem = actorSystem
        self.node = node
        self.history = history
        self.durability = durability
        self.workloads = workloads
    }

    /// Runs `spec` with this node as coordinator and returns its report once stored (or
    /// once storing failed: the report says so). `listener` hears that the job started,
    /// then every task's end. Throws before anything runs when the spec is out of range,
    /// a job with its id runs here, or no alive node runs its kind (``NoNodeRunsKind``).
    /// With a journal, the job is on this node's disk before the listener hears it
    /// started: if the node dies, it runs on when the node starts again.
    public distributed func submit(_ spec: TaskJobSpec, listener: TaskJobListener?) async throws -> TaskJobReport {
        try spec.checkRanges()
        guard !isRunning(spec.id) else { throw TaskJobError.duplicateJob(spec.id) }
        // The job is the node's: a submitter that goes away does not stop it.
        let report = try await launch(spec, ended: [:], isNew: true, listener: listener).value
        if let error = report.storeError { actorSystem.log("cannot store job \(spec.id): \(error)") }
        return report
    }

    /// Runs a job this node takes over (it restarted with the job in its journal, or it
    /// now leads the job's replicas): only the tasks not `ended`, each result once; a
    /// workload's job from `state`, the committed one, as the coordinator of `epoch`.
    /// Throws when it cannot start (no alive node runs the kind yet: try again later).
    public func resume(
        _ spec: TaskJobSpec, ended: [Int: TaskJobReport.TaskEnd], cancelReason: String? = nil, epoch: Int = 0,
        state: (any JobWorkloadState)? = nil
    ) async throws {
        guard !isRunning(spec.id) else { return }
        // Its report is stored here already (it ended just before this node lost the lead
        // and won it back): finish it rather than run it again.
        if (try? await report(of: spec.id)) != nil {
            await durability?.jobFinished(spec.id)
            return
        }
        if let cancelReason { cancelReasons[spec.id] = cancelReason }
        let work = try await launch(spec, ended: ended, isNew: false, listener: nil, epoch: epoch, state: state)
        // A cancelled job runs none of its tasks: it ends at once with its report.
        if cancelReason != nil { work.cancel() }
        actorSystem.log("took over job \(spec.id): \(ended.count) of \(spec.inputs.count) tasks had ended\(cancelReason.map { "; it was \($0)" } ?? "")")
    }

    /// Whether this desk runs jobs of the workload named `name`.
    public func runs(workload name: String) -> Bool { workloads[name] != nil }

    /// Runs jobs of `workload` under `name` from now on, storing every report in
    /// `history`, unless a workload of that name is registered already (the node's, whose
    /// groups its host can open): wires a desk hosted without them (a test's node) as
    /// `spokes node` wires its own.
    public func addIfAbsent(workload name: String, _ workload: JobWorkloads.Workload, storingIn history: any TaskJobHistory) {
        guard workloads[name] == nil else { return }
        workloads.register(name, workload)
        self.history = history
    }

    /// Whether this node holds `job`'s kept state (a replica of its group).
    public func holdsReplica(of job: String) async -> Bool {
        await durability?.holdsReplica(of: job) ?? false
    }

    /// Whether this node runs `job` now (or still tries to store its report).
    public func isRunning(_ job: String) -> Bool { running[job] != nil || starting.contains(job) || storeRetries[job] != nil }

    /// Tries to store `report`, which the disk refused, until it is stored
    /// (``ReportStoreRetry``), then finishes its job where it is kept.
    private func retryStoring(_ report: TaskJobReport, durability: any TaskJobDurability) {
        let history = history
        let system = actorSystem
        storeRetries[report.job]?.cancel()
        storeRetries[report.job] = Task {
            let stored = await ReportStoreRetry.keepTrying(job: report.job, clock: system.runtime.clock, log: { system.log($0) }) {
                try await runBlocking("spokes.job-store") { try history.append(report) }
            }
            if stored { await durability.jobFinished(report.job) }
            if !Task.isCancelled { self.storeRetries[report.job] = nil }
        }
    }

    /// Stops running `job` without storing anything: another node owns it now (its
    /// replicas say it finished, or took it over).
    public func abandon(_ job: String) {
        lose(job)
    }

    /// Stops running `job` without storing anything: another node owns it now.
    private func lose(_ job: String) {
        storeRetries.removeValue(forKey: job)?.cancel()
        guard let entry = running[job], lost.insert(job).inserted else { return }
        actorSystem.log("job \(job) is another node's now: stopped running it here")
        entry.work.cancel()
    }

    /// Starts `spec` here: places its tasks (all but those `ended` before a restart),
    /// relays their ends to `listener` and to the journal, and stores the report. A
    /// workload's job runs from `state` (nil: its start) as the coordinator of `epoch`.
    private func launch(
        _ spec: TaskJobSpec, ended: [Int: TaskJobReport.TaskEnd], isNew: Bool, listener: TaskJobListener?, epoch: Int = 0,
        state: (any JobWorkloadState)? = nil
    ) async throws -> Task<TaskJobReport, any Error> {
        var stamped = spec
        if isNew { stamped.startedAt = actorSystem.runtime.unixNow }
        let spec = stamped
        guard let node else { throw RemoteCallError.actorNotFound("\(Self.wellKnownName): the node stopped") }
        guard starting.insert(spec.id).inserted else { throw TaskJobError.duplicateJob(spec.id) }
        defer { starting.remove(spec.id) }
        // A workload's run, from its state: refused here, before anything runs or is kept,
        // when the workload is not known or its parameters are out of range.
        let told = CancelReasonCell(cancelReasons[spec.id])
        let run: (any JobWorkloadRun)? = try spec.workload.map { parameters in
            guard let workload = workloads[parameters.name] else { throw TaskJobError.unknownWorkload(parameters.name) }
            let state = try state ?? workload.start(parameters.parameters)
            return try workload.run(JobWorkloadContext(spec: spec, state: state, epoch: epoch, node: node, cancelReason: { told.text }))
        }
        let (systems, following, placement) = try await placedSystems(on: node, kind: spec.kind, schema: spec.schema, waiting: 2)
        let durability = durability
        if let durability, isNew {
            do {
                try await durability.jobStarted(spec)
            } catch {
                following.cancel()
                throw error
            }
        }
        let coordinator = actorSystem.node.name
        let history = history
        let registry = node.registry
        let first = spec.inputs.first ?? ""
        // A kind's cost may depend on its input; a job's tasks usually share what decides it.
        let cost = run?.cost ?? registry.cost(kind: spec.kind, input: first) ?? .cpu
        var runner = JobRunner(systems: systems, job: spec.id, kind: spec.kind, deadline: spec.deadline, retries: spec.retries, cost: cost)
        runner.share = (spec.share ?? .unnamed).capped(atPriority: actorSystem.settings.maximumPriority)
        let board = node.jobBoard.track(job: spec.id, kind: spec.kind, title: spec.title, total: spec.inputs.count, share: runner.share, cost: cost)
        let startedAt = actorSystem.runtime.now
        let work = Task { () throws -> TaskJobReport in
            defer { following.cancel() }
            let relay = TaskJobRelay(listener: listener, clock: actorSystem.runtime.clock)
            // Where ends are kept, the listener hears an end only once it is kept (committed
            // on a majority, or in the journal): what a client prints is what the report
            // will hold, whichever node ends the job (review, issue 29 §1.3).
            let writer = durability.map { durability in
                DurableEnds(durability: durability, job: spec.id, run: run, epoch: epoch, kept: { kept in kept.forEach(relay.send) }) {
                    await self.lose(spec.id)
                }
            }
            // A workload's events go to the job's group as they are made, with the ends.
            let ringing = run.map { run in Task { for await _ in run.newEvents { writer?.eventsMade() } } }
            defer { ringing?.cancel() }
            await relay.accepted(job: spec.id, coordinator: coordinator, nodes: placement.nodes.sorted())
            let inputs = spec.inputs
            // After a restart only the tasks that had not ended run; `remaining[i]` is the
            // job's task the runner's task `i` stands for.
            let remaining = inputs.indices.filter { ended[$0] == nil }
            let outcomes = await runner.run(
                count: remaining.count,
                input: { task, attempt in try run?.input(task: remaining[task], attempt: attempt) ?? inputs[remaining[task]] },
                accept: { task, attempt, output in run?.accept(task: remaining[task], attempt: attempt, output: output) ?? true },
                onEvent: { board.record($0) },
                onOutcome: { outcome in
                    var outcome = outcome
                    outcome.task = remaining[outcome.task]
                    if let run, let output = outcome.output { outcome.output = run.keptOutput(task: outcome.task, output: output) }
                    // A cancelled attempt's end is no result: the report brings the task's
                    // end (and after a take-over, the end the new leader committed).
                    guard !outcome.cancelled else {
                        run?.ended(task: outcome.task, outcome: outcome)
                        return
                    }
                    // The run hears the end in the same step as it is kept: its record of
                    // the end and the end itself are kept together.
                    let hear: () -> Void = { run?.ended(task: outcome.task, outcome: outcome) }
                    if let writer { writer.record(outcome, ended: hear) } else { hear(); relay.send(outcome) }
                })
            if let run {
                // The tasks cancelled before they started were not heard in `onOutcome`.
                for outcome in outcomes where outcome.attempts == 0 {
                    run.ended(task: remaining[outcome.task], outcome: outcome)
                }
                // A cancelled attempt on another node may still be trying: the state stops
                // changing first, and what it made last goes with the final batch.
                run.close()
                writer?.eventsMade()
            }
            await writer?.flush()
            await relay.flush()
            var ends = ended
            for var outcome in outcomes {
                let task = remaining[outcome.task]
                if let run, let output = outcome.output { outcome.output = run.keptOutput(task: task, output: output) }
                ends[task] = TaskJobReport.TaskEnd(outcome)
            }
            // Where the ends are replicated, the committed ones are the record (a task two
            // nodes ran counts with the end committed first).
            if let kept = await durability?.keptEnds(of: spec.id) { ends.merge(kept) { _, committed in committed } }
            if self.lost.remove(spec.id) != nil {
                board.handOver()
                self.running[spec.id] = nil
                throw TaskJobError.takenOver(spec.id)
            }
            let reason = self.cancelReasons.removeValue(forKey: spec.id)
            let cancelReason = reason ?? (outcomes.contains(where: \.cancelled) ? "cancelled" : nil)
            board.end(cancelled: cancelReason != nil)
            var report = TaskJobReport(
                job: spec.id, kind: spec.kind, schema: placement.schema, title: spec.title, coordinator: coordinator,
                inputs: inputs, tasks: inputs.indices.map { ends[$0]! }, wallTime: Self.wallTime(of: spec, runningSince: startedAt, now: actorSystem.runtime.now, unixNow: actorSystem.runtime.unixNow),
                cancelReason: cancelReason)
            report.workloadReport = run?.report(ends: ends, cancelReason: cancelReason)
            let finished = report
            do {
                try await runBlocking("spokes.job-store") { try history.append(finished) }
                report.stored = true
                await durability?.jobFinished(spec.id)
            } catch {
                report.stored = false
                report.storeError = "\(error)"
                // Kept, it is stored once there is room (and only then finished in its
                // replicas); until then it counts as running here, so nothing runs it again.
                if let durability { self.retryStoring(finished, durability: durability) }
            }
            self.running[spec.id] = nil
            return report
        }
        running[spec.id] = Entry(spec: spec, told: told, work: work, startedAt: startedAt, share: runner.share ?? .unnamed, cost: cost)
        return work
    }

    /// A job's wall time: from its first coordinator's start where the spec says when
    /// that was (a take-over counts the whole job), else from `runningSince` here.
    static func wallTime(of spec: TaskJobSpec, runningSince: Double, now: Double, unixNow: Double) -> Double {
        if let first = spec.startedAt { return max(0, unixNow - first) }
        return max(0, now - runningSince)
    }

    /// Stops `job` if this node coordinates it: attempts on workers are cancelled, the
    /// tasks not started never run, and its report (saying `reason`) is stored. Waits up
    /// to 10 s for its end; nil when no such job runs here. A coordinator that cannot
    /// keep the cancellation (it was deposed: its group's leader is another node now)
    /// stores nothing: it stops running the job, answers nil, and the cancellation goes
    /// to whoever leads the job (review, issue 29 §1.2: it stored "cancelled" while the
    /// new leader completed the job and stored "completed").
    public distributed func cancelHere(job: String, reason: String) async -> TaskJobReport? {
        guard running[job] != nil else { return nil }
        if cancelReasons[job] == nil { cancelReasons[job] = reason }
        guard await durability?.jobCancelled(job, reason: cancelReasons[job] ?? reason) ?? true else {
            cancelReasons[job] = nil
            lose(job)
            return nil
        }
        guard let entry = running[job] else { return nil }
        entry.told.set(cancelReasons[job] ?? reason)
        entry.work.cancel()
        let work = entry.work
        return try? await withTimeout(seconds: 10, clock: actorSystem.runtime.clock) { try await work.value }
    }

    /// The jobs of tasks this node coordinates now, oldest first, then those it keeps for
    /// a coordinator that died and that nobody has taken over yet (see
    /// ``TaskJobDurability/heldUnfinished()``).
    public distributed func runningJobs() async -> [Running] {
        let held = await durability?.heldUnfinished() ?? []
        let waiting = held.filter { !isRunning($0.spec.id) }.map { job in
            Running(
                job: job.spec.id, kind: job.spec.kind, title: job.spec.title, tasks: job.spec.inputs.count,
                succeeded: job.ends.values.count { $0.output != nil }, failed: job.ends.values.count { $0.output == nil && !$0.cancelled },
                cancelled: 0, retries: 0, wallTime: 0, stalled: job.stalled)
        }
        let board = node?.jobBoard
        let now = actorSystem.runtime.now
        return running.values.sorted { $0.startedAt < $1.startedAt }.map { entry in
            let record = board?.record(of: entry.spec.id)
            let ended = (record?.done ?? 0) + (record?.failed ?? 0) + (record?.cancelled ?? 0)
            let slots = JobSlots(
                share: entry.share, cost: entry.cost, inUse: record?.perNode.values.reduce(0) { $0 + $1.running } ?? 0,
                remaining: max(0, (record?.total ?? entry.spec.inputs.count) - ended))
            return Running(
                job: entry.spec.id, kind: entry.spec.kind, title: entry.spec.title, tasks: entry.spec.inputs.count,
                succeeded: record?.done ?? 0, failed: record?.failed ?? 0, cancelled: record?.cancelled ?? 0,
                retries: record?.retries ?? 0, wallTime: max(0, now - entry.startedAt), slots: slots)
        } + waiting
    }

    /// What this node knows of `job` now, for a client whose coordinator was lost.
    public enum Lookup: Sendable, Hashable, Codable {
        /// This node runs it, or holds it for a coordinator that died (a take-over is
        /// under way): wait.
        case running
        /// It ended here: its report.
        case finished(TaskJobReport)
        case unknown
        /// Held here, and it cannot go on now (see ``JobStalled``): why.
        case stalled(String)
    }

    /// What this node knows of `job`: stored here, running (or held) here, or nothing.
    public distributed func lookup(_ job: String) async throws -> Lookup {
        if let report = try await report(of: job) { return .finished(report) }
        if isRunning(job) { return .running }
        let held = await durability?.heldUnfinished() ?? []
        guard let kept = held.first(where: { $0.spec.id == job }) else {
            return await durability?.holdsReplica(of: job) == true ? .running : .unknown
        }
        return kept.stalled.map(Lookup.stalled) ?? .running
    }

    /// The stored report of `job`, or nil when this node did not store it.
    public distributed func report(of job: String) async throws -> TaskJobReport? {
        let history = history
        return try await runBlocking("spokes.job-store") { try history.taskJobReport(of: job) }
    }

    /// The workers that may run `kind` (see ``ClusterNode/makeSystems(for:schema:)``), once
    /// every node the placement chose is offered or `waiting` seconds have passed, so the
    /// first tasks do not all go to the first node offered.
    private func placedSystems(
        on node: ClusterNode, kind: String, schema: TaskSchema?, waiting seconds: Double
    ) async throws -> (Systems, Task<Void, Never>, KindPlacement) {
        let (systems, following, placement) = try await node.makeSystems(for: kind, schema: schema)
        let expected = placement.nodes.count
        _ = try? await withTimeout(seconds: seconds, clock: systems.clock) { try await systems.waitForSystems(atLeast: expected) }
        return (systems, following, placement)
    }

    /// What a batch of tasks of one kind came to (see ``runBatch(kind:input:count:deadline:retries:)``).
    public struct BatchReport: Sendable, Codable, Hashable {
        /// The batch's job id, as its task attempts carry it (see ``TaskTimeline``).
        public var job: String
        public var tasks: Int
        public var succeeded: Int
        /// Attempts started again after a failed one, over all tasks.
        public var retries: Int
        /// Real seconds from the first task scheduled to the last result.
        public var wallTime: Double
        /// When the first task was scheduled, in seconds of the runtime's clock.
        public var startedAt: Double
        public var tasksPerNode: [String: Int]
    }

    /// Runs `count` tasks of any registered kind, all with the same input, with this node
    /// as coordinator, and stores nothing: the path `spokes bench` measures scheduling on.
    public distributed func runBatch(kind: String, input: String, count: Int, deadline: Double, retries: Int) async throws -> BatchReport {
        guard (1...10_000_000).contains(count) else { throw TaskError.invalidInput(kind: kind, reason: "count \(count)") }
        try JobRunner.checkRanges(deadline: deadline, retries: retries)
        guard let node else { throw RemoteCallError.actorNotFound("\(Self.wellKnownName): the node stopped") }
        let (systems, following, _) = try await placedSystems(on: node, kind: kind, schema: nil, waiting: 5)
        defer { following.cancel() }
        let job = JobIdentifier.make("batch", runtime: node.system.runtime)
        let cost = node.registry.cost(kind: kind, input: input) ?? .cpu
        let runner = JobRunner(systems: systems, job: job, kind: kind, deadline: deadline, retries: retries, cost: cost)
        let board = node.jobBoard.track(job: job, kind: kind, title: "\(count) x \(kind)", total: count)
        defer { board.end(cancelled: Task.isCancelled) }
        let startedAt = actorSystem.runtime.now
        let outcomes = await runner.run(count: count, input: { _, _ in input }, onEvent: { board.record($0) })
        let wall = actorSystem.runtime.now - startedAt
        var perNode: [String: Int] = [:]
        for outcome in outcomes { if let node = outcome.node { perNode[node, default: 0] += 1 } }
        return BatchReport(
            job: job, tasks: count, succeeded: outcomes.count { $0.output != nil }, retries: JobRunner.retries(in: outcomes),
            wallTime: wall, startedAt: startedAt, tasksPerNode: perNode)
    }
}

/// Why ``TaskJobs`` refused a job.
public enum TaskJobError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    case duplicateJob(String)
    /// Another node took the job over (this one lost it): the report comes from there.
    case takenOver(String)
    /// The spec names a workload this node does not run.
    case unknownWorkload(String)

    public var description: String {
        switch self {
        case .duplicateJob(let id): "a job with id \(id) is already running here"
        case .takenOver(let id):
            "job \(id) stopped on this node: its replicas no longer take its progress from here (another node leads it now, "
                + "or most of them cannot be reached); 'spokes result \(id) --wait' finds its end"
        case .unknownWorkload(let name): "this node runs no jobs of workload '\(name)'"
        }
    }
}

/// A submitter's ear for a job of tasks: the coordinator calls it when the job starts and
/// with each batch of task ends.
public distributed actor TaskJobListener {
    public typealias ActorSystem = ClusterSystem

    private let tasks: Int
    private let onAccepted: @Sendable (_ job: String, _ coordinator: String, _ nodes: [String]) -> Void
    private let onOutcome: @Sendable (JobRunner.Outcome) -> Void

    /// A listener for a job of `tasks` tasks: outcomes for other task numbers are refused.
    public init(
        actorSystem: ClusterSystem, tasks: Int,
        onAccepted: @escaping @Sendable (_ job: String, _ coordinator: String, _ nodes: [String]) -> Void,
        onOutcome: @escaping @Sendable (JobRunner.Outcome) -> Void
    ) {
        self.actorSystem = actorSystem
        self.tasks = tasks
        self.onAccepted = onAccepted
        self.onOutcome = onOutcome
    }

    /// The coordinator started the job; its tasks go to `nodes`.
    public distributed func accepted(job: String, coordinator: String, nodes: [String]) {
        onAccepted(job, coordinator, nodes)
    }

    /// Tasks that ended, in the order they ended.
    public distributed func ended(_ outcomes: [JobRunner.Outcome]) throws {
        for outcome in outcomes {
            try OutOfRange.check("task", outcome.task, in: 0...max(0, tasks - 1))
            try OutOfRange.check("attempts", outcome.attempts, in: 0...Int.max)
        }
        for outcome in outcomes { onOutcome(outcome) }
    }
}

/// Who cancelled a running job, set once (the first reason stays), read by its workload's
/// run from any thread.
private final class CancelReasonCell: Sendable {
    private let reason: Mutex<String?>

    init(_ reason: String?) {
        self.reason = Mutex(reason)
    }

    func set(_ text: String) {
        reason.withLock { if $0 == nil { $0 = text } }
    }

    var text: String { reason.withLock { $0 } ?? "cancelled" }
}

/// Hands items to an asynchronous consumer in order, in batches, one batch at a time:
/// whatever was added while a batch was out goes in the next (a listener's calls, a
/// journal's flushes: group commit). A consumer that returns false is done: it gets
/// nothing more, and what comes is dropped.
///
/// What `takeAlong` gives (a workload's events) goes with each batch, taken in the same
/// step as the batch's items; what an add's `alongside` makes, it makes in the same step
/// as the add. So whatever `alongside` made for an item goes in that item's batch, never
/// apart from it.
private final class OrderedBatches<Item: Sendable>: Sendable {
    private struct State {
        var pending: [Item] = []
        var sending = false
        var done = false
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    private let consume: @Sendable ([Item], _ along: [String]) async -> Bool
    private let takeAlong: (@Sendable () -> [String])?
    private let state = Mutex(State())

    init(takingAlong takeAlong: (@Sendable () -> [String])? = nil, consume: @escaping @Sendable ([Item], _ along: [String]) async -> Bool) {
        self.takeAlong = takeAlong
        self.consume = consume
    }

    /// Adds `item`; `alongside` runs first, in the same step.
    func add(_ item: Item, alongside: () -> Void = {}) {
        let start = state.withLock { state -> Bool in
            alongside()
            guard !state.done else { return false }
            state.pending.append(item)
            guard !state.sending else { return false }
            state.sending = true
            return true
        }
        if start { Task { await self.drain() } }
    }

    /// The consumer is done (it failed elsewhere): nothing more goes to it.
    func stop() {
        state.withLock { $0.done = true }
    }

    private func drain() async {
        while true {
            var finished: [CheckedContinuation<Void, Never>] = []
            let batch = state.withLock { state -> ([Item], [String])? in
                guard !state.pending.isEmpty, !state.done else {
                    // Idle again: whoever waited for everything so far is served, in the
                    // same step, so a flush that comes after a later add waits for it.
                    state.sending = false
                    state.pending = []
                    finished = state.drained
                    state.drained = []
                    return nil
                }
                defer { state.pending = [] }
                return (state.pending, takeAlong?() ?? [])
            }
            for continuation in finished { continuation.resume() }
            guard let (items, along) = batch else { break }
            if await !consume(items, along) { stop() }
        }
    }

    /// Returns once everything added so far was consumed (or dropped).
    func flush() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                guard state.sending else { return true }
                state.drained.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// Keeps a job's task ends durable in batches, one at a time (group commit), and hands
/// each batch to `kept` once it is. A workload's job sends its run's events in the same
/// batches, before the ends: one stream in the order things were made. A task's end is
/// added in the same step as the run hears it (``record(_:ended:)``), and a batch takes
/// the run's events in the same step as its ends, so an end and every event made before
/// it (the attempt's moves, the run's own record of the end) are kept together or in
/// order, never an end without them or its record without the end. When the durability
/// says the job is no longer this node's, `lost` runs and nothing more is kept (nor
/// handed on).
private final class DurableEnds: Sendable {
    /// One item of the stream: a task's end, or word that the run made events.
    private enum Item: Sendable {
        case ended(JobRunner.Outcome)
        case eventsMade
    }

    private let batches: OrderedBatches<Item>

    init(
        durability: any TaskJobDurability, job: String, run: (any JobWorkloadRun)?, epoch: Int,
        kept: @escaping @Sendable ([JobRunner.Outcome]) -> Void, lost: @escaping @Sendable () async -> Void
    ) {
        var takeEvents: (@Sendable () -> [String])?
        if let run {
            // Every event made so far, in the run's chunks (each bounded, so each command
            // fits a frame on its way to the followers): the ends of this batch may
            // depend on any of them.
            takeEvents = {
                var chunks: [String] = []
                while let chunk = run.takeEvents() { chunks.append(chunk) }
                return chunks
            }
        }
        batches = OrderedBatches(takingAlong: takeEvents) { (items: [Item], events: [String]) async -> Bool in
            let outcomes = items.compactMap { item -> JobRunner.Outcome? in
                if case .ended(let outcome) = item { return outcome }
                return nil
            }
            let ends = outcomes.map { (task: $0.task, end: TaskJobReport.TaskEnd($0)) }
            let isKept = events.isEmpty && ends.isEmpty ? true : await durability.streamed(epoch: epoch, events: events, ends: ends, of: job)
            guard isKept else {
                await lost()
                return false
            }
            kept(outcomes)
            return true
        }
    }

    /// Keeps `outcome`; `ended` (the run hearing it) runs in the same step.
    func record(_ outcome: JobRunner.Outcome, ended: () -> Void = {}) { batches.add(.ended(outcome), alongside: ended) }

    /// The run made events: they go in the next batch.
    func eventsMade() { batches.add(.eventsMade) }

    func flush() async { await batches.flush() }
}

/// Carries task ends to a listener in order, in batches, one call at a time. A listener
/// that fails a call (its client is gone) hears nothing more; the job goes on.
private final class TaskJobRelay: Sendable {
    /// Seconds a call to the listener may take; after a failed one it hears nothing more.
    static let callTimeout = 3.0

    private let listener: TaskJobListener?
    private let batches: OrderedBatches<JobRunner.Outcome>
    /// The node's runtime clock: what the calls' deadlines are measured on.
    private let clock: any RuntimeClock

    init(listener: TaskJobListener?, clock: any RuntimeClock) {
        self.listener = listener
        self.clock = clock
        batches = OrderedBatches { outcomes, _ in
            guard let listener else { return false }
            // A client that does not answer holds the job's end up for at most this.
            return (try? await withTimeout(seconds: Self.callTimeout, clock: clock) { try await listener.ended(outcomes) }) != nil
        }
    }

    func accepted(job: String, coordinator: String, nodes: [String]) async {
        guard let listener else { return batches.stop() }
        do {
            try await withTimeout(seconds: Self.callTimeout, clock: clock) { try await listener.accepted(job: job, coordinator: coordinator, nodes: nodes) }
        } catch {
            batches.stop()
        }
    }

    func send(_ outcome: JobRunner.Outcome) { batches.add(outcome) }

    /// Returns once every task end sent so far has been delivered (or the listener is
    /// gone): at most about ``callTimeout`` after the last call began.
    func flush() async { await batches.flush() }
}

import Foundation
import SpokesBikes
import SpokesCluster
import SpokesJobs
import SpokesConcurrency
import SpokesSimulatedCluster
import Synchronization

/// The clients of a ``NodesModel`` seed besides the submitters of maps and bike jobs, each
/// running the code its command runs (issue 28 §2):
/// - a sweep of two runs (``SweepClient``, as `spokes sweep`), submitted with the jobs;
/// - per job once it is accepted, a `result --wait` client at a node the seed picks
///   (``JobDeskClient/result(of:at:waiting:storedReport:onWaiting:)``, as `spokes result --wait`);
/// - on half the seeds, a `cancel` client for a map or the sweep (``JobDeskClient/cancel(_:at:origin:)``,
///   as `spokes cancel`);
/// - a `jobs` listing (``JobDeskClient/list(at:)``, as `spokes jobs`) while the faults
///   run, and one at the end.
///
/// What they must show, checked by ``check(in:accepted:)`` once every accepted job is
/// stored (and, for a client that stops, as it stops):
/// - no client waits past its bound without saying why: every `result --wait` client has
///   printed a report or said why not;
/// - what a client printed equals the stored report (a `result` client, waiting or not,
///   and the sweep's submitter), and the sweep is stored once per node, each run once,
///   its bikes conserved;
/// - a `result` client that stops without a report says the truth: no member it could
///   reach had been running the job for a while (as ``NodesRun``'s give-ups are judged),
///   unless the node it was told to ask is down or cut off;
/// - a job `cancel` said it cancelled (and stored) is stored cancelled;
/// - a listing names no job twice, and at the end, with every node up, names every
///   accepted job once, finished, with the stored report's counts.
final class NodesClients: Sendable {
    /// What a `result --wait` client printed, or said instead.
    enum Printed: Sendable {
        case report(StoredJobReport)
        /// Why it has no report (the job stalled, is unknown, not stored, still running).
        case word(String)
        /// The error it exits with.
        case error(String)
    }

    /// A `result --wait` client for one job.
    struct Watch: Sendable {
        var name: String
        var job: String
        /// The node it asks (`--to`).
        var node: Int
        var printed: Printed?
    }

    /// The sweep's submitter.
    struct SweepAnswer: Sendable {
        var entry: Int
        var runs: Int
        var job: String?
        var accepted = false
        var told: Result<TaskJobReport, SweepClientError>?
    }

    /// What a sweep's submitter or a `cancel` client was told instead of an answer.
    struct SweepClientError: Error, Sendable {
        var kind: ClientAnswer.ErrorKind
        var text: String
    }

    /// The `cancel` client.
    struct CancelAnswer: Sendable {
        var name: String
        var job: String?
        var node: Int
        /// Nil until it is answered; then the cancellation, or nil inside when no node ran it.
        var answered: JobService.Cancellation??
        var error: String?
    }

    private let watches = Mutex<[String: Watch]>([:])
    private let sweep = Mutex<SweepAnswer?>(nil)
    private let cancelling = Mutex<CancelAnswer?>(nil)
    /// Invariants broken as a client stopped or listed (the first is the verdict).
    private let broken = Mutex<[String]>([])

    /// Seconds between a waiting `result` client's questions: each asks the node it was
    /// sent to, which asks every member; the command line's quarter of a second, times
    /// five clients, made a seed several times slower.
    static let pollInterval = 1.0

    /// The name of the sweep's answer, in the trace.
    static let sweepName = "sweep"

    // MARK: Starting

    /// Connects the clients (each to a node the seed picks) and launches them: the sweep at
    /// a time the seed picks, a `result --wait` client per job once it is accepted, the
    /// `cancel` client a moment after its job is accepted, a listing within the fault window.
    func start(in run: NodesRun) async throws {
        var random = SimulationRandom(seed: run.seed ^ 0x636C_6965_6E74)
        let options = run.options
        let clock = run.cluster.clock
        // The sweep: two runs of a whole simulation of a few users on a few stations.
        let entry = random.index(below: options.nodes)
        let delay = random.uniform(in: options.submitWithin ?? 0...(options.faultWindow / 2))
        let plan = try SweepPlan(network: .synthetic(stations: 4, bikes: 6, emptySlots: 4), lists: [.users: "3,5", .paths: "2", .seed: "\(run.seed % 1000)"])
        let submitter = try await run.cluster.clusterClient(to: run.cluster[entry], registry: run.registry)
        sweep.withLock { $0 = SweepAnswer(entry: entry, runs: plan.runCount) }
        run.record("\(Self.sweepName) client joined n\(entry)")
        run.launch { [self] in
            try? await clock.sleep(for: delay)
            await submitSweep(plan, client: submitter, in: run)
        }
        // One client system for the `result`, `cancel` and `jobs` clients (each joins the
        // node it asks when it asks): fewer systems keep a seed light.
        let asker = try await run.cluster.clusterClient(to: run.cluster[random.index(below: options.nodes)], registry: run.registry)
        // A `result --wait` client per job, asking a node of the seed's choice.
        let names = run.answers.withLock { $0.values.map(\.name) }.sorted() + [Self.sweepName]
        for name in names {
            let node = random.index(below: options.nodes)
            let after = random.uniform(in: 0...3)
            let client = asker
            run.launch { [self] in
                guard let job = await acceptedJob(name, in: run) else { return }
                try? await clock.sleep(for: after)
                await waitForResult(name: name, job: job, node: node, client: client, in: run)
            }
        }
        // `spokes cancel` on half the seeds, for a map or the sweep (not the last map, whose
        // submitter cancels it; a cancelled bike job's users are not each in its report).
        if random.chance(0.5) {
            let name = random.element(of: (0..<max(options.maps - 1, 0)).map { "map\($0)" } + [Self.sweepName])
            let node = random.index(below: options.nodes)
            let after = random.uniform(in: 0.2...3)
            let client = asker
            cancelling.withLock { $0 = CancelAnswer(name: name, node: node) }
            run.launch { [self] in
                guard let job = await acceptedJob(name, in: run) else { return }
                try? await clock.sleep(for: after)
                await cancel(name: name, job: job, node: node, client: client, in: run)
            }
        }
        // `spokes jobs` while the faults run.
        let node = random.index(below: options.nodes)
        let at = random.uniform(in: 1...options.faultWindow)
        let lister = asker
        run.launch { [self] in
            try? await clock.sleep(for: at)
            await listDuringFaults(at: node, client: lister, in: run)
        }
    }

    /// The id of job `name` once its coordinator accepted it; nil when its submitter was
    /// answered without (refused, lost before) or the run ends first.
    private func acceptedJob(_ name: String, in run: NodesRun) async -> String? {
        let clock = run.cluster.clock
        while !Task.isCancelled {
            let state: (job: String?, accepted: Bool, answered: Bool)
            if name == Self.sweepName {
                state = sweep.withLock { ($0?.job, $0?.accepted == true, $0?.told != nil) }
            } else {
                state = run.answers.withLock { answers in
                    let answer = answers.values.first { $0.name == name }
                    return (answer?.job, answer?.accepted == true, answer?.told != nil)
                }
            }
            if state.accepted, let job = state.job { return job }
            if state.answered { return nil }
            try? await clock.sleep(for: 0.25)
        }
        return nil
    }

    private func address(of node: Int, in run: NodesRun) -> SocketAddress {
        SocketAddress(host: SimulatedCluster.host(node), port: run.cluster[node].settings.port)
    }

    // MARK: The clients

    /// `spokes sweep`: the sweep's client, as the command runs it.
    private func submitSweep(_ plan: SweepPlan, client: ClusterClient, in run: NodesRun) async {
        let name = Self.sweepName
        do {
            let report = try await SweepClient.run(
                plan, with: client, deadline: 30, retries: 3,
                onStart: { [self] started in
                    sweep.withLock { $0?.job = started.job; $0?.accepted = true }
                    run.record("\(name) accepted by \(started.coordinator)")
                },
                onReattaching: { lost in
                    run.record("\(name) follows its job: \(lost.stoppedThere ? "its coordinator stopped running it" : "its coordinator is lost")", detail: lost.reason)
                })
            sweep.withLock { $0?.told = .success(report) }
            run.record("\(name) told: \(report.succeeded) of \(report.tasks.count) runs\(report.cancelled ? " (job cancelled)" : "")")
        } catch {
            sweep.withLock { $0?.told = .failure(SweepClientError(kind: ClientAnswer.ErrorKind(error), text: "\(error)")) }
            run.record("\(name) told an error: \(type(of: error))", detail: "\(error)")
            if let lost = error as? CoordinatorLost {
                await judgeStopping("the \(name)'s client gave up (CoordinatorLost, \(lost.node))", job: lost.job, asked: nil, in: run)
            }
        }
    }

    /// `spokes result JOB --wait --to nK`: waits for the job's report, bounded.
    private func waitForResult(name: String, job: String, node: Int, client: ClusterClient, in run: NodesRun) async {
        watches.withLock { $0[name] = Watch(name: name, job: job, node: node) }
        run.record("result \(name) --wait asks n\(node)")
        let printed: Printed
        do {
            let found = try await JobDeskClient(system: client.system, pollInterval: Self.pollInterval).result(
                of: job, at: address(of: node, in: run), waiting: .untilEnd(atMost: 2 * run.options.livenessBound),
                storedReport: StoredJobReport.find)
            switch found {
            case .report(let report): printed = .report(report)
            case .running(let location): printed = .word("running on \(location.node)")
            case .stillRunning(let location, let waited): printed = .word("still running on \(location.node) after \(Int(waited)) s")
            case .stalled(let node, let reason): printed = .word("stalled on \(node): \(reason)")
            case .notStored(let node): printed = .word("ended on \(node), not stored there")
            case .unknown: printed = .word("no node knows it")
            }
        } catch {
            printed = .error("\(type(of: error)): \(error)")
        }
        watches.withLock { $0[name]?.printed = printed }
        switch printed {
        case .report(let report):
            run.record("result \(name) printed \(Self.describe(report))")
        case .word(let word):
            run.record("result \(name) said: \(word)")
            if !word.hasPrefix("stalled") { await judgeStopping("its result --wait client said \"\(word)\"", job: job, asked: node, in: run, name: name) }
        case .error(let text):
            run.record("result \(name) failed", detail: text)
            await judgeStopping("its result --wait client failed (\(text))", job: job, asked: node, in: run, name: name)
        }
    }

    /// A client stopped without the job's report: the truth only if no member it could
    /// reach had been running the job for a while, or the node it was told to ask (`asked`)
    /// is down or cut off (then it says it cannot reach it).
    private func judgeStopping(_ what: String, job: String, asked: Int?, in run: NodesRun, name: String = sweepName) async {
        var (runners, cutOff) = await run.reachableRunners(of: job)
        let askedIsAway = asked.map { asked in cutOff.contains(asked) || !run.servingAssemblies.contains { $0.index == asked } } ?? false
        // The node a `result` client asks finds the job only on members it sees alive (a
        // replica-cut leaves the job's node reachable from clients, not from the others).
        if let asked, let seen = run.liveAssemblies.first(where: { $0.index == asked })?.assembly.node.members {
            let alive = Set(seen.filter { $0.state == .alive }.map(\.node.name))
            runners = runners.filter { runner in
                let name = String(runner.prefix { $0 != " " })
                return name == "n\(asked)" || alive.contains(name)
            }
        }
        if runners.isEmpty || askedIsAway {
            run.record("  \(name): \(runners.isEmpty ? "no reachable member runs it" : "the node it asks is away"): truthful")
            return
        }
        let text = "\(name) (\(job)): \(what) while \(runners.joined(separator: ", ")), which it could reach, ran the job"
        run.record("  " + text)
        broken.withLock { $0.append(text) }
    }

    /// `spokes cancel JOB --to nK`.
    private func cancel(name: String, job: String, node: Int, client: ClusterClient, in run: NodesRun) async {
        cancelling.withLock { $0?.job = job }
        run.record("cancel \(name) asks n\(node)")
        do {
            // Joined now: the node's incarnation may have changed since the client connected.
            let desk = JobDeskClient(system: client.system)
            let cancellation = try await desk.cancel(job, at: try await desk.node(at: address(of: node, in: run)))
            cancelling.withLock { $0?.answered = .some(cancellation) }
            if let cancellation {
                run.record("cancel \(name): \(cancellation.summary.map { "\($0.state.rawValue), \($0.succeeded) of \($0.tasks) done" } ?? "stopping") on \(cancellation.coordinator)")
            } else {
                run.record("cancel \(name): no node runs it")
            }
        } catch {
            cancelling.withLock { $0?.error = "\(error)" }
            run.record("cancel \(name) failed: \(type(of: error))", detail: "\(error)")
        }
    }

    /// `spokes jobs --to nK` while the faults run: no job listed twice.
    private func listDuringFaults(at node: Int, client: ClusterClient, in run: NodesRun) async {
        do {
            let desk = JobDeskClient(system: client.system)
            let listed = try await desk.list(at: try await desk.node(at: address(of: node, in: run)))
            run.record("jobs at n\(node): \(listed.jobs.count) listed\(listed.unanswered.isEmpty ? "" : ", \(listed.unanswered.sorted().joined(separator: ", ")) did not answer")")
            if let twice = Self.listedTwice(listed) { broken.withLock { $0.append("jobs at n\(node) lists \(twice) twice") } }
        } catch {
            run.record("jobs at n\(node) failed: \(type(of: error))", detail: "\(error)")
        }
    }

    static func listedTwice(_ listed: JobService.ClusterJobs) -> String? {
        var seen = Set<String>()
        return listed.jobs.first { !seen.insert($0.job).inserted }?.job
    }

    // MARK: Checking

    /// The first broken invariant of these clients (see the type's), once every accepted
    /// job (`accepted`, the submitters') is stored and every node is up; nil when none.
    func check(in run: NodesRun, accepted: [ClientAnswer]) async throws -> String? {
        if let first = broken.withLock({ $0.first }) { return first }
        let bound = run.options.livenessBound
        let invariants = NodesInvariants(run: run)
        // The sweep's submitter has its answer, and an accepted sweep is stored.
        let sweepJob: String?
        do {
            try await run.run(until: "the sweep's client has its answer", within: bound, step: 0.25) { [self] in sweep.withLock { $0?.told != nil } }
            sweepJob = sweep.withLock { $0?.accepted == true ? $0?.job : nil }
            if let job = sweepJob {
                try await run.run(until: "the sweep is stored", within: bound, step: 0.5) { !((await invariants.storedLines(of: [job]))[job] ?? []).isEmpty }
            }
        } catch is VirtualTimeout {
            return "the \(Self.sweepName) has no answer or no stored report \(Int(bound)) virtual s after every other job was stored"
        }
        if let job = sweepJob, let broken = try await checkSweep(job, in: run) { return "\(Self.sweepName) (\(job)): \(broken)" }
        if case .failure(let error)? = sweep.withLock({ $0?.told }), error.kind == .refused, let job = sweep.withLock({ $0?.job }),
           let places = (await invariants.storedLines(of: [job]))[job], !places.isEmpty {
            return "\(Self.sweepName) (\(job)): its client was told the job was refused (JobRefused), and n\(places[0].node) stored it"
        }
        let jobs = accepted.map { ($0.name, $0.job!) } + (sweepJob.map { [(Self.sweepName, $0)] } ?? [])
        // A node just healed or resumed still sees others dead (and a paused coordinator
        // still believes it leads its job) until the membership heals: `result` and
        // `jobs` are asked once every node sees every other alive, as a user would. A node
        // that yielded its name to a live holder (a restart of a name a twin took while it
        // was down) is not waited for: `spokes node` exits then, saying so.
        for (_, assembly) in run.liveAssemblies {
            if let conflict = assembly.node.nameTaken { run.record("\(assembly.node.system.node) yielded its name", detail: "\(conflict)") }
        }
        do {
            try await run.run(until: "every node sees every other alive", within: bound, step: 0.25) {
                let nodes = run.runningNodes
                return nodes.allSatisfy { node in node.members.count { $0.state == .alive } >= nodes.count - 1 }
            }
        } catch is VirtualTimeout {
            let nodes = run.runningNodes
            let views = nodes.map { node in
                "\(node.system.node) sees " + node.members.map { "\($0.node) \($0.state.rawValue)" }.joined(separator: ", ")
            }
            return "the membership has not healed \(Int(bound)) virtual s after every job was stored, every node up: \(views.joined(separator: "; "))"
        }
        run.record("every node sees every other alive")
        // A node that was paused or cut off lists a job it held as running until it hears
        // the job ended elsewhere; not for long.
        var stale: [String] = []
        do {
            try await run.run(until: "no node lists a stored job as running", within: Self.stalePatience, step: 0.25) { [self] in
                stale = await staleListings(of: jobs, in: run)
                return stale.isEmpty
            }
        } catch is VirtualTimeout {
            return "\(stale.joined(separator: "; ")), stored, \(Int(Self.stalePatience)) virtual s after every node saw every other alive"
        }
        // Every `result --wait` client has printed its report or said why not.
        let expected = Set(jobs.map(\.0))
        do {
            try await run.run(until: "every result client has its answer", within: bound, step: 0.25) { [self] in
                watches.withLock { watches in expected.allSatisfy { watches[$0]?.printed != nil } }
            }
        } catch is VirtualTimeout {
            let waiting = watches.withLock { watches in expected.filter { watches[$0]?.printed == nil } }.sorted()
            return "result --wait clients of \(waiting.joined(separator: ", ")) still wait \(Int(bound)) virtual s after every job was stored, having said nothing"
        }
        if let first = broken.withLock({ $0.first }) { return first }
        let stored = await invariants.storedLines(of: jobs.map(\.1))
        // One new client asks every `result` and the `jobs` at the end (joining each node).
        guard let first = run.servingAssemblies.first?.index else { return nil }
        let asker = try await run.cluster.clusterClient(to: run.cluster[first], registry: run.registry)
        defer { asker.shutdown() }
        // A report kept only by nodes that yielded their names to twins (they exit, as
        // `spokes node` does) is on their disks, not in the cluster: no node is asked for it.
        let serving = Set(run.servingAssemblies.map(\.index))
        var asked: [(String, String)] = []
        for (name, job) in jobs {
            guard let places = stored[job], let node = places.first?.node, let report = try await storedReport(of: job, on: node, in: run) else {
                asked.append((name, job))
                continue
            }
            if case .report(let printed)? = watches.withLock({ $0[name]?.printed }), !Self.same(printed, report) {
                return "\(name) (\(job)): its result --wait client printed \(Self.describe(printed)); stored on n\(node): \(Self.describe(report))"
            }
            guard places.contains(where: { serving.contains($0.node) }) else {
                run.record("\(name) stored only by a node that yielded its name: not asked")
                continue
            }
            asked.append((name, job))
            // `spokes result JOB` now, at a node the seed picks: the stored report.
            if let broken = try await checkResult(name: name, job: job, stored: report, asking: asker, in: run) { return "\(name) (\(job)): \(broken)" }
        }
        if let broken = try await checkCancel(in: run) { return broken }
        return try await checkListing(jobs: asked, asking: asker, in: run)
    }

    /// The sweep: stored at most once per node, the same on each, as its client was told;
    /// each run once, its bikes conserved.
    private func checkSweep(_ job: String, in run: NodesRun) async throws -> String? {
        let places = (await NodesInvariants(run: run).storedLines(of: [job]))[job] ?? []
        if let twice = places.first(where: { $0.lines > 1 }) { return "stored \(twice.lines) times on n\(twice.node)" }
        var first: TaskJobReport?
        for place in places {
            guard case .tasks(let report)? = try await storedReport(of: job, on: place.node, in: run) else { return "n\(place.node) lists it and has no report of tasks" }
            let runs = (try? SweepClient.report(of: report))?.runs.count
            let planned = sweep.withLock { $0?.runs ?? 0 }
            if report.tasks.count != planned || runs != planned { return "n\(place.node)'s report has \(report.tasks.count) tasks and \(runs ?? 0) runs, the sweep \(planned)" }
            if let sweepReport = try? SweepClient.report(of: report), sweepReport.runsNotConserved > 0 {
                return "\(sweepReport.runsNotConserved) runs did not conserve their bikes (n\(place.node))"
            }
            if let first, !Self.same(.tasks(first), .tasks(report)) { return "the reports stored on two nodes differ" }
            first = first ?? report
        }
        if case .success(let told)? = sweep.withLock({ $0?.told }), let first, !Self.same(.tasks(told), .tasks(first)) {
            return "its client was told \(Self.describe(.tasks(told))); stored: \(Self.describe(.tasks(first)))"
        }
        run.record("\(Self.sweepName) stored on \(places.count) node(s), as told")
        return nil
    }

    /// `spokes result JOB --to nK` (no wait) at a live node the seed picks prints the
    /// stored report.
    private func checkResult(name: String, job: String, stored: StoredJobReport, asking client: ClusterClient, in run: NodesRun) async throws -> String? {
        var random = SimulationRandom(seed: run.seed ^ name.utf8.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) })
        let live = run.servingAssemblies
        guard !live.isEmpty else { return nil }
        let node = live[random.index(below: live.count)].index
        let address = address(of: node, in: run)
        let found = try await run.cluster.complete("result \(name) at n\(node)", within: 30) {
            try await JobDeskClient(system: client.system).result(of: job, at: address, waiting: .no, storedReport: StoredJobReport.find)
        }
        guard case .report(let printed) = found else { return "result at n\(node) answered \(found), not its stored report" }
        if !Self.same(printed, stored) { return "result at n\(node) printed \(Self.describe(printed)); stored: \(Self.describe(stored))" }
        run.record("result \(name) at n\(node) prints the stored report")
        return nil
    }

    /// A job `cancel` said it cancelled, with its report stored, is stored cancelled; one
    /// it said had ended before the cancel reached it is stored as it said.
    private func checkCancel(in run: NodesRun) async throws -> String? {
        guard let answer = cancelling.withLock({ $0 }), let job = answer.job else { return nil }
        guard case .some(.some(let cancellation)) = answer.answered, cancellation.summary != nil, cancellation.storeError == nil else { return nil }
        guard let node = (await NodesInvariants(run: run).storedLines(of: [job]))[job]?.first?.node,
              let report = try await storedReport(of: job, on: node, in: run)
        else { return "\(answer.name) (\(job)): cancel said it was cancelled and stored, and no node stores it" }
        let cancelled = switch report {
        case .bikes(let report): report.cancelled
        case .tasks(let report): report.cancelled
        }
        let said = cancellation.summary?.state == .cancelled
        if cancelled != said {
            return "\(answer.name) (\(job)): cancel said \(cancellation.coordinator) \(said ? "cancelled it" : "had ended it before the cancel") and stored its report; stored on n\(node): \(Self.describe(report))"
        }
        run.record("cancel \(answer.name): stored \(said ? "cancelled" : "ended before the cancel"), as said")
        return nil
    }

    /// `spokes jobs` at the end, every node up: each accepted job once, finished, with the
    /// stored report's counts; every member answered.
    private func checkListing(jobs: [(String, String)], asking client: ClusterClient, in run: NodesRun) async throws -> String? {
        var random = SimulationRandom(seed: run.seed ^ 0x6A6F_6273_6174)
        let live = run.servingAssemblies
        guard !live.isEmpty else { return nil }
        let node = live[random.index(below: live.count)].index
        let address = address(of: node, in: run)
        let listed = try await run.cluster.complete("jobs at n\(node)", within: 30) {
            let desk = JobDeskClient(system: client.system)
            return try await desk.list(at: try await desk.node(at: address))
        }
        let unanswered = Set(listed.unanswered).subtracting(run.namesHeldByTwins)
        if !unanswered.isEmpty { return "jobs at n\(node): \(unanswered.sorted().joined(separator: ", ")) did not answer, every node up" }
        if let twice = Self.listedTwice(listed) { return "jobs at n\(node) lists \(twice) twice" }
        let stored = await NodesInvariants(run: run).storedLines(of: jobs.map(\.1))
        for (name, job) in jobs {
            guard let row = listed.jobs.first(where: { $0.job == job }) else { return "\(name) (\(job)): jobs at n\(node) does not list it" }
            if row.isUnfinished { return "\(name) (\(job)): jobs at n\(node) lists it \(row.state.rawValue) on \(row.coordinator), stored" }
            if let place = stored[job]?.first?.node, case .tasks(let report)? = try await storedReport(of: job, on: place, in: run),
               row.succeeded != report.succeeded || row.tasks != report.tasks.count {
                return "\(name) (\(job)): jobs at n\(node) lists \(row.succeeded) of \(row.tasks) succeeded; stored: \(report.succeeded) of \(report.tasks.count)"
            }
        }
        run.record("jobs at n\(node) lists every job once, finished")
        return nil
    }

    /// Virtual seconds a node may go on listing a stored job as running once every node
    /// sees every other alive.
    static let stalePatience = 10.0

    /// `nK lists NAME (JOB) as running` for each job of `jobs` a live node lists unfinished.
    private func staleListings(of jobs: [(String, String)], in run: NodesRun) async -> [String] {
        var found: [String] = []
        for (index, assembly) in run.liveAssemblies {
            let listed = ((try? await assembly.jobs.whenLocal { try await $0.jobs() }) ?? nil) ?? []
            for (name, job) in jobs {
                if let row = listed.first(where: { $0.job == job && $0.isUnfinished }) { found.append("n\(index) lists \(name) (\(job)) as \(row.state.rawValue)") }
            }
        }
        return found
    }

    // MARK: Reports

    /// The report of `job` in node `node`'s store.
    private func storedReport(of job: String, on node: Int, in run: NodesRun) async throws -> StoredJobReport? {
        guard let store = run.liveAssemblies.first(where: { $0.index == node })?.assembly.store else { return nil }
        return try await runBlocking("nodes-model") {
            if let report = try store.report(of: job) { return .bikes(report) }
            return try store.taskJobReport(of: job).map { .tasks($0) }
        }
    }

    static func same(_ a: StoredJobReport, _ b: StoredJobReport) -> Bool {
        switch (a, b) {
        case (.bikes(let a), .bikes(let b)): NodesInvariants.same(a, b)
        case (.tasks(let a), .tasks(let b)): a.tasks.map(\.output) == b.tasks.map(\.output) && a.cancelled == b.cancelled
        default: false
        }
    }

    static func describe(_ report: StoredJobReport) -> String {
        switch report {
        case .bikes(let report): "a bike report, \(report.completedUsers) users completed\(report.cancelled ? ", cancelled" : "")"
        case .tasks(let report): "\(report.succeeded) of \(report.tasks.count) tasks succeeded\(report.cancelled ? ", cancelled" : "")"
        }
    }
}

import Foundation
import SpokesBikes
import SpokesCluster
import SpokesJobs
import SpokesConcurrency
import SpokesReplication
import SpokesSimulatedCluster

/// What must hold at the end of a seed of ``NodesModel``, once every fault has ended and
/// every node is up again (that no node stores a job twice after every fault as well; the
/// cheap safety invariants, after every event, are ``NodesSafety``'s):
/// - no client waits past `livenessBound` without saying why (a report, or an error);
/// - every job a coordinator accepted has a stored report within `livenessBound` (no job
///   stays running forever while its replicas' nodes are alive), on at most one line of
///   each node's store, and the nodes that store it agree;
/// - every task's result counts once: a map's report has each index exactly once, each
///   output its input (`bench.sleep`), and its client heard each task at most once, as
///   stored; a bike job's report has each user once and its bikes are conserved;
/// - what a client was told equals the stored report, and so does what a node that stored
///   it answers a client asking for its result (`spokes result`);
/// - a job its submitter was told was refused (``JobRefused``) never runs: no node stores
///   it or runs it, once every accepted job is stored;
/// - a client that gives up on a job (``CoordinatorLost``) says the truth: no member it
///   could reach had been running the job for a while when it gave up (checked as it
///   gives up, ``NodesRun``'s `checkGivingUp`; a give-up whose job then completes is
///   traced, and is no failure: the error says the job may go on and how to find it).
struct NodesInvariants {
    let run: NodesRun

    /// The first broken invariant, or nil.
    func check(healedAt: Double) async throws -> String? {
        let bound = run.options.livenessBound
        let run = run
        do {
            try await run.run(until: "every client has its answer", within: bound, step: 0.25) {
                run.answers.withLock { $0.values.allSatisfy { $0.told != nil } }
            }
        } catch is VirtualTimeout {
            let waiting = run.answers.withLock { $0.values.filter { $0.told == nil }.map(\.name).sorted() }
            return "clients \(waiting.joined(separator: ", ")) still wait \(Int(bound)) virtual s after the faults ended, told nothing"
        }
        run.record("every client has its answer")
        let accepted = run.answers.withLock { $0.values.filter { $0.accepted && $0.job != nil }.sorted { $0.name < $1.name } }
        var stored: [String: [(node: Int, lines: Int)]] = [:]
        do {
            try await run.run(until: "every accepted job is stored", within: bound, step: 0.5) {
                stored = await storedLines(of: accepted.compactMap(\.job))
                return accepted.allSatisfy { !(stored[$0.job!] ?? []).isEmpty }
            }
        } catch is VirtualTimeout {
            let missing = accepted.filter { (stored[$0.job!] ?? []).isEmpty }.map { "\($0.name) (\($0.job!))" }
            return "accepted jobs \(missing.joined(separator: ", ")) have no stored report \(Int(bound)) virtual s after every client had its answer, every node up"
        }
        run.record("every accepted job is stored")
        if let broken = await refusedJobsRan() { return broken }
        // `spokes result`: a new client asks a node that stored the job for its report.
        var askers: [Int: ClusterClient] = [:]
        for answer in accepted {
            let job = answer.job!
            let places = stored[job] ?? []
            if let twice = places.first(where: { $0.lines > 1 }) {
                return "\(answer.name) (\(job)) is stored \(twice.lines) times on n\(twice.node)"
            }
            if let broken = try await checkReports(of: answer, on: places.map(\.node)) { return "\(answer.name) (\(job)): \(broken)" }
            let node = places[0].node
            if askers[node] == nil, let assembly = run.liveAssemblies.first(where: { $0.index == node })?.assembly {
                askers[node] = try await run.cluster.clusterClient(to: assembly.node, registry: run.registry)
            }
            if let asking = askers[node], let broken = try await checkResult(of: answer, at: node, asking: asking) { return "\(answer.name) (\(job)): \(broken)" }
            run.record("\(answer.name) stored on \(places.count) node(s), as told")
        }
        // The other clients: `result --wait`, `jobs`, `cancel`, the sweep (NodesClients).
        return try await run.clients.check(in: run, accepted: accepted)
    }

    /// A job whose client was told ``JobRefused`` is stored nowhere and runs nowhere; and,
    /// traced: which jobs a client gave up on (``CoordinatorLost``) went on to be stored.
    func refusedJobsRan() async -> String? {
        let answers = run.answers.withLock { $0.values.filter { $0.job != nil }.sorted { $0.name < $1.name } }
        let stored = await storedLines(of: answers.compactMap(\.job))
        for answer in answers {
            guard case .error(let kind, _)? = answer.told, kind != .other else { continue }
            let job = answer.job!
            var places = (stored[job] ?? []).map { "n\($0.node) stored it" }
            for (index, assembly) in run.liveAssemblies {
                if await assembly.taskJobs.whenLocal({ $0.isRunning(job) }) == true { places.append("n\(index) runs it") }
            }
            if kind == .refused, !places.isEmpty {
                return "\(answer.name) (\(job)): its client was told the job was refused (JobRefused), and \(places.joined(separator: ", "))"
            }
            if kind == .lost { run.record("\(answer.name): its client gave up (CoordinatorLost); \(places.isEmpty ? "stored nowhere" : places.joined(separator: ", "))") }
        }
        return nil
    }

    /// Checked after every fault too (cheap: the stores' lines): no node stores a job twice.
    func storedTwice() async -> String? {
        let jobs = run.answers.withLock { $0.values.compactMap { answer in answer.job.map { (answer.name, $0) } } }
        let stored = await storedLines(of: jobs.map(\.1))
        for (name, job) in jobs.sorted(by: { $0.0 < $1.0 }) {
            if let twice = stored[job]?.first(where: { $0.lines > 1 }) { return "\(name) (\(job)) is stored \(twice.lines) times on n\(twice.node)" }
        }
        return nil
    }

    /// For each job, the nodes whose store holds it and on how many lines.
    func storedLines(of jobs: [String]) async -> [String: [(node: Int, lines: Int)]] {
        let stores = run.liveAssemblies.map { ($0.index, $0.assembly.store.path, $0.assembly.node.system.runtime.disk) }
        return await runBlocking("nodes-model") {
            var found: [String: [(node: Int, lines: Int)]] = [:]
            // Compared as bytes (the store is JSON lines; a string search per line and job
            // was most of this check's time).
            let needles = jobs.map { Array("\"job\":\"\($0)\"".utf8) }
            for (node, path, disk) in stores {
                guard let bytes = (try? disk.read(path)) ?? nil else { continue }
                let lines = bytes.split(separator: UInt8(ascii: "\n"))
                for (job, needle) in zip(jobs, needles) {
                    let count = lines.count { Self.bytes($0, contain: needle) }
                    if count > 0 { found[job, default: []].append((node, count)) }
                }
            }
            return found
        }
    }

    /// Whether `needle` occurs in `line`, byte for byte.
    private static func bytes(_ line: ArraySlice<UInt8>, contain needle: [UInt8]) -> Bool {
        guard let first = needle.first, line.count >= needle.count else { return needle.isEmpty }
        var start = line.startIndex
        while let found = line[start...].firstIndex(of: first), line.endIndex - found >= needle.count {
            if line[found..<found + needle.count].elementsEqual(needle) { return true }
            start = found + 1
        }
        return false
    }

    private func checkReports(of answer: ClientAnswer, on nodes: [Int]) async throws -> String? {
        let job = answer.job!
        let assemblies = Dictionary(run.liveAssemblies.map { ($0.index, $0.assembly) }) { first, _ in first }
        if answer.users > 0 {
            var first: SimulationReport?
            for node in nodes {
                guard let store = assemblies[node]?.store else { continue }
                guard let report = try await runBlocking("nodes-model", { try store.report(of: job) }) else { return "n\(node) lists it and has no bike report" }
                if report.results.map(\.user).sorted() != Array(0..<answer.users) { return "n\(node)'s report has users \(report.results.map(\.user).sorted()), want each of 0..<\(answer.users) once" }
                if !report.conservation.holds { return "bikes not conserved on n\(node): \(report.conservation)" }
                if let first, !Self.same(first, report) { return "the reports stored on two nodes differ" }
                first = first ?? report
            }
            if case .bikes(let told)? = answer.told, let first, !Self.same(told, first) {
                return "the client was told \(told.completedUsers) users completed, stations \(told.stations.map(\.freeBikes)); stored: \(first.completedUsers), \(first.stations.map(\.freeBikes))"
            }
            return nil
        }
        var first: TaskJobReport?
        for node in nodes {
            guard let store = assemblies[node]?.store else { continue }
            guard let report = try await runBlocking("nodes-model", { try store.taskJobReport(of: job) }) else { return "n\(node) lists it and has no report of tasks" }
            if report.tasks.count != answer.inputs.count { return "n\(node)'s report has \(report.tasks.count) tasks, the job \(answer.inputs.count)" }
            for (index, end) in report.tasks.enumerated() {
                if let output = end.output, Double(output) != Double(answer.inputs[index]) {
                    return "task \(index)'s output \(output) on n\(node) is not its input \(answer.inputs[index])"
                }
            }
            if let first, first.tasks.map(\.output) != report.tasks.map(\.output) || first.cancelled != report.cancelled {
                return "the reports stored on two nodes differ"
            }
            first = first ?? report
        }
        guard let first else { return nil }
        if !answer.heardTwice.isEmpty { return "the client heard tasks \(answer.heardTwice) more than once" }
        for (task, output) in answer.outcomes where first.tasks.indices.contains(task) && first.tasks[task].output != output {
            return "the client heard task \(task) end with \(output ?? "no output"), stored: \(first.tasks[task].output ?? "no output")"
        }
        if case .map(let told)? = answer.told, told.tasks.map(\.output) != first.tasks.map(\.output) || told.cancelled != first.cancelled {
            return "the client was told outputs \(told.tasks.map { $0.output ?? "-" }) (cancelled: \(told.cancelled)); stored: \(first.tasks.map { $0.output ?? "-" }) (cancelled: \(first.cancelled))"
        }
        return nil
    }

    /// What a client asking `node` for the job's result hears equals what it stored.
    private func checkResult(of answer: ClientAnswer, at node: Int, asking client: ClusterClient) async throws -> String? {
        guard let assembly = run.liveAssemblies.first(where: { $0.index == node })?.assembly else { return nil }
        let job = answer.job!, id = assembly.node.system.node, system = client.system
        if answer.users > 0 {
            let desk = try BikeJobService.resolve(id: ActorID(node: id, name: BikeJobService.wellKnownName), using: system)
            let heard = try await run.cluster.complete("the result of \(job)", within: 10) { try await desk.report(of: job) }
            let stored = try await runBlocking("nodes-model") { try assembly.store.report(of: job) }
            guard let heard, let stored, Self.same(heard, stored) else { return "n\(node) answers its result with another report than it stored" }
            return nil
        }
        let desk = try TaskJobs.resolve(id: ActorID(node: id, name: TaskJobs.wellKnownName), using: system)
        let heard = try await run.cluster.complete("the result of \(job)", within: 10) { try await desk.lookup(job) }
        let stored = try await runBlocking("nodes-model") { try assembly.store.taskJobReport(of: job) }
        guard case .finished(let report) = heard, let stored, report.tasks.map(\.output) == stored.tasks.map(\.output) else {
            return "n\(node) answers its result with \(heard), not the report it stored"
        }
        return nil
    }

    static func same(_ a: SimulationReport, _ b: SimulationReport) -> Bool {
        a.completedUsers == b.completedUsers && a.cancelled == b.cancelled && a.stations.map(\.freeBikes) == b.stations.map(\.freeBikes)
            && a.results.map(\.user).sorted() == b.results.map(\.user).sorted()
    }
}

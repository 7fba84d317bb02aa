import FoundationEssentials
import Glibc
import SpokesCluster
import SpokesConcurrency
import SpokesJobs
import Synchronization

/// `spokes map KIND` (and its older name `run`): runs a task kind over JSON inputs on a
/// cluster's workers as a job the cluster keeps, and prints one output per input: in
/// input order as soon as the outputs before it are in, or as tasks end (`--unordered`).
/// `map --list` names the kinds the cluster's nodes run.
///
/// The node the client reaches coordinates and stores the job (``ClusterClient/run(kind:schema:inputs:deadline:retries:title:share:jobPrefix:progress:onStart:onOutcome:onReattaching:)``):
/// `spokes jobs` lists it, `spokes result` prints its outputs again, `spokes cancel` stops it.
enum RunCommand {
    static let kind = Option.string("kind", "KIND", help: "The task kind to run, e.g. pi.sample (also the first argument).")
    static let inputs = Option.string("inputs", "FILE", default: "-",
                                      help: "JSON lines: one task's input per line (blank lines are skipped); - reads stdin.")
    static let unordered = Option.flag("unordered", help: "Print each output as its task ends, as --json objects with the input's line number.")
    static let json = Option.flag("json", help: "Print one object per task: {\"line\", \"output\", \"node\"} or {\"line\", \"error\"}.")
    static let list = Option.flag("list", help: "List the task kinds each alive node runs, with their versions, and exit.")

    static func spec(name: String) -> CommandSpec {
        CommandSpec(
            name: name,
            abstract: name == "map"
                ? "Run a task kind over JSON inputs (one per line) on a cluster; print one output per input."
                : "The same as 'map' (its earlier name): outputs in input order.",
            discussion: """
                Submits a job to the node at --to (or the first found by discovery), which sends \
                each task to a member that runs the kind (at this program's version when it runs \
                the kind too) and has a free slot, retries a failed task on another member (up to \
                --retries, each attempt within --deadline), and stores the job's outputs: 'spokes \
                jobs' lists it, 'spokes result JOB' prints them again, 'spokes cancel JOB' stops it, \
                and it runs on if this client goes away. This prints one JSON output per line on \
                stdout: in input order, each as soon as the ones before it are in (null for a task \
                that failed), or as tasks end with --unordered. Progress goes to stderr on a \
                terminal; the failures, with each attempt's node and reason, and a summary go to \
                stderr. Every input is checked first (valid JSON, within limits.max_frame_bytes / 4, \
                and, when this program runs the kind too, its input type and validation): a bad line \
                is named and nothing runs. Exit status 0 when every task succeeded, 1 otherwise, 130 \
                on Ctrl-C (which cancels the job).
                """,
            usage: [
                "\(name) KIND [--inputs FILE.jsonl | -] [--to HOST:PORT] [--deadline S] [--retries N] [--owner NAME] [--priority N] [--max-slots N] [--unordered] [--json]",
                "\(name) --list [--to HOST:PORT]",
            ],
            options: [kind, inputs, NodeClient.to, JobOptions.deadline, JobOptions.retries] + JobOptions.sharing + [unordered, json, list] + ClusterOptions.connectionOptions,
            positional: kind)
    }

    /// `map` (or `run`) for a tool whose own registry holds `kinds` too (to check inputs
    /// before sending, and to choose the version).
    static func subcommand(kinds: [any TaskKind], name: String = "run") -> Subcommand {
        Subcommand(spec: spec(name: name)) { arguments, context in
            let settings = try ClusterOptions.settings(arguments, environment: context.environment)
            if try arguments.value(list) {
                return try await listKinds(at: try await NodeClient.target(arguments, settings: settings, timeout: 3), settings: settings, context: context)
            }
            guard let kind = try arguments.value(kind) else {
                throw UsageError("name the task kind to run, e.g. '\(name) pi.sample --inputs inputs.jsonl', or list them with '\(name) --list'")
            }
            let deadline = try arguments.value(JobOptions.deadline) ?? settings.taskDeadline
            let retries = try arguments.value(JobOptions.retries) ?? settings.taskRetries
            let share = try JobOptions.share(arguments, environment: context.environment)
            let path = try arguments.value(inputs)
            let source = path == "-" ? "stdin" : path
            let text = try await runBlocking("spokes.run.inputs") { () throws -> String in
                if path == "-" { return String(decoding: DescriptorReading.all(of: STDIN_FILENO), as: UTF8.self) }
                let bytes: [UInt8]?
                do throws(DiskError) {
                    bytes = try RealDisk().read(path)
                } catch {
                    throw RunError.unreadable(path: path, reason: error.reason)
                }
                guard let bytes else { throw RunError.unreadable(path: path, reason: String(cString: strerror(ENOENT))) }
                return String(decoding: bytes, as: UTF8.self)
            }
            let registry = SpokesTool.registry(kinds: kinds)
            let lines = try TaskInputLines(text, source: source, kind: kind, registry: registry, settings: settings).lines
            guard !lines.isEmpty else { throw RunError.noInputs(source: source) }
            let target = try await NodeClient.target(arguments, settings: settings, timeout: 3)
            let style = OutputStyle(unordered: try arguments.value(unordered), json: try arguments.value(json))
            let run = Task {
                try await RunCommand.run(
                    kind: kind, registry: registry, inputs: lines, at: target, settings: settings,
                    deadline: deadline, retries: retries, share: share, style: style, name: name, context: context)
            }
            let interrupt = InterruptHandler(signals: [SIGINT, SIGTERM]) { run.cancel() }
            defer { interrupt.stop() }
            return try await run.value
        }
    }

    /// How outputs are printed: in input order or as they end; bare or as objects.
    struct OutputStyle: Sendable {
        var unordered: Bool
        var json: Bool

        /// One line for `outcome` (its input on `line`).
        func line(_ outcome: JobRunner.Outcome, inputLine line: Int) -> String {
            guard json || unordered else { return outcome.output ?? "null" }
            var object = ["\"line\": \(line)"]
            if let output = outcome.output {
                object.append("\"output\": \(output)")
                object.append("\"node\": \(RunCommand.quoted(outcome.node ?? ""))")
            } else {
                object.append("\"output\": null")
                object.append("\"error\": \(RunCommand.quoted(outcome.cancelled ? "cancelled" : outcome.failures.last?.reason ?? "failed"))")
            }
            return "{" + object.joined(separator: ", ") + "}"
        }
    }

    /// `text` as a JSON string.
    static func quoted(_ text: String) -> String {
        (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }

    /// `map --list`: each alive member's kinds, as a table of kind, version and nodes.
    static func listKinds(at target: SocketAddress, settings: ClusterSettings, context: CommandContext) async throws -> Int32 {
        let client = try NodeClient.makeClient(settings: settings, callTimeout: settings.callTimeout)
        defer { client.shutdown() }
        let first = try await NodeClient.join(target, with: client)
        let members = try await NodeStatus.resolve(id: ActorID(node: first.node, name: NodeStatus.wellKnownName), using: client).members()
        var nodesOf: [TaskSchema: [String]] = [:]
        var unreachable: [String] = []
        for member in members where member.state == Member.State.alive.rawValue {
            // The node asked first is connected already: dialling it again would make a duplicate.
            let joined = member.name == first.node.name ? first : try? await NodeClient.join(try SocketAddress(parsing: member.address), with: client)
            guard let peer = joined,
                  let worker = try? ScanSystem.resolve(id: ActorID(node: peer.node, name: ScanSystem.wellKnownName), using: client),
                  let schemas = try? await worker.kinds()
            else {
                unreachable.append(member.name)
                continue
            }
            for schema in schemas { nodesOf[schema, default: []].append(member.name) }
        }
        let rows = nodesOf.sorted { ($0.key.name, $0.key.version) < ($1.key.name, $1.key.version) }.map { schema, nodes in
            [schema.name, schema.version, schema.fingerprint, nodes.sorted().joined(separator: ", ")]
        }
        context.standardOutput(NodeClient.table(["KIND", "VERSION", "SCHEMA", "NODES"], rows))
        if !unreachable.isEmpty { context.standardError("could not ask \(unreachable.joined(separator: ", "))\n") }
        return unreachable.isEmpty ? 0 : 1
    }

    /// Why a run could not start.
    enum RunError: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case noInputs(source: String)

        var description: String {
            switch self {
            case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
            case .noInputs(let source): "\(source) holds no inputs (one JSON value per line)"
            }
        }
    }

    /// Runs one task per input on the members of the node at `target`'s cluster that run
    /// `kind` (at this program's version when `registry` holds it too: see
    /// ``KindPlacement``); prints outputs, failures and a summary; the exit status.
    static func run(
        kind: String, registry: TaskRegistry, inputs: [TaskInputLines.Line], at target: SocketAddress, settings: ClusterSettings,
        deadline: Double, retries: Int, share: JobShare? = nil, style: OutputStyle = OutputStyle(unordered: false, json: false), name: String = "run",
        context: CommandContext
    ) async throws -> Int32 {
        // A job may run for hours: the call's deadline is the job's, not a call's.
        let client = try NodeClient.makeClient(settings: settings, callTimeout: JobClient.jobCallTimeout)
        defer { client.shutdown() }
        let first = try await NodeClient.join(target, with: client)
        let cluster = ClusterClient(system: client, entry: first.node, registry: registry, callTimeout: settings.callTimeout)
        let workers = Mutex(0)
        let clock = RealClock()
        let start = clock.now
        // Outputs leave as soon as they may: as each task ends (unordered), or once every
        // task before it has ended (in order).
        let printer = Mutex((next: 0, waiting: [Int: String]()))
        let progress = SweepProgressLine(total: inputs.count, unit: "tasks", enabled: context.standardErrorIsTerminal, write: context.standardError)
        let report = try await cluster.run(
            kind: kind, schema: registry.schema(of: kind), inputs: inputs.map(\.json), deadline: deadline, retries: retries, share: share,
            progress: { progress.show($0, elapsed: (clock.now - start)) },
            onStart: { plan in
                context.standardError("job \(plan.job) accepted by \(plan.coordinator) at \(target); stop it with: spokes cancel \(plan.job) --to \(target)\n")
                workers.withLock { $0 = plan.nodes.count }
            },
            onOutcome: { outcome in
                let line = style.line(outcome, inputLine: inputs[outcome.task].number) + "\n"
                let ready = printer.withLock { printer -> String in
                    if style.unordered { return outcome.cancelled ? "" : line }
                    printer.waiting[outcome.task] = line
                    var text = ""
                    while let next = printer.waiting.removeValue(forKey: printer.next) {
                        text += next
                        printer.next += 1
                    }
                    return text
                }
                if !ready.isEmpty { context.standardOutput(ready) }
            },
            onReattaching: { lost in
                context.standardError(lost.lookingForTakeOver + "\n")
            })
        progress.finish()
        let outcomes = report.outcomes
        let seconds = (clock.now - start)
        let nodeCount = workers.withLock { $0 }
        // Tasks cancelled before they started have no outcome event: their lines, in order.
        let rest = printer.withLock { printer -> String in
            guard !style.unordered else { return "" }
            var text = ""
            for task in printer.next..<outcomes.count {
                text += printer.waiting[task] ?? (style.line(outcomes[task], inputLine: inputs[task].number) + "\n")
            }
            return text
        }
        if !rest.isEmpty { context.standardOutput(rest) }
        return summarize(
            outcomes, kind: kind, inputs: inputs, seconds: seconds, nodeCount: nodeCount, name: name, context: context,
            cancelled: Task.isCancelled)
    }

    /// Prints each failed task (with its input's line and every attempt's node and
    /// reason) and a summary on stderr; the exit status: 0 when every task succeeded, 1
    /// when one failed, 130 when the job was cancelled.
    static func summarize(
        _ outcomes: [JobRunner.Outcome], kind: String, inputs: [TaskInputLines.Line], seconds: Double, nodeCount: Int, name: String,
        context: CommandContext, cancelled jobCancelled: Bool
    ) -> Int32 {
        var perNode: [String: Int] = [:]
        for outcome in outcomes {
            if let node = outcome.node { perNode[node, default: 0] += 1 }
        }
        let failed = outcomes.filter { $0.output == nil && !$0.cancelled }
        for outcome in failed {
            let line = inputs[outcome.task].number
            let reasons = outcome.failures.map { "attempt \($0.attempt)\($0.node.isEmpty ? "" : " on \($0.node)"): \($0.reason)" }
            context.standardError("\(name): task \(outcome.task) (\(line == outcome.task + 1 ? "" : "line \(line), ")input \(inputs[outcome.task].json.prefix(80))) failed: \(reasons.joined(separator: "; "))\n")
        }
        let succeeded = outcomes.count { $0.output != nil }
        let cancelled = outcomes.count { $0.cancelled }
        let shares = perNode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        context.standardError("\(name): \(succeeded) of \(outcomes.count) tasks of \(kind) succeeded\(cancelled > 0 ? ", \(cancelled) cancelled," : "") in \(String(printf: "%.2f", seconds)) s on \(nodeCount) node\(nodeCount == 1 ? "" : "s") (\(shares.isEmpty ? "none" : shares)), \(JobRunner.retries(in: outcomes)) retries\n")
        if cancelled > 0 || jobCancelled { return 130 }
        return failed.isEmpty ? 0 : 1
    }

    /// `spokes result JOB` for a stored job of tasks: every output in input order (as
    /// `map` printed them; `--json`: as objects), then the failures and the summary.
    static func emitStored(_ report: TaskJobReport, json: Bool, context: CommandContext) -> Int32 {
        let style = OutputStyle(unordered: false, json: json)
        let inputs = report.inputs.enumerated().map { TaskInputLines.Line(number: $0.offset + 1, json: $0.element) }
        let outcomes = report.outcomes
        context.standardOutput(outcomes.map { style.line($0, inputLine: $0.task + 1) + "\n" }.joined())
        let nodes = Set(outcomes.compactMap(\.node)).count
        if let storeError = report.storeError { context.standardError("warning: the coordinator could not store job \(report.job): \(storeError)\n") }
        return summarize(
            outcomes, kind: report.kind, inputs: inputs, seconds: report.wallTime, nodeCount: nodes, name: report.job, context: context,
            cancelled: report.cancelled)
    }
}

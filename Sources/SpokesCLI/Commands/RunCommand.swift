import Foundation
import SpokesCluster
import SpokesConcurrency
import Synchronization

/// `spokes run KIND`: runs a task kind over JSON inputs on a cluster's workers, with this
/// client coordinating, and prints the outputs in input order.
///
/// The small path that works before jobs are replicated: nothing is stored, and the
/// client must stay until the end. `map` (issue 20, part 2) does the same as a job.
enum RunCommand {
    static let kind = Option.string("kind", "KIND", help: "The task kind to run, e.g. pi.sample (also the first argument).")
    static let inputs = Option.string("inputs", "FILE", default: "-",
                                      help: "JSON lines: one task's input per line (blank lines are skipped); - reads stdin.")

    static let spec = CommandSpec(
        name: "run",
        abstract: "Run tasks of a kind over JSON inputs (one per line) on a cluster; print their outputs in input order.",
        discussion: """
            Asks the node at --to (or the first found by discovery) for its members, sends \
            each task to a member's worker with a free slot, retries a failed task on another \
            member (up to --retries, each attempt within --deadline), and prints one JSON \
            output per line on stdout, in input order, null for a task that failed; the \
            failures, with each attempt's node and reason, and a summary go to stderr. Every \
            input is checked first (valid JSON, within limits.max_frame_bytes / 4, and, when \
            this program runs the kind too, its input type and validation): a bad line is named \
            and nothing runs. Exit status 0 when every task succeeded, 1 otherwise, 130 on \
            Ctrl-C. This client coordinates and nothing is stored; 'map' will run the same as \
            a job of the cluster.
            """,
        usage: ["run KIND [--inputs FILE.jsonl | -] [--to HOST:PORT] [--deadline S] [--retries N]"],
        options: [kind, inputs, NodeClient.to, JobOptions.deadline, JobOptions.retries] + ClusterOptions.connectionOptions,
        positional: kind)

    /// `run` for a tool whose own registry holds `kinds` too (to check inputs before sending).
    static func subcommand(kinds: [any TaskKind]) -> Subcommand {
        Subcommand(spec: spec) { arguments, context in
            guard let kind = try arguments.value(kind) else {
                throw UsageError("name the task kind to run, e.g. 'run pi.sample --inputs inputs.jsonl'")
            }
            let settings = try ClusterOptions.settings(arguments, environment: context.environment)
            let deadline = try arguments.value(JobOptions.deadline) ?? settings.taskDeadline
            let retries = try arguments.value(JobOptions.retries) ?? settings.taskRetries
            let path = try arguments.value(inputs)
            let source = path == "-" ? "stdin" : path
            let text = try await runBlocking("spokes.run.inputs") { () throws -> String in
                if path == "-" { return String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) }
                do {
                    return String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
                } catch {
                    throw RunError.unreadable(path: path, reason: (error as NSError).localizedDescription)
                }
            }
            let registry = SpokesTool.registry(kinds: kinds)
            let lines = try TaskInputLines(text, source: source, kind: kind, registry: registry, settings: settings).lines
            guard !lines.isEmpty else { throw RunError.noInputs(source: source) }
            let target = try await NodeClient.target(arguments, settings: settings, timeout: 3)
            let run = Task {
                try await RunCommand.run(
                    kind: kind, registry: registry, inputs: lines, at: target, settings: settings,
                    deadline: deadline, retries: retries, context: context)
            }
            let interrupt = InterruptHandler(signals: [SIGINT, SIGTERM]) { run.cancel() }
            defer { interrupt.stop() }
            return try await run.value
        }
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
        deadline: Double, retries: Int, context: CommandContext
    ) async throws -> Int32 {
        // A queued attempt may take twice the deadline; the call must outlive it.
        let client = try NodeClient.makeClient(settings: settings, callTimeout: 2 * deadline + 30)
        defer { client.shutdown() }
        let first = try await NodeClient.join(target, with: client)
        let cluster = ClusterClient(system: client, entry: first.node, registry: registry, callTimeout: settings.callTimeout)
        let workers = Mutex(0)
        let clock = ContinuousClock()
        let start = clock.now
        let outcomes = try await cluster.run(
            kind: kind, schema: registry.schema(of: kind), inputs: inputs.map(\.json), deadline: deadline, retries: retries,
            onStart: { plan in
                for name in plan.unreachable { context.standardError("run: cannot reach member \(name); running without it\n") }
                workers.withLock { $0 = plan.placement.nodes.count }
            })
        let seconds = (clock.now - start).seconds
        let nodeCount = workers.withLock { $0 }

        var output = ""
        var perNode: [String: Int] = [:]
        for outcome in outcomes {
            output += (outcome.output ?? "null") + "\n"
            if let node = outcome.node { perNode[node, default: 0] += 1 }
        }
        context.standardOutput(output)
        let failed = outcomes.filter { $0.output == nil && !$0.cancelled }
        for outcome in failed {
            let line = inputs[outcome.task].number
            let reasons = outcome.failures.map { "attempt \($0.attempt)\($0.node.isEmpty ? "" : " on \($0.node)"): \($0.reason)" }
            context.standardError("run: task \(outcome.task) (\(line == outcome.task + 1 ? "" : "line \(line), ")input \(inputs[outcome.task].json.prefix(80))) failed: \(reasons.joined(separator: "; "))\n")
        }
        let succeeded = outcomes.count { $0.output != nil }
        let cancelled = outcomes.count { $0.cancelled }
        let shares = perNode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        context.standardError("run: \(succeeded) of \(outcomes.count) tasks of \(kind) succeeded\(cancelled > 0 ? ", \(cancelled) cancelled," : "") in \(String(format: "%.2f", seconds)) s on \(nodeCount) node\(nodeCount == 1 ? "" : "s") (\(shares.isEmpty ? "none" : shares)), \(JobRunner.retries(in: outcomes)) retries\n")
        if cancelled > 0 || Task.isCancelled { return 130 }
        return failed.isEmpty ? 0 : 1
    }
}

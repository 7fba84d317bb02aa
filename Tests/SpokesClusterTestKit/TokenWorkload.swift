import FoundationEssentials
import SpokesCluster
import SpokesJobs
import SpokesReplication
import Synchronization

/// A workload for the job layer's tests that keeps shared state as the bike job does
/// (Docs/one-job-layer.md): tokens in bins that must be conserved, and a count of which
/// tasks were counted, each at most once. Its job's parameters are the bins at the start
/// (`[5, 0]`); each task's accepted output moves one token from bin 0 to bin 1 and counts
/// the task, so at the end of a job that ran every task exactly once, bin 1 holds one
/// token per task, whichever coordinators ran them.
public enum TokenWorkload {
    public static let name = "tokens"

    /// The state: the bins, and the tasks counted.
    public struct State: JobWorkloadState, Codable, Equatable {
        public var bins: [Int]
        public var counted: Set<Int> = []

        public init(bins: [Int]) {
            self.bins = bins
        }

        /// One change: a token from one bin to another, counting `task` when given.
        public struct Move: Codable, Equatable, Sendable {
            public var from: Int
            public var to: Int
            public var task: Int?

            public init(from: Int, to: Int, task: Int? = nil) {
                self.from = from
                self.to = to
                self.task = task
            }
        }

        /// Applies `move`, or says why not (an empty bin, a bin out of range, a task counted before).
        public mutating func apply(_ move: Move) -> String? {
            guard bins.indices.contains(move.from), bins.indices.contains(move.to) else { return "no bin \(move.from) or \(move.to)" }
            guard bins[move.from] > 0 else { return "no token in bin \(move.from)" }
            if let task = move.task {
                guard counted.insert(task).inserted else { return "task \(task) was counted before" }
            }
            bins[move.from] -= 1
            bins[move.to] += 1
            return nil
        }

        public mutating func apply(events: ArraySlice<UInt8>) -> String? {
            guard let moves = try? JSONDecoder().decode([Move].self, from: Data(events)) else { return "not a list of moves" }
            var changed = self
            for move in moves {
                if let refusal = changed.apply(move) { return refusal }
            }
            self = changed
            return nil
        }

        public func snapshot() -> String { MachineText.canonical(self) }
    }

    /// The workload as a node registers it.
    public static var workloads: JobWorkloads {
        var workloads = JobWorkloads()
        workloads.register(name, .init(
            start: { parameters in State(bins: try MachineText.decode([Int].self, from: parameters)) },
            restore: { try MachineText.decode(State.self, from: $0) },
            run: { context in
                guard let state = context.state as? State else { throw RunError() }
                return Run(spec: context.spec, state: state)
            }))
        return workloads
    }

    struct RunError: Error {}

    /// One run: counts each task's first accepted output, recording every move as an event.
    public final class Run: JobWorkloadRun {
        private struct Ledger {
            var state: State
            var events: [State.Move] = []
            var closed = false
        }

        private let spec: TaskJobSpec
        private let ledger: Mutex<Ledger>
        private let doorbell: AsyncStream<Void>.Continuation
        public let newEvents: AsyncStream<Void>

        init(spec: TaskJobSpec, state: State) {
            self.spec = spec
            ledger = Mutex(Ledger(state: state))
            (newEvents, doorbell) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        }

        public var cost: TaskCost? { nil }

        public func input(task: Int, attempt: Int) throws -> String { spec.inputs[task] }

        public func accept(task: Int, attempt: Int, output: String) -> Bool {
            let made = ledger.withLock { ledger -> Bool in
                guard !ledger.closed, !ledger.state.counted.contains(task) else { return false }
                let move = State.Move(from: 0, to: 1, task: task)
                guard ledger.state.apply(move) == nil else { return false }
                ledger.events.append(move)
                return true
            }
            if made { doorbell.yield() }
            return true
        }

        public func keptOutput(task: Int, output: String) -> String { output }

        public func ended(task: Int, outcome: JobRunner.Outcome) {}

        public func takeEvents() -> String? {
            let events = ledger.withLock { ledger in
                defer { ledger.events = [] }
                return ledger.events
            }
            return events.isEmpty ? nil : MachineText.encode(events)
        }

        public func close() {
            ledger.withLock { $0.closed = true }
            doorbell.finish()
        }

        public func report(ends: [Int: TaskJobReport.TaskEnd], cancelReason: String?) -> String? {
            ledger.withLock { $0.state.snapshot() }
        }
    }
}

import SpokesCluster
import SpokesConcurrency

/// `bikes.sweep-run`: one run of a sweep, a whole simulation on the node that runs it.
///
/// The run is `Simulation` with `workers: 1`, exactly as `spokes simulate --workers 1`
/// runs it, so its figures are the same on every node and on every attempt: only
/// `wallTime` differs.
///
/// Cost: **cpu**. A run computes from start to end (at the default time scale 0 it never
/// sleeps), so it should hold one of a node's cpu slots, whose default is the core count
/// (issue 17 §1). A run at a time scale above 0 sleeps per move, one user at a time, for
/// users x moves x move time x scale seconds in all; it still holds its slot.
///
/// The input is small unless the network came from a file (see ``SweepNetwork``).
/// Anything a peer sends is checked first (``SweepNetwork/resolve()``,
/// ``SweepRun/validate(for:)``) and refused as `TaskError.invalidInput`.
public struct SweepRunTask: TaskKind {
    public static let name = "bikes.sweep-run"

    public struct Input: Sendable, Hashable, Codable {
        public var network: SweepNetwork
        public var run: SweepRun
        /// Whether the figures carry the per-user results.
        public var includeResults: Bool

        public init(network: SweepNetwork, run: SweepRun, includeResults: Bool = false) {
            self.network = network
            self.run = run
            self.includeResults = includeResults
        }
    }

    public init() {}

    public func run(_ input: Input, context: TaskContext) async throws -> SweepRunFigures {
        try await run(input, clock: context.system.runtime.clock)
    }

    /// Runs `input` in this process, its moves timed on `clock` (its node's runtime's in
    /// a task). Throws `TaskError.invalidInput` for a network or parameters out of
    /// limits, and `CancellationError` when cancelled before the end.
    public func run(_ input: Input, clock: any RuntimeClock = RealClock()) async throws -> SweepRunFigures {
        let simulation: Simulation
        do {
            let network = try input.network.resolve()
            try input.run.validate(for: network)
            simulation = try Simulation(network: network, options: input.run.options)
        } catch {
            throw TaskError.invalidInput(kind: Self.name, reason: "\(error)")
        }
        let report = await simulation.run(clock: clock)
        if report.cancelled { throw CancellationError() }
        return SweepRunFigures(report, includingResults: input.includeResults)
    }
}

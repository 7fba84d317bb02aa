import SpokesConcurrency
import SpokesCluster

/// `bikes.user`: one user's ride, run on any node, against the coordinator's stations.
///
/// The input is small whatever the network's size: stations are found by their
/// well-known names on the coordinator, and the goal by its index.
public struct BikeUserTask: TaskKind {
    public static let name = "bikes.user"

    public struct Input: Sendable, Codable, Hashable {
        public var job: String
        public var coordinator: NodeID
        /// The coordinator's epoch, which names its stations (``JobStation/name(job:epoch:index:)``).
        public var epoch: Int
        public var stationCount: Int
        public var goalIndex: Int?
        public var user: Int
        public var paths: Int
        public var seed: UInt64
        public var timing: MoveTiming
        public var maxMoves: Int
        /// The attempt's number in the coordinator's ledger, which its moves carry (above
        /// the scheduler's count when the job was taken over: see ``BikeJob``).
        public var attempt: Int
        /// Where this attempt resumes (from the coordinator's ledger).
        public var progress: UserProgress
        /// Sent only by a coordinator of release 0.2 or earlier running a job with
        /// sharded stations (removed since: BENCHMARKS.md measured them slower); such a
        /// task is refused, never run against stations that are not there.
        public var shardHosts: [NodeID]? = nil
        /// True when the coordinator hosts the job's ``JobStationDesk``, which takes many
        /// moves in one call: this node's users then send their moves through one
        /// ``MoveBatcher``. Nil from a coordinator of an earlier release, which has no
        /// desk: each move is then a call to its station (as a worker of such a release,
        /// which ignores the field, always calls).
        public var batchesMoves: Bool? = nil
    }

    /// This node's batchers of moves, one per job its users move in.
    private let batchers = MoveBatchers()

    public init() {}

    /// Waiting when the user's moves sleep (time scale above 0): it spends nearly all its
    /// time asleep or in remote calls to the stations. At time scale 0 it computes.
    public func cost(of input: Input) -> TaskCost {
        input.timing.timeScale > 0 ? .waiting : .cpu
    }

    public func run(_ input: Input, context: TaskContext) async throws -> SimulationResult {
        try input.checkRanges()
        let user = BikeUser(id: input.user, seed: input.seed, timing: input.timing, maxMoves: input.maxMoves)
        let goal = input.goalIndex.map(String.init)
        if input.shardHosts != nil {
            throw SimulationError.invalidSetting(
                name: "shardHosts", value: "\(input.shardHosts?.count ?? 0) shards", expected: "none: sharded stations were removed in release 0.3")
        }
        let clock = context.system.runtime.clock
        func ride<Dock: BikeDock>(_ docks: [Dock]) async throws(Dock.Failure) -> SimulationResult {
            // On the schedule of a user that started as its job did, or as its place
            // freed: however long its coordinator took to send it (``TaskContext/readySince``).
            try await user.runSimulation(
                in: docks, paths: input.paths, goal: goal, resumingFrom: input.progress, attempt: input.attempt, clock: clock,
                scheduledFrom: context.readySince)
        }
        let result: SimulationResult
        if input.batchesMoves == true, input.coordinator != context.system.node {
            let desk = ActorID(node: input.coordinator, name: JobStationDesk.name(job: input.job, epoch: input.epoch))
            result = try await batchers.with(desk: desk, on: context.system) { batcher in
                try await ride((0..<input.stationCount).map { BatchedStationDock(index: $0, batcher: batcher) })
            }
        } else {
            // On the coordinator itself the stations are local actors: no call to batch.
            let finder = JobStationFinder(system: context.system, coordinator: input.coordinator, job: input.job, epoch: input.epoch)
            result = try await ride((0..<input.stationCount).map { StationDock(index: $0, finder: finder) })
        }
        if result.ending == .cancelled { throw CancellationError() }
        return result
    }
}

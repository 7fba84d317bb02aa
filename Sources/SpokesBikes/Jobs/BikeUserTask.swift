import SpokesConcurrency
import SpokesCluster

/// `bikes.user`: one user's ride, run on any node, against the coordinator's stations
/// (or, for a sharded job, its shards' hosts).
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
        /// A sharded job's shard hosts, by shard (station `i` is shard `i % count`'s);
        /// nil when the coordinator hosts every station.
        public var shardHosts: [NodeID]? = nil
        /// A sharded job's user's last move before this attempt, which its first move
        /// follows (nil: none, or committed).
        public var after: StationShardBook.Position? = nil
    }

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
        if let hosts = input.shardHosts {
            let shards = try hosts.enumerated().map { shard, host in
                try JobStationShard.at(host, job: input.job, epoch: input.epoch, shard: shard, using: context.system)
            }
            let trail = RemoteShardDock.Trail(progress: input.progress, last: input.after, goal: goal)
            let docks = (0..<input.stationCount).map { index in
                RemoteShardDock(stationID: "\(index)", index: index, shard: shards[StationShardBook.shard(ofStation: index, shardCount: shards.count)], trail: trail)
            }
            let result = try await user.runSimulation(
                in: docks, paths: input.paths, goal: goal, resumingFrom: input.progress, attempt: input.attempt, clock: context.system.runtime.clock)
            if result.ending == .cancelled { throw CancellationError() }
            return result
        }
        let docks = try (0..<input.stationCount).map { index in
            RemoteStationDock(
                stationID: "\(index)",
                station: try JobStation.resolve(
                    id: ActorID(node: input.coordinator, name: JobStation.name(job: input.job, epoch: input.epoch, index: index)),
                    using: context.system))
        }
        let result = try await user.runSimulation(
            in: docks, paths: input.paths, goal: goal,
            resumingFrom: input.progress, attempt: input.attempt, clock: context.system.runtime.clock)
        if result.ending == .cancelled { throw CancellationError() }
        return result
    }
}

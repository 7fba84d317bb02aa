import FoundationEssentials
import SpokesCluster

/// Everything a finished (or cancelled) simulation has to say, in the shape of
/// `spokes simulate --json`.
///
/// The keys `users`, `completedUsers`, `totalPaths`, `totalWaitingTime`, `bikesBefore`,
/// `bikesAfter`, `stations` and `results` are a contract: later versions add keys but
/// never change what these mean.
public struct SimulationReport: Sendable, Hashable, Codable {
    /// A station's counts at the end of the run.
    public struct StationState: Sendable, Hashable, Codable {
        public var id: String
        public var name: String
        public var latitude: Double
        public var longitude: Double
        public var freeBikes: Int
        public var emptySlots: Int

        public init(_ station: Station) {
            id = station.id
            name = station.name
            latitude = station.latitude
            longitude = station.longitude
            freeBikes = station.freeBikes
            emptySlots = station.emptySlots
        }
    }

    /// Which network was simulated.
    public struct NetworkSummary: Sendable, Hashable, Codable {
        public var id: String
        public var name: String
        public var stations: Int
        /// Stations whose source data had `null` counts, taken as 0.
        public var stationsWithNullCounts: Int
    }

    public var network: NetworkSummary
    public var users: Int
    public var pathsPerUser: Int
    public var goal: String?
    public var seed: UInt64
    public var moveTime: Double
    public var timeScale: Double
    public var workers: Int?

    public var completedUsers: Int
    public var usersReachedGoal: Int
    public var usersGaveUp: Int
    public var cancelled: Bool
    public var totalPaths: Int
    /// Nominal seconds, summed over users.
    public var totalWaitingTime: Double
    public var totalMoves: Int
    public var failedTakes: Int
    public var failedLeaves: Int
    /// Nominal seconds the longest user's run took (moves x move time).
    public var nominalDuration: Double
    /// Real seconds the run took.
    public var wallTime: Double
    /// When the run ended, ISO 8601 in UTC (`2026-03-04T22:58:46Z`); absent from reports
    /// stored by versions before it.
    public var finishedAt: String?

    public var bikesBefore: Int
    public var bikesAfter: Int
    public var conservation: ConservationCheck
    /// Every station at the end of the run.
    public var stations: [StationState]
    /// Every station as the run found it, in the same order as ``stations`` (absent from
    /// reports stored by versions before the dashboard).
    public var stationsBefore: [StationState]?
    /// One per user, ordered by user number.
    public var results: [SimulationResult]

    // Cluster jobs only (absent from `spokes simulate`'s report).

    /// A user whose every attempt failed, with each attempt's reason.
    public struct FailedUser: Sendable, Hashable, Codable {
        public var user: Int
        public var reasons: [String]
    }

    /// The job's id.
    public var job: String?
    /// Attempts started again after a failed one, over all users (a cancelled attempt
    /// is not a retry).
    public var retries: Int?
    public var failedUsers: [FailedUser]?
    /// Users that completed after one or more failed attempts, with each failed
    /// attempt's reason (the users of ``failedUsers`` are not repeated here).
    public var retriedUsers: [FailedUser]?
    /// Node name -> users whose result it produced.
    public var tasksPerNode: [String: Int]?
    /// The epoch a replicated job ended in: 0, or one more for each time it went on after
    /// losing its coordinator (nil for a job on one node).
    public var epoch: Int?
    /// Users stopped because the job was cancelled, with each attempt's reason (not
    /// counted in ``failedUsers``).
    public var cancelledUsers: [FailedUser]?
    /// Who cancelled the job, as a sentence (`cancelled by the submitter`); nil when it was not.
    public var cancelReason: String?
    /// Whether the coordinator stored the report in its job store (nil: not a cluster job).
    public var stored: Bool?
    /// Why the report could not be stored, in words (`cannot write ...: no space left on device`).
    public var storeError: String?

    /// Builds the report from the network as it was, the stations as they are, and the
    /// users' results; it finished at `finished` (a node's: its runtime's clock).
    public init(
        network: Network, finalStations: [Station], options: SimulationOptions,
        results: [SimulationResult], wallTime: Double, cancelled: Bool, finished: Date
    ) {
        self.network = NetworkSummary(
            id: network.id, name: network.name, stations: network.stations.count,
            stationsWithNullCounts: network.stationsWithNullCounts)
        users = options.users
        pathsPerUser = options.paths
        goal = options.goal
        seed = options.seed
        moveTime = options.timing.moveTime
        timeScale = options.timing.timeScale
        workers = options.workers
        let sorted = results.sorted { $0.user < $1.user }
        self.results = sorted
        completedUsers = sorted.count { $0.completed }
        usersReachedGoal = sorted.count { $0.ending == .reachedGoal }
        usersGaveUp = sorted.count { $0.ending == .gaveUp }
        self.cancelled = cancelled
        totalPaths = sorted.reduce(0) { $0 + $1.paths }
        totalMoves = sorted.reduce(0) { $0 + $1.moves }
        failedTakes = sorted.reduce(0) { $0 + $1.failedTakes }
        failedLeaves = sorted.reduce(0) { $0 + $1.failedLeaves }
        totalWaitingTime = Double(failedTakes + failedLeaves) * options.timing.moveTime
        nominalDuration = Double(sorted.map(\.moves).max() ?? 0) * options.timing.moveTime
        self.wallTime = wallTime
        finishedAt = UTCTime.iso8601(finished)
        conservation = ConservationCheck(
            before: network.stations, after: finalStations, bikesInUse: sorted.count { $0.holdsBike })
        bikesBefore = conservation.bikesBefore
        bikesAfter = conservation.bikesAfter
        stations = finalStations.map(StationState.init)
        stationsBefore = network.stations.map(StationState.init)
    }
}

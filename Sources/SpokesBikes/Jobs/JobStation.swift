import Distributed
import SpokesCluster

/// A station of a bike job, hosted by the coordinator as a distributed actor, so user
/// tasks on any node take and leave bikes there. Every operation goes through the job's
/// ``JobLedger``: idempotent per (user, attempt, step), and stale attempts are refused.
public distributed actor JobStation {
    public typealias ActorSystem = ClusterSystem

    private var station: Station
    private let index: Int
    private let ledger: JobLedger
    private let goalIndex: Int?

    /// The well-known name of station `index` of `job`, so workers can address it.
    public static func name(job: String, index: Int) -> String { "\(job).station.\(index)" }

    public init(actorSystem: ClusterSystem, station: Station, index: Int, ledger: JobLedger, goalIndex: Int?) {
        self.actorSystem = actorSystem
        self.station = station
        self.index = index
        self.ledger = ledger
        self.goalIndex = goalIndex
    }

    public distributed func takeBike(_ move: Move) throws -> Bool {
        try ledger.perform(move, station: "\(index)", goal: goalIndex.map(String.init)) { station.takeBike() }
    }

    public distributed func leaveBike(_ move: Move) throws -> Bool {
        try ledger.perform(move, station: "\(index)", goal: goalIndex.map(String.init)) { station.leaveBike() }
    }

    /// The station's counts now.
    public distributed func snapshot() -> Station {
        station
    }
}

/// A worker's handle on a remote ``JobStation``, as the ``BikeDock`` the shared ride
/// rules drive. Stations are told apart by their index in the network.
struct RemoteStationDock: BikeDock {
    typealias Failure = any Error
    let stationID: String
    let station: JobStation

    func takeBike(_ move: Move) async throws -> Bool { try await station.takeBike(move) }
    func leaveBike(_ move: Move) async throws -> Bool { try await station.leaveBike(move) }
}

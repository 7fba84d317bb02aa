import Distributed
import SpokesCluster

/// A station of a bike job, hosted by the coordinator as a distributed actor, so user
/// tasks on any node take and leave bikes there. The counts live in the job's
/// ``JobLedger``, and every operation goes through it: idempotent per (user, attempt,
/// step), and stale attempts are refused. Workers of this release send their moves in
/// batches to the job's ``JobStationDesk`` instead; a station's own calls serve users on
/// the coordinator itself and workers of earlier releases.
public distributed actor JobStation {
    public typealias ActorSystem = ClusterSystem

    private let index: Int
    private let ledger: JobLedger

    /// The well-known name of station `index` of `job` as run by coordinator `epoch` (0
    /// for the job's first coordinator, one more for each take-over), so workers can
    /// address it. A worker of an older epoch
    /// finds no station under the new names: its moves cannot reach a new coordinator.
    public static func name(job: String, epoch: Int = 0, index: Int) -> String {
        epoch == 0 ? "\(job).station.\(index)" : "\(job).e\(epoch).station.\(index)"
    }

    /// `index` is one of the ledger's stations.
    public init(actorSystem: ClusterSystem, index: Int, ledger: JobLedger) {
        self.actorSystem = actorSystem
        self.index = index
        self.ledger = ledger
    }

    public distributed func takeBike(_ move: Move) throws -> Bool {
        try ledger.move(move, station: index, take: true)
    }

    public distributed func leaveBike(_ move: Move) throws -> Bool {
        try ledger.move(move, station: index, take: false)
    }

    /// The station's counts now.
    public distributed func snapshot() -> Station {
        ledger.station(index)
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

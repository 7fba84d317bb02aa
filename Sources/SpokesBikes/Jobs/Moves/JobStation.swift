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

/// A user's handle on a ``JobStation`` (on its own node when the user runs on the job's
/// coordinator; on the coordinator's for a worker of a coordinator without a desk), as
/// the ``BikeDock`` the shared ride rules drive. Stations are told apart by their index in
/// the network. The station is found when a move reaches it: a user visits a few of the
/// network's stations, and every user found every one at its start (318 for Milano, each
/// a name made and looked up under the actor registry's lock).
struct StationDock: BikeDock {
    typealias Failure = any Error
    let index: Int
    let finder: JobStationFinder

    var stationID: String { "\(index)" }

    func takeBike(_ move: Move) async throws -> Bool { try await finder.station(index).takeBike(move) }
    func leaveBike(_ move: Move) async throws -> Bool { try await finder.station(index).leaveBike(move) }
}

/// Where a job's stations are found: on its coordinator, under the names of the
/// coordinator's epoch (``JobStation/name(job:epoch:index:)``). One per user's run.
final class JobStationFinder: Sendable {
    let system: ClusterSystem
    let coordinator: NodeID
    let job: String
    let epoch: Int

    init(system: ClusterSystem, coordinator: NodeID, job: String, epoch: Int) {
        self.system = system
        self.coordinator = coordinator
        self.job = job
        self.epoch = epoch
    }

    /// Station `index`; throws when it is local and this node hosts none under that name
    /// (the run ended, or another epoch's coordinator took the job over). A remote
    /// station that is not there answers its move with an error.
    func station(_ index: Int) throws -> JobStation {
        try JobStation.resolve(id: ActorID(node: coordinator, name: JobStation.name(job: job, epoch: epoch, index: index)), using: system)
    }
}

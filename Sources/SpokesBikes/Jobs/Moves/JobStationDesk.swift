import Distributed
import SpokesCluster

/// The coordinator's desk for all the stations of one bike job: it takes many users'
/// moves in one call and answers them all in one reply, so a worker node sends one call
/// per batch instead of one per move (``MoveBatcher``).
///
/// Each move goes through the job's ``JobLedger`` exactly as a call to its
/// ``JobStation`` would: in the batch's order, idempotent per (user, attempt, step),
/// a fenced attempt's move refused. A refusal answers that move alone; the others of
/// the batch are applied. Workers use the desk only when the coordinator's task input
/// says it has one (``BikeUserTask/Input/batchesMoves``), so a coordinator of an older
/// release, which has none, still gets one call per move.
public distributed actor JobStationDesk {
    public typealias ActorSystem = ClusterSystem

    private let ledger: JobLedger

    /// Moves in one call, at most: a larger batch from a peer is refused whole.
    public static let movesPerCall = 4096

    /// A batch larger than ``JobStationDesk/movesPerCall``.
    public struct TooManyMoves: Error, Sendable, CustomStringConvertible {
        public var count: Int
        public var description: String {
            "a batch of \(count) moves is more than one call may carry (\(JobStationDesk.movesPerCall))"
        }
    }

    /// The well-known name of `job`'s desk as run by coordinator `epoch`, beside its
    /// stations' (``JobStation/name(job:epoch:index:)``): a worker of an older epoch finds
    /// no desk under a new coordinator's name.
    public static func name(job: String, epoch: Int = 0) -> String {
        epoch == 0 ? "\(job).stations" : "\(job).e\(epoch).stations"
    }

    public init(actorSystem: ClusterSystem, ledger: JobLedger) {
        self.actorSystem = actorSystem
        self.ledger = ledger
    }

    /// Applies `moves` in order and returns each one's outcome, in the same order.
    public distributed func apply(_ moves: [StationMove]) throws -> [StationMove.Outcome] {
        guard moves.count <= Self.movesPerCall else { throw TooManyMoves(count: moves.count) }
        return ledger.apply(moves)
    }
}

/// One move of a bike job's user at one of the job's stations, as a batch carries it to
/// the coordinator's ``JobStationDesk``: which station, take or leave, and the move
/// (user, attempt, step) that makes it idempotent and fenced.
public struct StationMove: Sendable, Hashable, Codable {
    /// The station's index in the job's network.
    public var station: Int
    /// True to take a bike, false to leave one.
    public var take: Bool
    public var move: Move

    public init(station: Int, take: Bool, move: Move) {
        self.station = station
        self.take = take
        self.move = move
    }

    /// What became of one move of a batch: the station's answer (did the user get a bike,
    /// or a slot), or the ledger's refusal, as a call of its own would have thrown it.
    public enum Outcome: Sendable, Hashable, Codable {
        case done(Bool)
        case refused(JobLedger.Refusal)
    }
}

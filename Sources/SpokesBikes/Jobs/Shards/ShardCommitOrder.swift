/// The rule that keeps a sharded job's committed state consistent. A shard commits an
/// event only once the move it depends on (``StationShardBook/ShardMove/after``, the
/// user's previous move, on this shard or another) is committed, and only if its station
/// stays in range: whichever of the station's older uncommitted events commit later, in
/// the order they were made, its count never goes below zero or above its capacity.
///
/// Replicas apply each event's recorded outcome (a take that got a bike takes one), so:
/// - **Bikes are conserved in every cut.** A committed move's predecessor is committed, on
///   whichever shard it was, so each user's committed moves are a prefix of its moves,
///   and each committed take or leave moves a bike between a station and that user.
/// - **Every cut is a world that can go on.** No station is ever below zero or above its
///   capacity, and every user's progress is one it had.
/// - **It never deadlocks.** Invariant: a station's uncommitted events, applied in the
///   order they were made to its committed count, stay in range. It holds when the
///   host makes an event (the host's count is the committed count plus every uncommitted
///   event, and the host kept it in range), when the oldest uncommitted event of a station
///   commits (the same sums), and when a later one does (this rule checks exactly that).
///   So the oldest uncommitted event of all shards (by real time), whose predecessor was
///   made before it, can always commit.
///
/// The moves a shard's host made and did not commit before it died (not always a tail:
/// later moves may have committed around them) can only be followed by uncommitted moves,
/// which are lost with them when the job restarts from the cut.
///
/// Events of different users need no order, nor do a station's events while it has room,
/// so a shard commits every event this allows, not only a prefix of its log. (The first
/// version committed a prefix, and a later one each station's events in the order made:
/// at time scale 0 either linked every user's moves into one chain through the stations,
/// one commit round per link, and a sharded job committed a tenth, then a quarter, of the
/// moves one coordinator did.)
public enum ShardCommitOrder {
    /// A shard's uncommitted event as the rule sees it.
    public struct Pending: Sendable, Equatable {
        public var seq: Int
        public var station: Int
        /// Bikes it moved into its station: -1 for a take that got one, +1 for a leave
        /// that found a slot, 0 for a move that failed.
        public var delta: Int
        public var after: StationShardBook.Position?

        public init(seq: Int, station: Int, delta: Int, after: StationShardBook.Position?) {
            self.seq = seq
            self.station = station
            self.delta = delta
            self.after = after
        }
    }

    /// A station's room while the rule scans its events: its count with the taken events,
    /// and the lowest and highest sums of the held-back ones' deltas, in order (0 included).
    private struct Room {
        var count: Int
        let capacity: Int
        var held = 0
        var low = 0
        var high = 0

        func fits(_ delta: Int) -> Bool { delta == 0 || (count + delta + low >= 0 && count + delta + high <= capacity) }

        mutating func hold(_ delta: Int) {
            held += delta
            low = min(low, held)
            high = max(high, held)
        }
    }

    /// The indices of the events of `pending` (a shard's uncommitted events in the order it
    /// made them) that may be committed now, in order and at most `limit` of them, and the
    /// position the oldest one held back by another shard waits for, if any.
    ///
    /// `stations` are the shard's committed counts; `own` is what this shard committed;
    /// `known` what each other shard is known to have committed. An event whose dependency
    /// is of another epoch than `epoch` on another shard can never be met (its move was
    /// lost at a take-over): it waits for it, and its shard's run stops. On this shard, a
    /// dependency of an older epoch was committed or its user was fenced past it, so it
    /// counts as met.
    public static func committable(
        _ pending: [Pending], shard: Int, epoch: Int, stations: [Int: Station], own: ShardCommits, known: [Int: ShardCommits],
        limit: Int = .max
    ) -> (indices: [Int], waitsFor: StationShardBook.Position?) {
        var taken: [Int] = []
        var takenSeqs = Set<Int>()
        var rooms: [Int: Room] = [:]
        var waitsFor: StationShardBook.Position?
        for (index, event) in pending.enumerated() {
            guard taken.count < limit else { break }
            var met = true
            if let dependency = event.after {
                if dependency.shard == shard {
                    met = dependency.epoch != epoch || own.contains(dependency.seq) || takenSeqs.contains(dependency.seq)
                } else {
                    met = dependency.epoch == epoch && known[dependency.shard]?.contains(dependency.seq) == true
                    if !met, waitsFor == nil { waitsFor = dependency }
                }
            }
            let station = stations[event.station]
            var room = rooms[event.station] ?? Room(count: station?.freeBikes ?? 0, capacity: station?.capacity ?? 0)
            if met, room.fits(event.delta) {
                taken.append(index)
                takenSeqs.insert(event.seq)
                room.count += event.delta
            } else {
                room.hold(event.delta)
            }
            rooms[event.station] = room
        }
        return (taken, waitsFor)
    }
}

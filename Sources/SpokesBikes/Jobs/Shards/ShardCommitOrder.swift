/// The rule that keeps a sharded job's committed state consistent: a shard commits its
/// events in the order it made them, and an event only once the move it depends on
/// (``StationShardBook/ShardMove/after``, on another shard) is committed there.
///
/// So the shards' committed states together are a consistent cut: a committed move's
/// predecessor is committed, on whichever shard it was. A lost tail (a shard's host died
/// before committing it) can only be followed by uncommitted moves, which are lost with
/// it when the job restarts from the cut.
///
/// It never deadlocks: a shard commits the longest prefix whose dependencies are met
/// now, never waiting with a committable event held back behind a blocked one; and the
/// oldest uncommitted event of all shards (by real time) always has its dependency
/// committed, since that dependency was made before it.
public enum ShardCommitOrder {
    /// How many of `pending` (a shard's uncommitted events in order, each with the
    /// position it depends on) may be committed now, given `committed` (how many events of
    /// each shard are known to be committed, by shard; this shard's own events commit in
    /// order and need no entry), and the position the next one waits for, if any.
    /// An event whose dependency is of another epoch than `epoch` can never be met (its
    /// move was lost at a take-over): it waits for it, and its shard's run stops.
    public static func committable(
        _ pending: [StationShardBook.Position?], shard: Int, epoch: Int, committed: [Int: Int]
    ) -> (count: Int, waitsFor: StationShardBook.Position?) {
        for (index, dependency) in pending.enumerated() {
            guard let dependency, dependency.shard != shard else { continue }
            if dependency.epoch != epoch || (committed[dependency.shard] ?? 0) < dependency.seq {
                return (index, dependency)
            }
        }
        return (pending.count, nil)
    }
}

import SpokesCluster

/// How large a bike job a node accepts: the bike workload's own settings
/// (`limits.max_users`, `limits.max_paths`, `limits.max_stations` in cluster.yaml, the
/// `SPOKES_LIMITS_*` variables), declared to the cluster's settings by the program
/// (``declare()``); a job over one is refused naming it, and counted as `job_too_large`.
public enum BikeLimits {
    public static let users = Setting.workloadInteger("limits.max_users", default: 20_000, in: 1...100_000_000,
                                                      doc: "most users in a job submitted to this node")
    public static let paths = Setting.workloadInteger("limits.max_paths", default: 1_000, in: 1...100_000_000,
                                                      doc: "most paths per user in a job submitted to this node")
    public static let stations = Setting.workloadInteger("limits.max_stations", default: 5_000, in: 1...100_000_000,
                                                         doc: "most stations in a submitted job's network")

    /// The three, in `cluster.yaml` order.
    public static let settings = [users, paths, stations]

    /// Makes the bike workload's settings (these limits and ``BikeShardSettings``) known
    /// to settings files, variables and flags (once, before any settings are loaded;
    /// again changes nothing).
    public static func declare() {
        ClusterSettings.declare(settings + BikeShardSettings.settings)
    }
}

/// Sharded stations, the bike workload's own settings (the cluster knows nothing of them).
public enum BikeShardSettings {
    /// Station shards of a replicated real-time bike job: its stations are split over this
    /// many alive members (at most), each hosting one shard and answering its moves, so no
    /// one node answers every move. 1 (the default): the coordinator hosts every station;
    /// on the machines we measured, sharding cost more than it spread (BENCHMARKS.md).
    public static let shards = Setting.workloadInteger("bikes.shards", default: 1, in: 1...16,
        doc: "nodes a replicated real-time bike job's stations are spread over, a shard each; 1: all on its coordinator")
    /// The real milliseconds a bike job's users must sleep between moves, at least, for its
    /// stations to be sharded (with ``shards`` above 1). Users that move back to back are
    /// bound by what each move costs, and one coordinator answers its own node's users in
    /// process: such a job took 3.7 times as long sharded (BENCHMARKS.md). 0: every
    /// replicated job is sharded.
    public static let pace = Setting.workloadInteger("bikes.shard_pace_ms", default: 50, in: 0...3_600_000,
        doc: "real milliseconds a job's users sleep between moves, at least, for its stations to be sharded; 0: every replicated job")

    /// The two, in `cluster.yaml` order.
    public static let settings = [shards, pace]
}

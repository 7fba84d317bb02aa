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

    /// Makes the bike workload's settings (these limits) known
    /// to settings files, variables and flags (once, before any settings are loaded;
    /// again changes nothing), and the ones it removed refused by name.
    public static func declare() {
        ClusterSettings.declare(settings)
        ClusterSettings.declareRemoved(removed)
    }

    /// Settings of sharded stations, removed in release 0.3 (measured slower:
    /// BENCHMARKS.md, "Sharded stations"; Docs/replicated-jobs.md).
    public static let removed = [
        "bikes.shards": "sharded stations were removed in release 0.3 (they made jobs slower; see BENCHMARKS.md)",
        "bikes.shard_pace_ms": "sharded stations were removed in release 0.3 (they made jobs slower; see BENCHMARKS.md)",
    ]
}

import SpokesCluster

/// The task kinds of the bike workload: what every `spokes node` runs besides the
/// built-in benchmark kinds, and what in-process test clusters register.
public enum BikeKinds {
    /// `bikes.user` (one user of a bike job) and `bikes.sweep-run` (one run of a sweep).
    public static var all: [any TaskKind] { [BikeUserTask(), SweepRunTask()] }
}

import FoundationEssentials
import SpokesBikes
import SpokesCluster
import SpokesConcurrency
import Synchronization

/// `spokes bench --only capacity`: the real-time capacity table of BENCHMARKS.md (issue 33
/// §2). For each size, Milano with that many users x 5 paths, move time 0.2 s, time
/// scale 1: `spokes simulate`'s pace in this process, then `spokes submit`'s on a fresh
/// 3-node cluster, with the coordinator's CPU per move. The pace is the longest user's
/// travel (its moves but the last, times the move time) over the run's wall time; a size
/// is carried at pace 0.95 or more.
extension Bench {
    /// The sizes measured unless `--users` names others.
    static let capacitySizes = [500, 1_000, 2_000, 4_000, 8_000, 16_000]

    /// A job's report, and the CPU seconds its coordinator's process used while it ran
    /// (nil when /proc could not be read).
    struct SubmittedJob {
        var report: SimulationReport
        var coordinatorCPU: Double?
    }

    /// Submits `job` to the cluster's first node and measures its coordinator's CPU (the
    /// node that accepted it) from before the submission to the report.
    func submit(_ job: BikeJob, to cluster: LocalCluster, settings: ClusterSettings) async throws -> SubmittedJob {
        let before = cluster.nodes.map { Self.cpuSeconds(pid: $0.pid) }
        let coordinator = Mutex<String?>(nil)
        let report = try await JobClient.submit(job, to: cluster.nodes[0].address, settings: settings, onAccepted: { name in
            coordinator.withLock { $0 = name }
        }) { _ in }
        let after = cluster.nodes.map { Self.cpuSeconds(pid: $0.pid) }
        let index = coordinator.withLock { name in cluster.nodes.firstIndex { $0.name == name } }
        guard let index, let start = before[index], let end = after[index] else { return SubmittedJob(report: report, coordinatorCPU: nil) }
        return SubmittedJob(report: report, coordinatorCPU: end - start)
    }

    /// The pace of a real-time run: the longest user's travel (its moves but the last)
    /// over the wall time.
    static func pace(of report: SimulationReport, moveTime: Double = capacityMoveTime) -> Double {
        (report.nominalDuration - moveTime) / report.wallTime
    }

    /// The capacity table's move time, in seconds.
    static let capacityMoveTime = 0.2

    func capacity(_ report: Report) async throws {
        let network = try BundledNetworks.milano
        for users in capacityUsers {
            let options = SimulationOptions(users: users, paths: 5, seed: 1, timing: MoveTiming(moveTime: Self.capacityMoveTime, timeScale: 1))
            let simulated = await (try Simulation(network: network, options: options)).run()
            let figure = "capacity_\(users)"
            let what = "real-time capacity, \(users) users x 5 paths"
            do {
                // Every node may hold every user, so the waiting slots do not limit the pace
                // (the calls one connection may have running grow with them).
                let limit = ClusterSettings.environmentVariable(for: "limits.max_calls_per_connection")
                let run = try await withCluster(
                    nodes: 3, slots: 2, arguments: ["--waiting-slots", "\(users)"], environment: [limit: "\(max(4_096, users * 2 + 1_000))"]
                ) { cluster, settings in
                    try await submit(BikeJob(network: network, options: options), to: cluster, settings: settings)
                }
                let job = run.report
                guard job.completedUsers == users, job.conservation.holds else { throw BenchError.tasksFailed(users - job.completedUsers) }
                let cpu = run.coordinatorCPU.map { $0 / Double(job.totalMoves) * 1e6 }
                var values = [
                    "users": Double(users), "simulate_pace": Self.pace(of: simulated), "submit_pace": Self.pace(of: job),
                    "moves": Double(job.totalMoves), "retries": Double(job.retries ?? 0), "epoch": Double(job.epoch ?? 0),
                ]
                values["coordinator_microseconds_per_move"] = cpu
                func format(_ value: Double, _ digits: Int = 3) -> String { String(printf: "%.\(digits)f", value) }
                let text = "\(what): simulate pace \(format(Self.pace(of: simulated))); submit on 3 nodes pace \(format(Self.pace(of: job)))"
                    + " (\(format(job.wallTime, 2)) s wall), coordinator \(cpu.map { format($0, 1) } ?? "?") us per move,"
                    + " \(job.retries ?? 0) retries, epoch \(job.epoch ?? 0)"
                report(.init(figure: figure, values: values, text: text))
            } catch {
                report(.failed(figure, what: "\(what) (simulate pace \(String(printf: "%.3f", Self.pace(of: simulated))))", error: "\(error)"))
            }
        }
    }
}

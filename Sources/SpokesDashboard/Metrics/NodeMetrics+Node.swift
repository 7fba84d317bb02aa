import FoundationEssentials
import Glibc
import SpokesCluster
import SpokesConcurrency

extension NodeMetrics {
    /// This node's figures now, read from `node` and the process: the shell around the
    /// pure ``NodeMetrics``. Asks no other member; the Raft host's list is awaited for at
    /// most `raftTimeout` seconds (the metric is left out when it takes longer). The
    /// commit latency is left out until the node's Raft host counts into it (a node with
    /// no provider of replica groups runs none).
    public static func gather(from node: ClusterNode, build: Build, raftTimeout: Double = 1) async -> NodeMetrics {
        let replicas = try? await withTimeout(seconds: raftTimeout, clock: node.system.runtime.clock) { await node.replicaGroups() }
        var members: [String: Int] = [Member.State.alive.rawValue: 1]
        for member in node.members { members[member.state.rawValue, default: 0] += 1 }
        let rejections = node.system.rejections.snapshot
        let counters = node.counters
        let settings = node.settings
        return NodeMetrics(
            cluster: settings.cluster, node: node.system.node.name, build: build,
            uptime: node.observation(tasksAfter: .max).uptime, members: members,
            slots: TaskBudgets(cpu: settings.slots, waiting: settings.waitingSlots), slotsInUse: counters.inUse,
            taskAttempts: counters.byKind.merging(node.registry.schemas.map { ($0.name, TaskAttemptCounts()) }) { counted, _ in counted },
            tasksRetried: node.jobBoard.retriedCount,
            jobsRunning: node.jobBoard.runningCount,
            jobsEnded: Dictionary(uniqueKeysWithValues: node.jobBoard.endedCounts.map { ($0.key.rawValue, $0.value) }),
            rejections: rejections, traffic: node.system.traffic.counts,
            raftReplicas: replicas.map { views in views.reduce(into: [String: Int]()) { $0[$1.role, default: 0] += 1 } },
            raftCommitLatency: node.hasReplicaGroups ? node.raftCommitLatency.snapshot : nil,
            residentMemoryBytes: ProcessFigures.residentMemoryBytes(), cpuSeconds: ProcessFigures.cpuSeconds())
    }
}

/// What the kernel says of this process: its resident memory and the CPU time it used.
/// Linux only (`/proc/self/statm`, `getrusage`); nil where it cannot be read.
public enum ProcessFigures {
    /// Resident memory in bytes, from `/proc/self/statm`.
    public static func residentMemoryBytes() -> Double? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        return residentBytes(statm: statm, pageSize: Int(sysconf(Int32(_SC_PAGESIZE))))
    }

    /// The second field of a `/proc/PID/statm` line (resident pages) times `pageSize`.
    public static func residentBytes(statm: String, pageSize: Int) -> Double? {
        let fields = statm.split(whereSeparator: \.isWhitespace)
        guard fields.count >= 2, let pages = Int(fields[1]), pages >= 0, pageSize > 0 else { return nil }
        return Double(pages) * Double(pageSize)
    }

    /// User and system CPU time of the whole process, in seconds.
    public static func cpuSeconds() -> Double? {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return nil }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
